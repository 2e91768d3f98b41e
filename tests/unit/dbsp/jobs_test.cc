// The job layer without sockets: a master engine over an empty graph and one engine per worker,
// each run by the executor its factory builds, on its own thread, wired in-process through the real
// MasterJob and WorkerJobs (docs/design.md §5). Fake streams stand in for the transport: what the
// master queues for a worker is delivered in order by a thread of its own, as a stream's reader
// would; what a worker sends goes straight to the master job's OnPayload. The result must equal the
// single-engine run's, and every process must end with the same aggregator values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "job/master_job.h"
#include "job/master_phases.h"
#include "job/worker_job.h"
#include "job/worker_phases.h"
#include "lockstep/apps/pagerank/pagerank.h"
#include "lockstep/bsp/aggregator.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/dbsp/settings.h"
#include "lockstep/partition/range.h"
#include "protocol/protocol.h"
#include "transport/wire.h"
#include "util/engine_cluster.h"
#include "util/temp_dir.h"

namespace lockstep::dbsp {
namespace {

using job::MasterJob;
using job::WorkerJob;
using protocol::Barrier;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string WorkerName(uint32_t w) { return absl::StrCat("worker ", w, " (in-process)"); }

// The master's end of worker w's "stream": payloads queued by the master job are delivered in
// order by a thread of this stream. The first payload (the job details) is kept for the worker to
// build its job from, as the real link does; the rest go to that job.
class FakeWorkerStream final : public transport::WorkerStream {
 public:
  explicit FakeWorkerStream(uint32_t w) : name_(WorkerName(w)) {
    thread_ = std::thread([this] { Deliver(); });
  }
  ~FakeWorkerStream() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  const std::string& peer() const override { return name_; }
  void Enqueue(v1::MasterPayload payload, bool urgent) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (urgent) queue_.clear();
    queue_.push_back(std::move(payload));
  }
  void Flush() override { changed_.notify_all(); }

  // Waits for the job details.
  v1::JobDetails AwaitDetails() {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return details_.has_value(); });
    return *details_;
  }
  void SetHandler(transport::MasterStreamHandler* handler) {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = handler;
    changed_.notify_all();
  }
  // Stops delivering (the worker's job is over); waits for a delivery in progress.
  void Detach() {
    std::unique_lock<std::mutex> lock(mu_);
    handler_ = nullptr;
    changed_.wait(lock, [&] { return !delivering_; });
  }

 private:
  void Deliver() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      // The job details go without a handler; anything else waits for one (an urgent abort may
      // have cleared the details from the queue before they were taken: it waits too).
      changed_.wait(lock, [&] {
        return closed_ || (!queue_.empty() && ((!details_ && queue_.front().has_job_details()) ||
                                               handler_ != nullptr));
      });
      if (closed_) return;
      v1::MasterPayload payload = std::move(queue_.front());
      queue_.pop_front();
      if (!details_ && payload.has_job_details()) {
        details_ = payload.job_details();
        changed_.notify_all();
        continue;
      }
      transport::MasterStreamHandler* handler = handler_;
      delivering_ = true;
      lock.unlock();
      handler->OnPayload(payload);
      lock.lock();
      delivering_ = false;
      changed_.notify_all();
    }
  }

  const std::string name_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<v1::MasterPayload> queue_;
  std::optional<v1::JobDetails> details_;
  transport::MasterStreamHandler* handler_ = nullptr;
  bool delivering_ = false;
  bool closed_ = false;
  std::thread thread_;
};

// Worker w's end: what it sends reaches the master job at once, on the worker's thread.
class FakeMasterStream final : public transport::MasterStream {
 public:
  FakeMasterStream(uint32_t w, MasterJob& master) : w_(w), master_(master) {}
  bool Send(v1::WorkerPayload payload) override {
    if (payload.has_relay()) ++relayed_;
    master_.OnPayload(w_, payload);
    return true;
  }
  uint64_t relayed() const { return relayed_; }

 private:
  const uint32_t w_;
  MasterJob& master_;
  std::atomic<uint64_t> relayed_{0};
};

template <class P>
absl::StatusOr<std::unique_ptr<bsp::Engine<P>>> MakeEngine(P program, const bsp::GraphInput& input,
                                                           uint64_t parts, uint64_t part) {
  auto split = partition::Range::Whole(parts);
  if (!split.ok()) return split.status();
  auto graph = bsp::Graph<typename P::EdgeValue>::Build(input, *split, part,
                                                        bsp::NeedsInEdges<P>(input.symmetric));
  if (!graph.ok()) return graph.status();
  return std::make_unique<bsp::Engine<P>>(std::move(program), std::move(*graph));
}

