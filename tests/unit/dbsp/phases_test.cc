// Each role's barrier actions alone, with fake messages and no sockets (docs/design.md §5.3): the
// master's (MasterPhases) over workers whose entries the test writes and whose releases it reads,
// a worker's (WorkerPhases) against a master the test scripts. The whole job, both roles at once,
// is jobs_test's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "job/master_job.h"
#include "job/master_phases.h"
#include "job/worker_job.h"
#include "job/worker_phases.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/partition/range.h"
#include "protocol/protocol.h"
#include "transport/wire.h"

namespace lockstep::dbsp::job {
namespace {

using protocol::Barrier;
using protocol::Position;
using protocol::Step;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// The master's end of a worker's stream: keeps what the master sends.
class RecordingStream final : public transport::WorkerStream {
 public:
  explicit RecordingStream(uint32_t w) : name_(absl::StrCat("worker ", w, " (fake)")) {}
  const std::string& peer() const override { return name_; }
  void Enqueue(v1::MasterPayload payload, bool) override {
    std::lock_guard<std::mutex> lock(mu_);
    sent_.push_back(std::move(payload));
  }
  void Flush() override {}

  // The releases sent so far, in order.
  std::vector<Step> releases() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Step> out;
    for (const v1::MasterPayload& p : sent_) {
      if (p.has_step()) out.push_back(*transport::FromWire(p.step()));
    }
    return out;
  }
  bool aborted() const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const v1::MasterPayload& p : sent_) {
      if (p.has_abort()) return true;
    }
    return false;
  }

 private:
  const std::string name_;
  mutable std::mutex mu_;
  std::vector<v1::MasterPayload> sent_;
};

// A program for the master's empty graph: the default rule decides when to stop.
struct HaltingProgram {
  using VertexValue = uint64_t;
  using EdgeValue = bsp::NoValue;
  using Message = uint64_t;
  void Compute(bsp::Context<HaltingProgram>& ctx, std::span<const uint64_t>) const {
    ctx.VoteToHalt();
  }
};

class MasterPhasesTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kWorkers = 2;

  MasterPhasesTest() : master_(Pointers(), {Name(0), Name(1)}, 0ms) {
    EXPECT_TRUE(master_.Assign(std::vector<v1::JobDetails>(kWorkers)).ok());
  }

  static std::string Name(uint32_t w) { return absl::StrCat("worker ", w, " (fake)"); }
  std::vector<transport::WorkerStream*> Pointers() { return {&streams_[0], &streams_[1]}; }

  // Every worker enters the open barrier with what `fill` puts in its entry.
  void EnterAll(const std::function<void(uint32_t w, Step& entry)>& fill = nullptr) {
    const Position at = master_.position();
    for (uint32_t w = 0; w < kWorkers; ++w) {
      Step entry;
      entry.barrier = at.barrier;
      entry.superstep = at.superstep;
      if (fill) fill(w, entry);
      v1::WorkerPayload payload;
      *payload.mutable_step() = transport::ToWire(entry);
      master_.OnPayload(w, payload);
    }
  }
  // Through superstep 0 to EXECUTED_GRAPH, by the barrier primitives alone.
  void StopAfterSuperstepZero() {
    for (Barrier b : {Barrier::kPre, Barrier::kPost, Barrier::kPostKeepRunning}) {
      EnterAll();
      ASSERT_TRUE(master_.WaitAll({b, 0}).ok());
      Step release;
      release.stop = b == Barrier::kPostKeepRunning;
      ASSERT_TRUE(master_.ReleaseAll(release).ok());
    }
    ASSERT_EQ(master_.position().barrier, Barrier::kExecutedGraph);
  }
  // A commit that checks nothing and keeps what it is asked to publish.
  MasterPhases::Commit Keeping() {
    MasterPhases::Commit commit;
    commit.publish = [this](const MasterPhases::Ended& ended) {
      published_.push_back(ended);
      return absl::OkStatus();
    };
    return commit;
  }
  static void Parts(uint32_t w, Step& entry) {
    entry.part = {3 + w, 10 * (3 + w), 7 + w};  // worker 0: 3 lines, worker 1: 4
  }

  RecordingStream streams_[kWorkers] = {RecordingStream(0), RecordingStream(1)};
  MasterJob master_;
  std::vector<MasterPhases::Ended> published_;
};

