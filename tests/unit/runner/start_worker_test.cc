// What a process does before its first superstep (runner::StartWorker), on in-process workers
// over real files: the collective load, the partitioned form written first, peers, a restore that
// every worker refuses alike, and the coordinator that loads nothing.
#include "lockstep/runner/start_worker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/bsp/app.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/load/input_form.h"
#include "lockstep/runner/job.h"
#include "util/temp_dir.h"
#include "util/thread_exchange.h"

namespace lockstep::runner {
namespace {

// The smallest program that needs peers: each vertex takes the least global index around it.
struct LeastProgram {
  using VertexValue = uint32_t;
  using EdgeValue = bsp::NoValue;
  using Message = uint32_t;

  void Compute(bsp::Context<LeastProgram>& ctx, std::span<const uint32_t>) const {
    uint32_t least = ctx.global_index();
    for (uint32_t slot : ctx.out_slots()) least = std::min(least, ctx.SlotGlobalIndex(slot));
    ctx.value() = least;
    ctx.VoteToHalt();
  }
};

struct LeastApp {
  using Program = LeastProgram;
  static constexpr bsp::WeightUse kWeights = bsp::WeightUse::kIgnore;
  static absl::StatusOr<Program> Make(const bsp::Params&, const bsp::GraphFacts&) {
    return Program{};
  }
};

using Started = absl::StatusOr<StartedWorker<LeastProgram>>;

// StartWorker on `n` in-process workers of one job described by `job` (place filled in here).
std::vector<Started> StartOn(uint32_t n, const JobDetails& job) {
  auto group = std::make_shared<test::ThreadExchangeGroup>(n);
  std::vector<Started> started;
  for (uint32_t w = 0; w < n; ++w) started.emplace_back(absl::UnknownError("not started"));
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < n; ++w) {
    threads.emplace_back([&, w] {
      test::ThreadExchange exchange(group, w);
      JobDetails mine = job;
      mine.place.worker_index = w;
      mine.place.worker_count = n;
      mine.place.exchange = &exchange;
      started[w] = StartWorker<LeastApp>(mine);
      group->Leave();
    });
  }
  for (auto& t : threads) t.join();
  return started;
}

constexpr char kEdges[] = "1 2\n2 3\n3 4\n4 5\n5 1\n6 7\n";

TEST(StartWorkerTest, EachWorkerHoldsItsShareConnectedToItsPeers) {
  test::TempDir dir("lockstep-start-worker");
  JobDetails job;
  job.work.graph = {dir.Write("g.el", kEdges), "edgelist", false};
  const auto started = StartOn(2, job);
  uint64_t held = 0;
  for (const Started& s : started) {
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_TRUE(s->engine->connected());
    EXPECT_EQ(s->engine->topology().num_global(), 7u);
    EXPECT_EQ(s->first_superstep, 0u);
    held += s->engine->topology().num_local();
  }
  EXPECT_EQ(held, 7u) << "every vertex on exactly one worker";
}

TEST(StartWorkerTest, TheAskedPartitionedFormIsWrittenFirstAndRunOn) {
  test::TempDir dir("lockstep-start-worker");
  JobDetails job;
  job.work.graph = {dir.Write("g.el", kEdges), "edgelist", false};
  job.save_form = dir.File("form");
  const auto started = StartOn(2, job);
  for (const Started& s : started) ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(load::IsPartitionedForm(job.save_form));
  EXPECT_EQ(started[0]->engine->topology().num_local() + started[1]->engine->topology().num_local(),
            7u);
}

// One worker's failure is every worker's, and marked as the checkpoint's: the job may go on from
// an older one.
TEST(StartWorkerTest, EveryWorkerRefusesACheckpointItCannotRead) {
  test::TempDir dir("lockstep-start-worker");
  JobDetails job;
  job.work.app = "least";
  job.work.job_id = "job";
  job.work.graph = {dir.Write("g.el", kEdges), "edgelist", false};
  job.resume.restore_from = dir.File("superstep-0000000003");
  job.resume.superstep = 3;
  for (const Started& s : StartOn(2, job)) {
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(bsp::IsCheckpointRefused(s.status())) << s.status();
  }
}

// The distributed master runs the program over no graph: it reads nothing, not even a graph path
// that does not exist where it runs.
TEST(StartWorkerTest, TheCoordinatorLoadsNothing) {
  JobDetails job;
  job.work.graph = {"/nonexistent/g.el", "edgelist", false};
  job.place.coordinator = true;
  job.place.worker_count = 3;
  auto started = StartWorker<LeastApp>(job);
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_EQ(started->engine->topology().num_local(), 0u);
}

// Local mode (no exchange) loads the whole input.
TEST(StartWorkerTest, LocalModeHoldsTheWholeInput) {
  test::TempDir dir("lockstep-start-worker");
  JobDetails job;
  job.work.graph = {dir.Write("g.el", kEdges), "edgelist", false};
  auto started = StartWorker<LeastApp>(job);
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_EQ(started->engine->topology().num_local(), 7u);
  EXPECT_FALSE(started->engine->connected());
}

}  // namespace
}  // namespace lockstep::runner