// The reference: one engine over the whole graph with the local executor.
template <class P>
struct LocalRun {
  std::unique_ptr<bsp::Engine<P>> engine;
  uint64_t supersteps = 0;
};

template <class P>
absl::StatusOr<LocalRun<P>> RunLocal(P program, const bsp::GraphInput& input) {
  auto engine = MakeEngine(std::move(program), input, 1, 0);
  if (!engine.ok()) return engine.status();
  LocalRun<P> run{std::move(*engine)};
  auto executor = bsp::LocalExecutorFactory()(*run.engine, run.engine->ProgramCallbacks());
  if (!executor.ok()) return executor.status();
  if (auto st = (*executor)->RunToCompletion(); !st.ok()) return st;
  run.supersteps = (*executor)->supersteps();
  return run;
}

std::vector<transport::WorkerStream*> Pointers(
    const std::vector<std::unique_ptr<FakeWorkerStream>>& streams) {
  std::vector<transport::WorkerStream*> out;
  for (const auto& s : streams) out.push_back(s.get());
  return out;
}

std::vector<std::unique_ptr<FakeWorkerStream>> MakeStreams(uint32_t n) {
  std::vector<std::unique_ptr<FakeWorkerStream>> streams;
  for (uint32_t w = 0; w < n; ++w) streams.push_back(std::make_unique<FakeWorkerStream>(w));
  return streams;
}

std::vector<std::string> Names(uint32_t n) {
  std::vector<std::string> names;
  for (uint32_t w = 0; w < n; ++w) names.push_back(WorkerName(w));
  return names;
}

// A master and `n` workers in one process, joined by the real jobs over fake streams.
template <class P>
class InProcessJob {
 public:
  explicit InProcessJob(uint32_t n, std::chrono::milliseconds peer_timeout = 0ms)
      : streams_(MakeStreams(n)), master_job_(Pointers(streams_), Names(n), peer_timeout) {
    for (uint32_t w = 0; w < n; ++w) {
      links_.push_back(std::make_unique<FakeMasterStream>(w, master_job_));
    }
  }

  // Builds every process's engine and executor, as start_job does, and assigns the job.
  absl::Status Start(const P& program, const bsp::GraphInput& input,
                     const job::CheckpointPlan& checkpoints = {}) {
    const uint32_t n = num_workers();
    master_job_.SetRelayDirect(false);
    auto master = MakeEngine(program, bsp::GraphInput{}, 1, 0);
    if (!master.ok()) return master.status();
    master_ = std::move(*master);
    master_phases_ = std::make_unique<job::MasterPhases>(
        master_job_, [this](const MasterProgress& p) { progress_.push_back(p); }, checkpoints);
    auto master_executor =
        master_phases_->ExecutorFactory({})(*master_, master_->ProgramCallbacks());
    if (!master_executor.ok()) return master_executor.status();
    master_executor_ = std::move(*master_executor);
    std::vector<v1::JobDetails> details;
    for (uint32_t w = 0; w < n; ++w) {
      transport::Assignment a;
      a.details.work.job_id = checkpoints.every > 0 ? checkpoints.job_id : "in-process";
      a.details.work.app = checkpoints.app;
      a.details.resume.checkpoint_dir = checkpoints.dir;
      a.details.place.worker_index = w;
      a.details.place.worker_count = n;
      // Relayed through the master: these fake streams are the whole transport.
      a.peer_addresses.assign(n, "in-process");
      a.job_key.assign(transport::kJobKeyBytes, 'k');
      a.relay_direct = false;
      a.max_batch_bytes = transport::kDefaultMaxBatchBytes;
      details.push_back(transport::ToWire(a));
    }
    if (auto st = master_job_.Assign(std::move(details)); !st.ok()) return st;
    for (uint32_t w = 0; w < n; ++w) {
      auto engine = MakeEngine(program, input, n, w);
      if (!engine.ok()) return engine.status();
      workers_.push_back(std::move(*engine));
      auto assignment = transport::FromWire(streams_[w]->AwaitDetails());
      if (!assignment.ok()) return assignment.status();
      jobs_.push_back(std::make_unique<WorkerJob>(*links_[w], *assignment));
      streams_[w]->SetHandler(jobs_.back().get());
      phases_.push_back(std::make_unique<job::WorkerPhases>(*jobs_.back()));
      auto executor = phases_.back()->ExecutorFactory({})(*workers_.back(),
                                                          workers_.back()->ProgramCallbacks());
      if (!executor.ok()) return executor.status();
      worker_executors_.push_back(std::move(*executor));
    }
    return absl::OkStatus();
  }