TEST_F(MasterPhasesTest, TheEndPhasesCountCheckAndPublishOnceInTheTablesOrder) {
  ASSERT_NO_FATAL_FAILURE(StopAfterSuperstepZero());
  MasterPhases phases(master_, nullptr);
  std::vector<uint32_t> checked;
  MasterPhases::Commit commit = Keeping();
  commit.verify_part = [&](uint32_t w, const runner::OutputSummary& part) {
    checked.push_back(w);
    EXPECT_EQ(part.crc32c, 7 + w);
    return absl::OkStatus();
  };
  EnterAll([](uint32_t w, Step& e) { e.vertices = 3 + w; });
  ASSERT_TRUE(phases.Executed().ok());
  EnterAll(Parts);
  ASSERT_TRUE(phases.Persisted(commit).ok());
  EXPECT_TRUE(published_.empty()) << "nothing is published before COMPLETED_JOB";
  EnterAll();
  ASSERT_TRUE(phases.Completed(commit).ok());

  EXPECT_EQ(checked, (std::vector<uint32_t>{0, 1}));
  ASSERT_EQ(published_.size(), 1u);
  EXPECT_EQ(published_[0].vertices, 7u);
  ASSERT_EQ(published_[0].parts.size(), 2u);
  EXPECT_EQ(published_[0].parts[1].vertices, 4u);
  EXPECT_EQ(published_[0].parts[1].bytes, 40u);
  EXPECT_EQ(master_.position().barrier, Barrier::kDone);
  for (const RecordingStream& s : streams_) {
    std::vector<Barrier> released;
    for (const Step& r : s.releases()) released.push_back(r.barrier);
    EXPECT_THAT(released,
                ::testing::ElementsAre(Barrier::kPre, Barrier::kPost, Barrier::kPostKeepRunning,
                                       Barrier::kExecutedGraph, Barrier::kPersistedResults,
                                       Barrier::kCompletedJob));
    EXPECT_FALSE(s.aborted());
  }
}

TEST_F(MasterPhasesTest, PartsThatDoNotHoldTheVerticesCountedAreNeitherReleasedNorPublished) {
  ASSERT_NO_FATAL_FAILURE(StopAfterSuperstepZero());
  MasterPhases phases(master_, nullptr);
  EnterAll([](uint32_t, Step& e) { e.vertices = 4; });  // 8 vertices; the parts hold 7
  ASSERT_TRUE(phases.Executed().ok());
  EnterAll(Parts);
  const absl::Status st = phases.Persisted(Keeping());
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("the parts hold 7 vertices; the workers have 8"));
  EXPECT_EQ(master_.position().barrier, Barrier::kPersistedResults);
  EXPECT_EQ(streams_[0].releases().back().barrier, Barrier::kExecutedGraph);
  EXPECT_TRUE(published_.empty());
}

TEST_F(MasterPhasesTest, APartThatFailsItsCheckIsRefusedNamingItsWorker) {
  ASSERT_NO_FATAL_FAILURE(StopAfterSuperstepZero());
  MasterPhases phases(master_, nullptr);
  MasterPhases::Commit commit = Keeping();
  commit.verify_part = [](uint32_t w, const runner::OutputSummary&) {
    return w == 1 ? absl::DataLossError("part-00001 is missing") : absl::OkStatus();
  };
  EnterAll([](uint32_t w, Step& e) { e.vertices = 3 + w; });
  ASSERT_TRUE(phases.Executed().ok());
  EnterAll(Parts);
  const absl::Status st = phases.Persisted(commit);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(st.message(), "worker 1 (fake): part-00001 is missing");
  EXPECT_EQ(master_.position().barrier, Barrier::kPersistedResults);
}

