// The apps over 2, 3 and 4 partitions, as the engines of a distributed job run them (one engine per
// part, relaying to each other, aggregators merged at each barrier), against the same app over
// the whole graph: the output bytes must be identical, whether the engines relay by position
// (connected through an in-process Exchange) or by UUID. PageRank is a broadcast program, SSSP,
// BFS and WCC push under a min combiner, CDLP gathers (a broadcast without a combiner); colouring
// reads its neighbours' degrees and LCC their neighbour lists, exchanged when the engines connect.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "lockstep/apps/bfs/bfs.h"
#include "lockstep/apps/cdlp/cdlp.h"
#include "lockstep/apps/coloring/coloring.h"
#include "lockstep/apps/lcc/lcc.h"
#include "lockstep/apps/pagerank/pagerank.h"
#include "lockstep/apps/sssp/sssp.h"
#include "lockstep/apps/wcc/wcc.h"
#include "lockstep/load/source.h"
#include "lockstep/runner/program_runner.h"
#include "util/cluster_output.h"
#include "util/engine_cluster.h"
#include "util/temp_dir.h"
#include "util/thread_exchange.h"

namespace lockstep::apps {
namespace {

// A directed random graph with hubs, dangling vertices, self-loops, parallel edges and small
// integer weights (equal-cost paths, so SSSP's tie-break matters).
std::string WriteGraph(const std::filesystem::path& dir) {
  std::mt19937 rng(17);
  std::uniform_int_distribution<uint32_t> any(0, 1999), hub(0, 9), coin(0, 9), weight(1, 3);
  const std::filesystem::path path = dir / "g.el";
  std::ofstream out(path);
  for (uint32_t e = 0; e < 7000; ++e) {
    const uint32_t a = coin(rng) < 2 ? hub(rng) : any(rng) % 1800;  // 200 never send
    const uint32_t b = coin(rng) == 0 ? a : any(rng);
    out << a * 7 + 3 << ' ' << b * 7 + 3 << ' ' << weight(rng) << '\n';
    if (coin(rng) == 0) out << a * 7 + 3 << ' ' << b * 7 + 3 << ' ' << weight(rng) << '\n';
  }
  return path.string();
}

// Every vertex's name by global index, from the whole input the test holds.
using AllNames = test::InputNames;

struct PartsRun {
  std::map<std::string, std::string> output;  // external ID -> formatted value
  uint64_t supersteps = 0;
  uint64_t relayed_messages = 0;
  uint64_t relayed_bytes = 0;
  uint64_t batches = 0;
  uint64_t largest_batch = 0;  // content bytes
};

template <class App>
PartsRun RunParts(const std::string& path, const bsp::Params& params, uint32_t parts, bool connect,
                  uint64_t max_batch_bytes = 0) {
  auto input = load::LoadGraph({path, "edgelist", false}, App::kWeights);
  EXPECT_TRUE(input.ok()) << input.status();
  auto program = App::Make(params, bsp::FactsOf<App>(params, *input));
  EXPECT_TRUE(program.ok()) << program.status();
  test::EngineCluster<typename App::Program> cluster(*program, *input, parts, true);
  if (connect) {
    const absl::Status st = cluster.Connect();
    EXPECT_TRUE(st.ok()) << st;
  }
  for (uint32_t p = 0; p < parts; ++p) cluster.engine(p).SetMaxBatchBytes(max_batch_bytes);
  const absl::Status st = cluster.RunToCompletion();
  EXPECT_TRUE(st.ok()) << st;
  PartsRun run;
  for (uint32_t p = 0; p < parts; ++p) {
    const auto& engine = cluster.engine(p);
    for (uint32_t v = 0; v < engine.topology().num_local(); ++v) {
      std::string& text = run.output[std::string(engine.topology().external_id(v))];
      if constexpr (requires(std::string & out) {
                      App::Format(engine.program(), engine.values()[v], AllNames(*input), out);
                    }) {
        App::Format(engine.program(), engine.values()[v], AllNames(*input), text);
      } else {
        App::Format(engine.program(), engine.values()[v], text);
      }
    }
  }
  run.supersteps = cluster.superstep();
  run.relayed_messages = cluster.relayed_messages();
  run.relayed_bytes = cluster.relayed_bytes();
  for (uint32_t p = 0; p < parts; ++p) {
    for (const bsp::RelayBatch& b : cluster.relayer(p).sent()) {
      ++run.batches;
      run.largest_batch = std::max<uint64_t>(run.largest_batch, b.content_bytes());
    }
  }
  return run;
}

class PartitionedAppsTest : public ::testing::TestWithParam<std::tuple<uint32_t, bool>> {
 public:
  // The output over the parts equals the whole graph's, and so do the supersteps unless
  // `partition_step` (which depends on the split: docs/design.md §3.9); the bytes per relayed
  // message are those of the message alone plus `overhead` at most.
  template <class App>
  void Check(const bsp::Params& params, size_t message_bytes, double overhead,
             bool partition_step = false) {
    const auto [parts, connect] = GetParam();
    const PartsRun whole = RunParts<App>(path_, params, 1, false);
    const PartsRun split = RunParts<App>(path_, params, parts, connect);
    // A program taking messages in any order (SSSP) may hold values back by each part's own
    // frontier (docs/design.md §3.4): its values, not its supersteps, match.
    if constexpr (!bsp::IsAnyOrder<typename App::Program>()) {
      if (!partition_step) {
        EXPECT_EQ(split.supersteps, whole.supersteps);
      }
    }
    if (partition_step) {
      EXPECT_EQ(whole.supersteps, 1u) << "local mode ends after superstep 0";
    }
    EXPECT_EQ(split.output.size(), whole.output.size());
    EXPECT_TRUE(split.output == whole.output) << "the partitioned run's values differ";
    EXPECT_EQ(whole.relayed_messages, 0u);
    ASSERT_GT(split.relayed_messages, 0u);
    const double per_message =
        static_cast<double>(split.relayed_bytes) / static_cast<double>(split.relayed_messages);
    if (connect) {
      EXPECT_LE(per_message, static_cast<double>(message_bytes) + overhead);
    } else {
      EXPECT_EQ(per_message, static_cast<double>(message_bytes) + 16.0);
    }
    // A superstep's traffic to one partition cut into pieces of at most 64 bytes (one message
    // always fits) gives the same answer, in many more batches.
    const PartsRun pieces = RunParts<App>(path_, params, parts, connect, 64);
    EXPECT_TRUE(pieces.output == whole.output) << "the run in bounded pieces differs";
    EXPECT_EQ(pieces.relayed_messages, split.relayed_messages);
    EXPECT_GT(pieces.batches, 2 * split.batches);
    EXPECT_LE(pieces.largest_batch, 64u + 16u + message_bytes);
  }