  // Runs the master and every worker on their own threads through COMPLETED_JOB.
  void Run() {
    const uint32_t n = num_workers();
    worker_status_.assign(n, absl::OkStatus());
    std::vector<std::thread> threads;
    threads.emplace_back([this] {
      master_status_ = RunMaster();
      if (!master_status_.ok()) master_job_.Abort(master_status_);
    });
    for (uint32_t w = 0; w < n; ++w) {
      threads.emplace_back([this, w] {
        worker_status_[w] = RunWorker(w);
        jobs_[w]->Finish(worker_status_[w]);
        if (!worker_status_[w].ok()) worker_status_[w] = jobs_[w]->FailureOr(worker_status_[w]);
      });
    }
    for (std::thread& t : threads) t.join();
    for (auto& s : streams_) s->Detach();
    if (auto st = master_job_.WaitForManifest(); !st.ok() && master_status_.ok()) {
      master_status_ = st;
    }
  }

  uint32_t num_workers() const { return static_cast<uint32_t>(streams_.size()); }
  MasterJob& master_job() { return master_job_; }
  bsp::Engine<P>& master() { return *master_; }
  bsp::Engine<P>& worker(uint32_t w) { return *workers_[w]; }
  bsp::Executor& master_executor() { return *master_executor_; }
  bsp::Executor& worker_executor(uint32_t w) { return *worker_executors_[w]; }
  const FakeMasterStream& link(uint32_t w) const { return *links_[w]; }
  const absl::Status& master_status() const { return master_status_; }
  const absl::Status& worker_status(uint32_t w) const { return worker_status_[w]; }
  const std::vector<MasterProgress>& progress() const { return progress_; }
  uint64_t executed_vertices() const { return executed_vertices_; }
  const std::vector<runner::OutputSummary>& persisted() const { return persisted_; }
  int publications() const { return publications_; }

  // Every vertex's value by external ID, from whichever worker holds it.
  std::map<std::string, typename P::VertexValue> Values() const {
    std::map<std::string, typename P::VertexValue> values;
    for (const auto& engine : workers_) {
      for (uint32_t v = 0; v < engine->topology().num_local(); ++v) {
        EXPECT_TRUE(
            values.emplace(std::string(engine->topology().external_id(v)), engine->values()[v])
                .second)
            << engine->topology().external_id(v) << " is held by two workers";
      }
    }
    return values;
  }

 private:
  // The master's side after the executor: the real end phases, with a commit that checks each
  // part's summary as its worker sent it and publishes nothing.
  absl::Status RunMaster() {
    if (auto st = master_executor_->RunToCompletion(); !st.ok()) return st;
    job::MasterPhases::Commit commit;
    commit.verify_part = [this](uint32_t w, const runner::OutputSummary& part) {
      return part.crc32c == w ? absl::OkStatus() : absl::DataLossError("not the part sent");
    };
    commit.publish = [this](const job::MasterPhases::Ended& ended) {
      ++publications_;
      persisted_ = ended.parts;
      return absl::OkStatus();
    };
    auto ended = master_phases_->RunEndPhases(commit);
    if (!ended.ok()) return ended.status();
    executed_vertices_ = ended->vertices;
    return absl::OkStatus();
  }

  // A worker's side after the executor: the real end phases, with a part summary of its own.
  absl::Status RunWorker(uint32_t w) {
    bsp::Executor& executor = *worker_executors_[w];
    if (auto st = executor.RunToCompletion(); !st.ok()) return st;
    const uint64_t vertices = executor.engine().num_local_vertices();
    return phases_[w]->RunEndPhases(vertices, [&]() -> absl::StatusOr<runner::OutputSummary> {
      return runner::OutputSummary{vertices, 10 * vertices, w};
    });
  }