TEST_F(MasterPhasesTest, APublicationThatFailsReleasesNoWorkerFromCompletedJob) {
  ASSERT_NO_FATAL_FAILURE(StopAfterSuperstepZero());
  MasterPhases phases(master_, nullptr);
  MasterPhases::Commit commit;
  commit.publish = [](const MasterPhases::Ended&) {
    return absl::AlreadyExistsError("the lease was lost");
  };
  EnterAll([](uint32_t w, Step& e) { e.vertices = 3 + w; });
  ASSERT_TRUE(phases.Executed().ok());
  EnterAll(Parts);
  ASSERT_TRUE(phases.Persisted(commit).ok());
  EnterAll();
  EXPECT_EQ(phases.Completed(commit).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(master_.position().barrier, Barrier::kCompletedJob);
  for (const RecordingStream& s : streams_) {
    EXPECT_EQ(s.releases().back().barrier, Barrier::kPersistedResults);
  }
}

TEST_F(MasterPhasesTest, KeepRunningReleasesTheProgramsDecisionAndACheckpointWhenOneIsDue) {
  auto split = partition::Range::Whole(1);
  auto graph = bsp::Graph<bsp::NoValue>::Build(bsp::GraphInput{}, *split, 0, false);
  ASSERT_TRUE(graph.ok()) << graph.status();
  bsp::Engine<HaltingProgram> engine(HaltingProgram{}, std::move(*graph));
  CheckpointPlan plan;
  plan.every = 2;  // before superstep 2
  std::vector<MasterProgress> progress;
  MasterPhases phases(
      master_, [&](const MasterProgress& p) { progress.push_back(p); }, plan);
  ASSERT_TRUE(phases.ExecutorFactory({})(engine, engine.ProgramCallbacks()).ok());
  // The workers: unhalted vertices in supersteps 0 and 1, none in 2; their checkpoint files when
  // asked, as soon as the master waits for them.
  std::thread checkpointing([&] {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (master_.position() != Position{Barrier::kCheckpoint, 2} &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    EnterAll([](uint32_t w, Step& e) { e.part = {1, 100 + w, w}; });
  });
  std::vector<bool> decisions;
  for (uint64_t s = 0; s < 3; ++s) {
    const uint64_t unhalted = s < 2 ? 1 : 0;
    EnterAll();
    ASSERT_TRUE(phases.Pre(s).ok());
    EnterAll([&](uint32_t, Step& e) { e.unhalted = unhalted; });
    ASSERT_TRUE(phases.Post({.superstep = s}).ok());
    EnterAll([&](uint32_t, Step& e) { e.unhalted = unhalted; });
    auto keep = phases.KeepRunning({.superstep = s});
    ASSERT_TRUE(keep.ok()) << keep.status();
    decisions.push_back(*keep);
  }
  checkpointing.join();
  EXPECT_EQ(decisions, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(master_.position().barrier, Barrier::kExecutedGraph);
  std::vector<std::tuple<Barrier, uint64_t, bool, bool>> kept;
  for (const Step& r : streams_[1].releases()) {
    if (r.barrier == Barrier::kPostKeepRunning || r.barrier == Barrier::kCheckpoint) {
      kept.emplace_back(r.barrier, r.superstep, r.stop, r.checkpoint);
    }
  }
  EXPECT_THAT(kept, ::testing::ElementsAre(
                        std::make_tuple(Barrier::kPostKeepRunning, uint64_t{0}, false, false),
                        std::make_tuple(Barrier::kPostKeepRunning, uint64_t{1}, false, true),
                        std::make_tuple(Barrier::kCheckpoint, uint64_t{2}, false, false),
                        std::make_tuple(Barrier::kPostKeepRunning, uint64_t{2}, true, false)));
  ASSERT_EQ(progress.size(), 3u);
  EXPECT_EQ(progress[1].global.unhalted, 2u);
  EXPECT_EQ(progress[1].worker_names, (std::vector<std::string>{Name(0), Name(1)}));
}

// A worker's master, scripted: records each entry and releases it at once (stopping after
// superstep 0), as a master whose workers are all in would.
class ScriptedMaster final : public transport::MasterStream {
 public:
  void Attach(WorkerJob* job) { job_ = job; }
  bool Send(v1::WorkerPayload payload) override {
    if (!payload.has_step()) return true;
    Step entry = *transport::FromWire(payload.step());
    entries_.push_back(entry);
    Step release;
    release.barrier = entry.barrier;
    release.superstep = entry.superstep;
    release.stop = entry.barrier == Barrier::kPostKeepRunning;
    v1::MasterPayload out;
    *out.mutable_step() = transport::ToWire(release);
    job_->OnPayload(out);
    return true;
  }
  const std::vector<Step>& entries() const { return entries_; }

 private:
  WorkerJob* job_ = nullptr;
  std::vector<Step> entries_;
};

class WorkerPhasesTest : public ::testing::Test {
 protected:
  WorkerPhasesTest() : job_(master_, Assigned()) { master_.Attach(&job_); }

  static transport::Assignment Assigned() {
    transport::Assignment a;
    a.details.place.worker_index = 1;
    a.details.place.worker_count = 2;
    return a;
  }
  // Through superstep 0 to EXECUTED_GRAPH, by the barrier client alone.
  void StopAfterSuperstepZero() {
    for (Barrier b : {Barrier::kPre, Barrier::kPost, Barrier::kPostKeepRunning}) {
      Step entry;
      entry.barrier = b;
      ASSERT_TRUE(job_.Enter(entry).ok());
    }
    ASSERT_EQ(job_.position().barrier, Barrier::kExecutedGraph);
  }

  ScriptedMaster master_;
  WorkerJob job_;
};

TEST_F(WorkerPhasesTest, TheEndPhasesEnterEachBarrierWithItsFiguresInTheTablesOrder) {
  ASSERT_NO_FATAL_FAILURE(StopAfterSuperstepZero());
  WorkerPhases phases(job_);
  int persisted = 0;
  ASSERT_TRUE(phases
                  .RunEndPhases(5,
                                [&]() -> absl::StatusOr<runner::OutputSummary> {
                                  ++persisted;
                                  return runner::OutputSummary{5, 50, 9};
                                })
                  .ok());
  EXPECT_EQ(persisted, 1);
  EXPECT_EQ(job_.position().barrier, Barrier::kDone);
  const std::vector<Step>& entries = master_.entries();
  ASSERT_EQ(entries.size(), 6u);
  EXPECT_EQ(entries[3].barrier, Barrier::kExecutedGraph);
  EXPECT_EQ(entries[3].vertices, 5u);
  EXPECT_EQ(entries[4].barrier, Barrier::kPersistedResults);
  EXPECT_EQ(entries[4].part.bytes, 50u);
  EXPECT_EQ(entries[4].part.crc32c, 9u);
  EXPECT_EQ(entries[5].barrier, Barrier::kCompletedJob);
}

TEST_F(WorkerPhasesTest, ResultsThatCannotBeWrittenEnterNoFurtherBarrier) {
  ASSERT_NO_FATAL_FAILURE(StopAfterSuperstepZero());
  WorkerPhases phases(job_);
  const absl::Status st = phases.RunEndPhases(5, []() -> absl::StatusOr<runner::OutputSummary> {
    return absl::DataLossError("disk full");
  });
  EXPECT_EQ(st.message(), "disk full");
  ASSERT_EQ(master_.entries().size(), 4u);
  EXPECT_EQ(master_.entries().back().barrier, Barrier::kExecutedGraph);
  EXPECT_EQ(job_.position().barrier, Barrier::kPersistedResults);
}

}  // namespace
}  // namespace lockstep::dbsp::job