  const std::string& path() const { return path_; }

 protected:
  test::TempDir dir_{"lockstep-partitioned"};
  std::string path_ = WriteGraph(dir_.path());
};

TEST_P(PartitionedAppsTest, PageRank) {
  // Every vertex with out-edges publishes every superstep: the batches are the values alone.
  Check<pagerank::App>({{"damping", "0.85"}, {"tolerance", "0"}, {"max-iterations", "15"}},
                       sizeof(double), 0.0);
}

TEST_P(PartitionedAppsTest, Sssp) {
  Check<sssp::App>({{"source", "3"}, {"start", "source"}}, sizeof(sssp::Program::Message), 2.0);
}

// With the default start (delta-stepping before superstep 0 where a part stands alone): parts that
// edges join run the vertex program, with the same answer.
TEST_P(PartitionedAppsTest, SsspDeltaStepping) {
  Check<sssp::App>({{"source", "3"}}, sizeof(sssp::Program::Message), 2.0, true);
}

TEST_P(PartitionedAppsTest, Bfs) {
  Check<bfs::App>({{"source", "3"}, {"start", "source"}}, sizeof(int64_t), 2.0);
}

// With the default start (a search before superstep 0 where a part stands alone): parts that edges
// join run the vertex program, with the same answer.
TEST_P(PartitionedAppsTest, BfsSearch) {
  Check<bfs::App>({{"source", "3"}}, sizeof(int64_t), 2.0, true);
}

TEST_P(PartitionedAppsTest, Wcc) {
  Check<wcc::App>({{"start", "own-label"}}, sizeof(uint32_t), 2.0);
}

// The partition step's union-find: only the vertices with an edge to another part publish.
TEST_P(PartitionedAppsTest, WccUnionFind) { Check<wcc::App>({}, sizeof(uint32_t), 2.0, true); }

TEST_P(PartitionedAppsTest, CdlpWithoutCombiner) {
  Check<cdlp::App>({{"max-iterations", "6"}}, sizeof(uint32_t), 2.0);
}

// Programs that read their neighbours' degrees or lists need them from the other parts, which
// only connected engines exchange: unconnected, the job fails at superstep 0 saying so.
template <class App>
void CheckNeighbourhoodProgram(PartitionedAppsTest& test, const std::string& path,
                               const bsp::Params& params, size_t message_bytes, bool connect) {
  if (connect) {
    test.Check<App>(params, message_bytes, 2.0);
    return;
  }
  auto input = load::LoadGraph({path, "edgelist", false}, App::kWeights);
  ASSERT_TRUE(input.ok()) << input.status();
  auto program = App::Make(params, bsp::FactsOf<App>(params, *input));
  ASSERT_TRUE(program.ok()) << program.status();
  test::EngineCluster<typename App::Program> cluster(*program, *input, 2, true);
  const absl::Status st = cluster.RunToCompletion();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_NE(st.message().find("exchange"), std::string::npos) << st;
}

TEST_P(PartitionedAppsTest, ColoringWithNeighbourDegrees) {
  CheckNeighbourhoodProgram<coloring::App>(*this, path(), {{"seed", "5"}},
                                           sizeof(coloring::Announcement), std::get<1>(GetParam()));
}

TEST_P(PartitionedAppsTest, LccWithNeighbourLists) {
  CheckNeighbourhoodProgram<lcc::App>(*this, path(), {{"phases", "1"}}, sizeof(uint64_t),
                                      std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(PartsConnect, PartitionedAppsTest,
                         ::testing::Combine(::testing::Values(2u, 3u, 4u), ::testing::Bool()));

// A worker's StartJob connects its engine through the job's exchange; without one (local mode)
// the engine relays by UUID.
TEST(StartJobTest, ConnectsThePeersThroughTheJobsExchange) {
  test::TempDir dir("lockstep-startjob");
  const std::string path = WriteGraph(dir.path());
  auto group = std::make_shared<test::ThreadExchangeGroup>(2);
  runner::ProgramRunner<wcc::App> runners[2];
  absl::Status status[2];
  std::vector<std::thread> workers;
  for (uint32_t w = 0; w < 2; ++w) {
    workers.emplace_back([&, w] {
      test::ThreadExchange exchange(group, w);
      runner::JobDetails job;
      job.work.graph = {path, "edgelist", false};
      job.place.worker_index = w;
      job.place.worker_count = 2;
      job.place.exchange = &exchange;
      status[w] = runners[w].StartJob(job, bsp::LocalExecutorFactory()).status();
    });
  }
  for (auto& t : workers) t.join();
  for (uint32_t w = 0; w < 2; ++w) {
    ASSERT_TRUE(status[w].ok()) << status[w];
    EXPECT_TRUE(runners[w].engine()->connected());
  }
  runner::ProgramRunner<wcc::App> local;
  runner::JobDetails job;
  job.work.graph = {path, "edgelist", false};
  ASSERT_TRUE(local.StartJob(job, bsp::LocalExecutorFactory()).ok());
  EXPECT_FALSE(local.engine()->connected());
}

// The status of StartJob for `App` on every worker of a job of `workers` (0: local mode).
template <class App>
std::vector<absl::Status> StartOn(const std::string& path, const bsp::Params& params,
                                  uint32_t workers) {
  runner::JobDetails job;
  job.work.graph = {path, "edgelist", false};
  job.work.params = params;
  if (workers == 0) {
    runner::ProgramRunner<App> local;
    return {local.StartJob(job, bsp::LocalExecutorFactory()).status()};
  }
  auto group = std::make_shared<test::ThreadExchangeGroup>(workers);
  std::vector<runner::ProgramRunner<App>> runners(workers);
  std::vector<absl::Status> status(workers);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w, job]() mutable {
      test::ThreadExchange exchange(group, w);
      job.place.worker_index = w;
      job.place.worker_count = workers;
      job.place.exchange = &exchange;
      status[w] = runners[w].StartJob(job, bsp::LocalExecutorFactory()).status();
    });
  }
  for (auto& t : threads) t.join();
  return status;
}

// An empty graph is a graph that lacks every vertex: a source (or a pre-coloured vertex) it does
// not have fails the job in local mode and on every worker, as in a graph of other vertices. Only
// a process that knows no graph (the master) checks nothing about vertices.
TEST(StartJobTest, AnEmptyGraphLacksTheVerticesTheParametersName) {
  test::TempDir dir("lockstep-empty-graph");
  const std::string empty = dir.Write("e.el", "\n\n");
  const std::string pre = dir.Write("pre.txt", "3 1\n");
  for (uint32_t workers : {0u, 1u, 2u}) {
    for (const absl::Status& st : StartOn<bfs::App>(empty, {{"source", "9"}}, workers)) {
      EXPECT_EQ(st.message(), "source: vertex '9' is not in the graph") << workers << " " << st;
    }
    for (const absl::Status& st : StartOn<sssp::App>(empty, {{"source", "9"}}, workers)) {
      EXPECT_EQ(st.message(), "source: vertex '9' is not in the graph") << workers << " " << st;
    }
    for (const absl::Status& st :
         StartOn<coloring::App>(empty, {{"seed", "1"}, {"precolored", pre}}, workers)) {
      EXPECT_EQ(st.message(), pre + ":1: vertex '3' is not in the graph") << workers << " " << st;
    }
  }
  runner::JobDetails master;
  master.place.coordinator = true;
  master.work.params = {{"source", "9"}};
  runner::ProgramRunner<bfs::App> coordinator;
  EXPECT_TRUE(coordinator.StartJob(master, bsp::LocalExecutorFactory()).ok());
}

}  // namespace
}  // namespace lockstep::apps