  std::vector<std::unique_ptr<FakeWorkerStream>> streams_;
  MasterJob master_job_;
  std::unique_ptr<job::MasterPhases> master_phases_;
  std::vector<std::unique_ptr<FakeMasterStream>> links_;
  std::vector<std::unique_ptr<WorkerJob>> jobs_;
  std::vector<std::unique_ptr<job::WorkerPhases>> phases_;
  std::unique_ptr<bsp::Engine<P>> master_;
  std::unique_ptr<bsp::Executor> master_executor_;
  std::vector<std::unique_ptr<bsp::Engine<P>>> workers_;
  std::vector<std::unique_ptr<bsp::Executor>> worker_executors_;
  absl::Status master_status_;
  std::vector<absl::Status> worker_status_;
  std::vector<MasterProgress> progress_;  // written by the master's thread only
  uint64_t executed_vertices_ = 0;
  std::vector<runner::OutputSummary> persisted_;  // as the master's end phases published them
  int publications_ = 0;
};

// A random graph over "v0" .. "v{n-1}" with self-loops, parallel edges, vertices without out-edges
// (dangling for PageRank) and a few isolated vertices.
bsp::GraphInput RandomGraph(uint32_t n, uint32_t m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> ids;
  for (uint32_t v = 0; v < n; ++v) ids.push_back("v" + std::to_string(v));
  std::sort(ids.begin(), ids.end(),
            [](const std::string& a, const std::string& b) { return bsp::ExternalIdLess(a, b); });
  bsp::GraphInput input;
  input.external_ids = ids;
  // Sources only among the first 80%: the rest have no out-edges.
  const uint32_t sources = n * 4 / 5;
  for (uint32_t i = 0; i < m; ++i) {
    input.src.push_back(static_cast<uint32_t>(rng() % sources));
    // The last 5 vertices receive nothing either: isolated.
    input.dst.push_back(static_cast<uint32_t>(rng() % (n - 5)));
    if (i % 13 == 0) {
      input.src.push_back(input.src.back());
      input.dst.push_back(input.dst.back());
    }
  }
  return input;
}

// Both parts of a 2-way split hold vertices, and edges cross between them.
void ExpectSplitAcross(const bsp::GraphInput& input, uint64_t parts) {
  auto split = partition::Range::Whole(parts);
  ASSERT_TRUE(split.ok());
  std::vector<uint64_t> owner;
  std::vector<uint64_t> per_part(parts, 0);
  for (const std::string& id : input.external_ids) {
    owner.push_back(*split->PartitionFor(bsp::VertexIdFromExternal(id)));
    ++per_part[owner.back()];
  }
  for (uint64_t p = 0; p < parts; ++p) ASSERT_GT(per_part[p], 0u) << "part " << p << " is empty";
  uint64_t crossing = 0;
  for (size_t e = 0; e < input.num_edges(); ++e)
    crossing += owner[input.src[e]] != owner[input.dst[e]];
  ASSERT_GT(crossing, 0u);
}

// Every aggregator of an engine, by name, as its encoded value.
std::map<std::string, std::string> AggregatorValues(bsp::StepEngine& engine) {
  std::map<std::string, std::string> values;
  engine.aggregators().ForEach(
      [&](const bsp::AggregatorBase& agg) { agg.EncodeValue(values[agg.name()]); });
  return values;
}

struct PageRankCase {
  double tolerance;
  uint64_t max_iterations;
  friend std::ostream& operator<<(std::ostream& os, const PageRankCase& c) {
    return os << "tolerance " << c.tolerance << ", at most " << c.max_iterations << " iterations";
  }
};

class DistributedPageRankTest : public ::testing::TestWithParam<PageRankCase> {};

TEST_P(DistributedPageRankTest, EqualsTheLocalRun) {
  const bsp::GraphInput input = RandomGraph(200, 700, 11);
  ASSERT_NO_FATAL_FAILURE(ExpectSplitAcross(input, 2));
  apps::pagerank::Program program;
  program.damping = 0.85;
  program.tolerance = GetParam().tolerance;
  program.max_iterations = GetParam().max_iterations;

  auto local = RunLocal(program, input);
  ASSERT_TRUE(local.ok()) << local.status();

  InProcessJob<apps::pagerank::Program> job(2);
  ASSERT_TRUE(job.Start(program, input).ok());
  job.Run();
  ASSERT_TRUE(job.master_status().ok()) << job.master_status();
  for (uint32_t w = 0; w < 2; ++w) ASSERT_TRUE(job.worker_status(w).ok()) << job.worker_status(w);
  ASSERT_TRUE(job.master_job().status().ok()) << job.master_job().status();

  // The same number of supersteps everywhere: the stop decision is global.
  EXPECT_EQ(job.master_executor().supersteps(), local->supersteps);
  for (uint32_t w = 0; w < 2; ++w)
    EXPECT_EQ(job.worker_executor(w).supersteps(), local->supersteps);
  if (program.tolerance == 0) {
    EXPECT_EQ(local->supersteps, program.max_iterations + 1);
  }

  // Every vertex on exactly one worker, with the local run's rank.
  const auto values = job.Values();
  ASSERT_EQ(values.size(), input.num_vertices());
  const auto& topo = local->engine->topology();
  double sum = 0;
  for (uint32_t v = 0; v < topo.num_local(); ++v) {
    const auto it = values.find(std::string(topo.external_id(v)));
    ASSERT_NE(it, values.end()) << topo.external_id(v);
    EXPECT_EQ(it->second, local->engine->values()[v]) << topo.external_id(v);  // exact sums
    sum += it->second;
  }
  EXPECT_NEAR(sum, 1.0, 1e-9);

  // The master and both workers end with identical aggregator values, equal to the local ones
  // (floating-point sums are exact, and encoded as such).
  const auto on_master = AggregatorValues(job.master());
  EXPECT_EQ(on_master.size(), 3u);
  for (uint32_t w = 0; w < 2; ++w) EXPECT_EQ(AggregatorValues(job.worker(w)), on_master) << w;
  const auto on_local = AggregatorValues(*local->engine);
  for (const auto& [name, bytes] : on_master) {
    ASSERT_TRUE(on_local.count(name)) << name;
    EXPECT_EQ(bytes, on_local.at(name)) << name;
  }

  // Messages crossed the split through the coordinator, and the master counted them.
  EXPECT_GT(job.link(0).relayed() + job.link(1).relayed(), 0u);
  EXPECT_EQ(job.master_job().relayed_batches(), job.link(0).relayed() + job.link(1).relayed());
  uint64_t batches = 0;
  for (const MasterProgress& p : job.progress()) batches += p.relayed_batches;
  EXPECT_EQ(batches, job.master_job().relayed_batches());
  EXPECT_EQ(job.progress().size(), local->supersteps);
  EXPECT_EQ(job.executed_vertices(), input.num_vertices());
  // Each worker's part summary reached the master at PERSISTED_RESULTS, and the job was
  // published once.
  ASSERT_EQ(job.persisted().size(), 2u);
  for (uint32_t w = 0; w < 2; ++w) {
    EXPECT_EQ(job.persisted()[w].vertices, job.worker(w).num_local_vertices());
    EXPECT_EQ(job.persisted()[w].crc32c, w);
  }
  EXPECT_EQ(job.publications(), 1);
}

INSTANTIATE_TEST_SUITE_P(Runs, DistributedPageRankTest,
                         ::testing::Values(PageRankCase{0, 20},      // a fixed iteration count
                                           PageRankCase{1e-10, 500}  // stops on the global change
                                           ));

// Checkpoints between supersteps (docs/design.md §7.6): the workers write their files at the
// master's request, the master the manifest, and only the newest `keep` stay. The job's answer is
// unchanged, and its newest checkpoint, read back from the disk, finishes on another number of
// engines with the local run's ranks exactly.
TEST(DistributedCheckpointTest, TheNewestCheckpointsFinishWithTheSameAnswerOnAnySplit) {
  const bsp::GraphInput input = RandomGraph(200, 700, 12);
  apps::pagerank::Program program;
  program.damping = 0.85;
  program.tolerance = 0;
  program.max_iterations = 12;
  auto local = RunLocal(program, input);
  ASSERT_TRUE(local.ok()) << local.status();

  test::TempDir dir("lockstep-dbsp-checkpoint");
  const job::CheckpointPlan plan{dir.path().string() + "/job-7", 3, 2, "pagerank", "job-7"};
  InProcessJob<apps::pagerank::Program> job(2);
  ASSERT_TRUE(job.Start(program, input, plan).ok());
  job.Run();
  ASSERT_TRUE(job.master_status().ok()) << job.master_status();
  for (uint32_t w = 0; w < 2; ++w) ASSERT_TRUE(job.worker_status(w).ok()) << job.worker_status(w);
  const auto values = job.Values();
  for (uint32_t v = 0; v < local->engine->topology().num_local(); ++v) {
    EXPECT_EQ(values.at(std::string(local->engine->topology().external_id(v))),
              local->engine->values()[v]);
  }
  // Checkpoints before supersteps 3, 6, 9 and 12; the newest two remain.
  EXPECT_EQ(bsp::ListCheckpoints(plan.dir), (std::vector<uint64_t>{12, 9}));
  EXPECT_FALSE(std::filesystem::exists(bsp::CheckpointStepDir(plan.dir, 6)));
  auto files = bsp::ReadCheckpoint(bsp::CheckpointStepDir(plan.dir, 9), nullptr);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].header().job, "job-7");
  EXPECT_EQ((*files)[0].header().superstep, 9u);

  test::EngineCluster<apps::pagerank::Program> restored(program, input, 3, false);
  ASSERT_TRUE(restored.Connect().ok());
  ASSERT_TRUE(restored.Restore(*files).ok());
  ASSERT_TRUE(restored.RunToCompletion().ok());
  EXPECT_EQ(restored.superstep(), local->supersteps);
  const auto again = restored.Values();
  for (uint32_t v = 0; v < local->engine->topology().num_local(); ++v) {
    EXPECT_EQ(again.at(std::string(local->engine->topology().external_id(v))),
              local->engine->values()[v]);
  }
  // A manifest whose file is not the one written refuses the checkpoint.
  const std::string part = bsp::CheckpointFileName(bsp::CheckpointStepDir(plan.dir, 12), 1);
  std::filesystem::resize_file(part, std::filesystem::file_size(part) - 1);
  auto broken = bsp::ReadCheckpoint(bsp::CheckpointStepDir(plan.dir, 12), nullptr);
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kDataLoss) << broken.status();
  EXPECT_EQ(bsp::ListCheckpoints(plan.dir).size(), 2u);  // the manifest alone still reads
}

// Sums of integer messages, a persistent sum aggregator and a max aggregator; the stop decision
// reads the sum aggregator, and every callback records the stats it sees. Everything is exact, so
// the distributed run must match the local one bit for bit.
struct SumProgram {
  using VertexValue = uint64_t;
  using EdgeValue = bsp::NoValue;
  using Message = uint64_t;

  uint64_t limit = 0;  // stop once this much has been received in total
  bsp::SumAggregator<uint64_t>* received = nullptr;
  bsp::MaxAggregator<uint64_t>* largest = nullptr;
  // What the callbacks saw, per process (set after the engine is built).
  std::shared_ptr<std::vector<bsp::StepStats>> post_stats;
  std::shared_ptr<std::vector<uint64_t>> received_seen;

  void Register(bsp::AggregatorRegistry& aggregators) {
    received = aggregators.Register<uint64_t>("test.received");
    largest = aggregators.Register<uint64_t, bsp::MaxOp<uint64_t>>("test.largest");
  }
  uint64_t Init(const bsp::Context<SumProgram>& ctx) const {
    return std::stoull(ctx.external_id().substr(1));
  }
  void Compute(bsp::Context<SumProgram>& ctx, std::span<const uint64_t> messages) const {
    uint64_t sum = 0;
    for (uint64_t m : messages) sum += m;
    ctx.value() += sum;
    ctx.Aggregate(received, sum);
    ctx.Aggregate(largest, ctx.value());
    if (ctx.superstep() < 12) {
      ctx.SendToAllNeighbors(ctx.value() % 101 + ctx.superstep() + 1);
    } else {
      ctx.VoteToHalt();
    }
  }
  absl::Status PostStep(const bsp::StepStats& stats) {
    post_stats->push_back(stats);
    return absl::OkStatus();
  }
  bool KeepRunning(const bsp::StepStats&) {
    received_seen->push_back(received->Get());
    return received->Get() < limit;
  }
};

void Observe(bsp::Engine<SumProgram>& engine) {
  engine.program().post_stats = std::make_shared<std::vector<bsp::StepStats>>();
  engine.program().received_seen = std::make_shared<std::vector<uint64_t>>();
}

std::vector<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>> Counts(
    const std::vector<bsp::StepStats>& stats) {
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>> counts;
  for (const auto& s : stats) counts.emplace_back(s.superstep, s.active, s.messages, s.unhalted);
  return counts;
}

TEST(DistributedSumTest, AggregatorsStatsAndStopDecisionMatchTheLocalRunExactly) {
  const bsp::GraphInput input = RandomGraph(150, 500, 5);
  ASSERT_NO_FATAL_FAILURE(ExpectSplitAcross(input, 2));
  SumProgram program;

  // Find a limit the run crosses in its middle, so that the aggregator decides when to stop.
  program.limit = ~uint64_t{0};
  {
    auto engine = MakeEngine(program, input, 1, 0);
    ASSERT_TRUE(engine.ok());
    Observe(**engine);
    auto executor = bsp::LocalExecutorFactory()(**engine, (*engine)->ProgramCallbacks());
    ASSERT_TRUE(executor.ok());
    ASSERT_TRUE((*executor)->RunSteps(8).ok());
    program.limit = (*engine)->program().received_seen->at(6);
  }

  auto engine = MakeEngine(program, input, 1, 0);
  ASSERT_TRUE(engine.ok());
  Observe(**engine);
  auto local_executor = bsp::LocalExecutorFactory()(**engine, (*engine)->ProgramCallbacks());
  ASSERT_TRUE(local_executor.ok());
  ASSERT_TRUE((*local_executor)->RunToCompletion().ok());
  const bsp::Engine<SumProgram>& local = **engine;
  ASSERT_EQ((*local_executor)->supersteps(), 7u)
      << "the limit should stop the run after superstep 6";

  InProcessJob<SumProgram> job(2);
  ASSERT_TRUE(job.Start(program, input).ok());
  Observe(job.master());
  for (uint32_t w = 0; w < 2; ++w) Observe(job.worker(w));
  job.Run();
  ASSERT_TRUE(job.master_status().ok()) << job.master_status();
  for (uint32_t w = 0; w < 2; ++w) ASSERT_TRUE(job.worker_status(w).ok()) << job.worker_status(w);

  // Values exactly.
  const auto values = job.Values();
  ASSERT_EQ(values.size(), input.num_vertices());
  for (uint32_t v = 0; v < local.topology().num_local(); ++v) {
    EXPECT_EQ(values.at(std::string(local.topology().external_id(v))), local.values()[v]);
  }
  // Aggregators: identical on all three processes and equal to the local run's (deltas, not
  // values, travel to the master: the persistent sum would double otherwise).
  const auto expected = AggregatorValues(*engine->get());
  EXPECT_EQ(AggregatorValues(job.master()), expected);
  for (uint32_t w = 0; w < 2; ++w) EXPECT_EQ(AggregatorValues(job.worker(w)), expected) << w;
  // Every process's callbacks saw the global stats and the global aggregator values.
  const auto local_counts = Counts(*local.program().post_stats);
  EXPECT_EQ(Counts(*job.master().program().post_stats), local_counts);
  EXPECT_EQ(*job.master().program().received_seen, *local.program().received_seen);
  for (uint32_t w = 0; w < 2; ++w) {
    EXPECT_EQ(Counts(*job.worker(w).program().post_stats), local_counts) << w;
    EXPECT_EQ(*job.worker(w).program().received_seen, *local.program().received_seen) << w;
  }
  // Global progress as the master reports it.
  ASSERT_EQ(job.progress().size(), local_counts.size());
  for (size_t s = 0; s < local_counts.size(); ++s) {
    const bsp::StepStats& g = job.progress()[s].global;
    EXPECT_EQ(std::make_tuple(g.superstep, g.active, g.messages, g.unhalted), local_counts[s]);
  }
}

// Fails compute for one vertex in superstep 2.
struct FailingProgram {
  using VertexValue = uint64_t;
  using EdgeValue = bsp::NoValue;
  using Message = uint64_t;
  std::string victim;

  absl::Status Compute(bsp::Context<FailingProgram>& ctx, std::span<const uint64_t>) const {
    if (ctx.superstep() == 2 && ctx.external_id() == victim) return absl::InternalError("boom");
    ctx.SendToAllNeighbors(1);
    return absl::OkStatus();
  }
  bool KeepRunning(const bsp::StepStats& stats) const { return stats.superstep < 5; }
};

TEST(DistributedFailureTest, AComputeErrorOnOneWorkerAbortsEveryProcessWithItsReason) {
  const bsp::GraphInput input = RandomGraph(100, 300, 3);
  ASSERT_NO_FATAL_FAILURE(ExpectSplitAcross(input, 2));
  const std::string victim = "v7";
  auto split = partition::Range::Whole(2);
  const uint64_t owner = *split->PartitionFor(bsp::VertexIdFromExternal(victim));

  InProcessJob<FailingProgram> job(2);
  ASSERT_TRUE(job.Start(FailingProgram{victim}, input).ok());
  job.Run();
  EXPECT_THAT(std::string(job.worker_status(owner).message()),
              HasSubstr("compute failed for vertex 'v7'"));
  for (const absl::Status& st :
       {job.master_status(), job.worker_status(1 - owner), job.master_job().status()}) {
    EXPECT_FALSE(st.ok());
    EXPECT_THAT(std::string(st.message()), HasSubstr(WorkerName(static_cast<uint32_t>(owner))));
    EXPECT_THAT(std::string(st.message()), HasSubstr("compute failed for vertex 'v7': boom"));
  }
}

// A worker that joined a job and then says nothing: the wait for the barrier ends at the peer
// timeout with a reason naming it, and every worker is told.
TEST(PeerTimeoutTest, ASilentWorkerFailsTheJobNamingIt) {
  auto streams = MakeStreams(3);
  MasterJob master(Pointers(streams), Names(3), 300ms);
  std::vector<v1::JobDetails> details(3);
  ASSERT_TRUE(master.Assign(details).ok());
  FakeMasterStream link0(0, master), link2(2, master);
  for (FakeMasterStream* link : {&link0, &link2}) {
    v1::WorkerPayload entry;
    entry.mutable_step()->set_type(v1::Step::PRE);
    ASSERT_TRUE(link->Send(entry));
  }
  const auto start = std::chrono::steady_clock::now();
  auto entries = master.WaitAll({Barrier::kPre, 0});
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(entries.status().message()),
              HasSubstr("worker 1 (in-process) has not entered PRE of superstep 0 within 300 ms (" +
                        SettingName(Setting::kPeerTimeout) + ")"));
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 5s);
  EXPECT_EQ(master.position().barrier, Barrier::kAborted);
}

// Defect: a worker's failure reason may quote input that is not UTF-8; it reaches the master's
// reason escaped and bounded, never lost.
TEST(FailureReportTest, AReasonThatIsNotUtf8ArrivesEscapedAndBounded) {
  auto streams = MakeStreams(2);
  MasterJob master(Pointers(streams), Names(2), 0ms);
  std::vector<v1::JobDetails> details(2);
  ASSERT_TRUE(master.Assign(details).ok());
  FakeMasterStream link(1, master);
  v1::WorkerPayload failure;
  failure.mutable_failure()->set_reason("g.el:7: bad token '\xff\xfe\n[error] forged line'" +
                                        std::string(1 << 20, 'x'));
  ASSERT_TRUE(link.Send(failure));
  const std::string reason(master.status().message());
  EXPECT_THAT(reason, HasSubstr("worker 1 (in-process): failed: g.el:7: bad token '\\xff\\xfe"));
  EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
  EXPECT_LT(reason.size(), 2000u);
}

}  // namespace
}  // namespace lockstep::dbsp

namespace lockstep::dbsp::job {
namespace {

// The master logs a worker's trace lines only about the traced vertices its range holds, one per
// vertex, sanitised and naming the worker: a worker cannot speak for another's vertices, flood the
// log, or write control characters into it.
TEST(TracedLinesTest, OnlyAWorkersOwnVerticesOncePerVertexSanitised) {
  const std::vector<std::string> ids = {"a", "b'c"};
  const std::vector<std::string> lines = {
      "vertex 'a' superstep 2: ran, received 0, sent 1, value 1\n\x1b[2J, halted no",
      "vertex 'x' superstep 2: forged for a vertex of another worker",
      "vertex 'ab' superstep 2: a prefix is not the vertex",
      "vertex 'b'c' is not in the graph: not traced",
      "vertex 'a' superstep 2: a second line for a, past the bound",
  };
  const std::vector<std::string> taken = TracedLines(ids, 3, lines);
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0],
            "vertex 'a' superstep 2: ran, received 0, sent 1, value 1\\x0a\\x1b[2J, halted no | "
            "worker 3");
  EXPECT_EQ(taken[1], "vertex 'b'c' is not in the graph: not traced | worker 3");
  // Nothing traced: nothing taken, whatever is sent.
  EXPECT_TRUE(TracedLines({}, 0, lines).empty());
  // A line is cut at kMaxTraceLineBytes.
  const std::string long_line = "vertex 'a' superstep 0: " + std::string(5000, 'x');
  EXPECT_LT(TracedLines(ids, 0, {long_line})[0].size(), kMaxTraceLineBytes + 64);
}

}  // namespace
}  // namespace lockstep::dbsp::job
