// The executor factories without sockets: a master engine over an empty graph and one engine per
// worker, each run by the executor its factory builds, on its own thread, wired in-process through
// one JobCoordinator. A worker's BarrierClient hands its entries to JobCoordinator::OnPayload and
// takes releases from the coordinator's `send`; relayed batches go through the wire conversions
// and the coordinator to the destination engine's AcceptRelayed. The result must equal the
// single-engine run's, and every process must end with the same aggregator values.
#include "lockstep/dbsp/factories.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
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
#include "lockstep/bsp/aggregator.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/relayer.h"
#include "lockstep/dbsp/coordinator.h"
#include "lockstep/dbsp/wire.h"
#include "lockstep/partition/range.h"
#include "pagerank/pagerank.h"

namespace lockstep::dbsp {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string WorkerName(uint32_t w) { return absl::StrCat("worker ", w, " (in-process)"); }

// One worker's end of its "stream": enters barriers through the coordinator, relays through it,
// and receives what the coordinator sends this worker.
class Link final : public BarrierClient, public bsp::Relayer {
 public:
  Link(uint32_t index, JobCoordinator& coordinator) : index_(index), coordinator_(coordinator) {}

  absl::StatusOr<v1::Step> Enter(v1::Step entry) override {
    const v1::Step::Type type = entry.type();
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_.reset();
    }
    v1::WorkerPayload payload;
    *payload.mutable_step() = std::move(entry);
    if (auto st = coordinator_.OnPayload(index_, std::move(payload)); !st.ok()) return st;
    std::unique_lock<std::mutex> lock(mu_);
    // The real master closes the streams on abort; here the worker looks at the coordinator.
    while (!released_.has_value()) {
      if (auto st = coordinator_.status(); !st.ok()) return st;
      changed_.wait_for(lock, 5ms);
    }
    if (released_->type() != type) {
      return absl::InternalError(absl::StrCat(WorkerName(index_), " entered ",
                                              v1::Step::Type_Name(type), " but was released from ",
                                              v1::Step::Type_Name(released_->type())));
    }
    v1::Step release = std::move(*released_);
    released_.reset();
    return release;
  }

  absl::Status Relay(bsp::RelayBatch batch) override {
    ++relayed_;
    v1::WorkerPayload payload;
    *payload.mutable_relay() = ToWire(std::move(batch));
    return coordinator_.OnPayload(index_, std::move(payload));
  }

  // The coordinator's `send` for this worker; runs on the master's thread (releases) or on the
  // sending worker's thread (relays), as a stream's reader would, in send order.
  void Receive(v1::MasterPayload payload) {
    absl::Status st;
    if (payload.has_step()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (released_.has_value()) {
        st = absl::InternalError(absl::StrCat(WorkerName(index_), " was released twice"));
      } else {
        released_ = std::move(*payload.mutable_step());
        changed_.notify_all();
      }
    } else if (payload.has_relay()) {
      auto batch = FromWire(std::move(*payload.mutable_relay()));
      st = batch.status();
      if (st.ok() && batch->to_partition != index_) {
        st = absl::InternalError(absl::StrCat("a batch for partition ", batch->to_partition,
                                              " reached ", WorkerName(index_)));
      }
      if (st.ok()) st = engine_->AcceptRelayed(std::move(*batch));
    } else {
      st = absl::InternalError("unexpected payload from the master");
    }
    if (!st.ok()) coordinator_.Abort(st);
  }

  void SetEngine(bsp::StepEngine* engine) { engine_ = engine; }
  uint64_t relayed() const { return relayed_; }

 private:
  const uint32_t index_;
  JobCoordinator& coordinator_;
  bsp::StepEngine* engine_ = nullptr;  // set before any thread starts
  std::atomic<uint64_t> relayed_{0};
  std::mutex mu_;
  std::condition_variable changed_;
  std::optional<v1::Step> released_;
};

template <class P>
absl::StatusOr<std::unique_ptr<bsp::Engine<P>>> MakeEngine(P program, const bsp::GraphInput& input,
                                                           uint64_t parts, uint64_t part) {
  auto split = partition::Range::Whole(parts);
  if (!split.ok()) return split.status();
  auto graph =
      bsp::Graph<typename P::EdgeValue>::Build(input, *split, part, bsp::NeedsInEdges<P>());
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

// A master and `n` workers in one process, joined by a JobCoordinator.
template <class P>
class InProcessJob {
 public:
  explicit InProcessJob(uint32_t n)
      : coordinator_(Names(n), [this](uint32_t w, v1::MasterPayload p) {
          links_.at(w)->Receive(std::move(p));
        }) {
    for (uint32_t w = 0; w < n; ++w) links_.push_back(std::make_unique<Link>(w, coordinator_));
  }

  // Builds every process's engine and executor, as start_job does.
  absl::Status Start(const P& program, const bsp::GraphInput& input) {
    const uint32_t n = num_workers();
    auto master = MakeEngine(program, bsp::GraphInput{}, 1, 0);
    if (!master.ok()) return master.status();
    master_ = std::move(*master);
    auto master_executor = MasterExecutorFactory(
        coordinator_, [this](const MasterProgress& p) { progress_.push_back(p); }, {})(
        *master_, master_->ProgramCallbacks());
    if (!master_executor.ok()) return master_executor.status();
    master_executor_ = std::move(*master_executor);
    for (uint32_t w = 0; w < n; ++w) {
      auto engine = MakeEngine(program, input, n, w);
      if (!engine.ok()) return engine.status();
      workers_.push_back(std::move(*engine));
      Link* link = links_[w].get();
      auto executor =
          WorkerExecutorFactory(*link,
                                [link](bsp::StepEngine& e) {
                                  e.SetRelayer(link);
                                  link->SetEngine(&e);
                                },
                                {})(*workers_.back(), workers_.back()->ProgramCallbacks());
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
      if (!master_status_.ok()) coordinator_.Abort(master_status_);
    });
    for (uint32_t w = 0; w < n; ++w) {
      threads.emplace_back([this, w] {
        worker_status_[w] = RunWorker(w);
        if (!worker_status_[w].ok()) {
          v1::WorkerPayload failure;
          failure.mutable_failure()->set_reason(std::string(worker_status_[w].message()));
          (void)coordinator_.OnPayload(w, std::move(failure));
        }
      });
    }
    for (std::thread& t : threads) t.join();
  }

  uint32_t num_workers() const { return static_cast<uint32_t>(links_.size()); }
  JobCoordinator& coordinator() { return coordinator_; }
  bsp::Engine<P>& master() { return *master_; }
  bsp::Engine<P>& worker(uint32_t w) { return *workers_[w]; }
  bsp::Executor& master_executor() { return *master_executor_; }
  bsp::Executor& worker_executor(uint32_t w) { return *worker_executors_[w]; }
  const Link& link(uint32_t w) const { return *links_[w]; }
  const absl::Status& master_status() const { return master_status_; }
  const absl::Status& worker_status(uint32_t w) const { return worker_status_[w]; }
  const std::vector<MasterProgress>& progress() const { return progress_; }
  uint64_t executed_vertices() const { return executed_vertices_; }

  // Every vertex's value by external ID, from whichever worker holds it.
  std::map<std::string, typename P::VertexValue> Values() const {
    std::map<std::string, typename P::VertexValue> values;
    for (const auto& engine : workers_) {
      for (uint32_t v = 0; v < engine->topology().num_local(); ++v) {
        EXPECT_TRUE(values.emplace(engine->topology().external_id(v), engine->values()[v]).second)
            << engine->topology().external_id(v) << " is held by two workers";
      }
    }
    return values;
  }

 private:
  static std::vector<std::string> Names(uint32_t n) {
    std::vector<std::string> names;
    for (uint32_t w = 0; w < n; ++w) names.push_back(WorkerName(w));
    return names;
  }

  // The master's side after the executor, as Master::RunJob does it.
  absl::Status RunMaster() {
    if (auto st = master_executor_->RunToCompletion(); !st.ok()) return st;
    const uint64_t last = master_executor_->supersteps() - 1;
    for (v1::Step::Type type :
         {v1::Step::EXECUTED_GRAPH, v1::Step::PERSISTED_RESULTS, v1::Step::COMPLETED_JOB}) {
      auto entries = coordinator_.WaitAll(type, last);
      if (!entries.ok()) return entries.status();
      if (type == v1::Step::EXECUTED_GRAPH) {
        for (const v1::Step& e : *entries) executed_vertices_ += e.vertices();
      }
      v1::Step release;
      release.set_type(type);
      coordinator_.ReleaseAll(release);
    }
    return absl::OkStatus();
  }

  // A worker's side after the executor, as the worker's RunJob does it.
  absl::Status RunWorker(uint32_t w) {
    bsp::Executor& executor = *worker_executors_[w];
    if (auto st = executor.RunToCompletion(); !st.ok()) return st;
    v1::Step step;
    step.set_superstep(executor.supersteps() - 1);
    step.set_vertices(executor.engine().num_local_vertices());
    for (v1::Step::Type type :
         {v1::Step::EXECUTED_GRAPH, v1::Step::PERSISTED_RESULTS, v1::Step::COMPLETED_JOB}) {
      step.set_type(type);
      if (auto release = links_[w]->Enter(step); !release.ok()) return release.status();
    }
    return absl::OkStatus();
  }

  JobCoordinator coordinator_;
  std::vector<std::unique_ptr<Link>> links_;
  std::unique_ptr<bsp::Engine<P>> master_;
  std::unique_ptr<bsp::Executor> master_executor_;
  std::vector<std::unique_ptr<bsp::Engine<P>>> workers_;
  std::vector<std::unique_ptr<bsp::Executor>> worker_executors_;
  absl::Status master_status_;
  std::vector<absl::Status> worker_status_;
  std::vector<MasterProgress> progress_;  // written by the master's thread only
  uint64_t executed_vertices_ = 0;
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
  ASSERT_TRUE(job.coordinator().status().ok()) << job.coordinator().status();

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
    const auto it = values.find(topo.external_id(v));
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
  EXPECT_EQ(job.coordinator().relayed_batches(), job.link(0).relayed() + job.link(1).relayed());
  uint64_t batches = 0;
  for (const MasterProgress& p : job.progress()) batches += p.relayed_batches;
  EXPECT_EQ(batches, job.coordinator().relayed_batches());
  EXPECT_EQ(job.progress().size(), local->supersteps);
  EXPECT_EQ(job.executed_vertices(), input.num_vertices());
}

INSTANTIATE_TEST_SUITE_P(Runs, DistributedPageRankTest,
                         ::testing::Values(PageRankCase{0, 20},      // a fixed iteration count
                                           PageRankCase{1e-10, 500}  // stops on the global change
                                           ));

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
    EXPECT_EQ(values.at(local.topology().external_id(v)), local.values()[v]);
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
       {job.master_status(), job.worker_status(1 - owner), job.coordinator().status()}) {
    EXPECT_FALSE(st.ok());
    EXPECT_THAT(std::string(st.message()), HasSubstr(WorkerName(static_cast<uint32_t>(owner))));
    EXPECT_THAT(std::string(st.message()), HasSubstr("compute failed for vertex 'v7': boom"));
  }
}

}  // namespace
}  // namespace lockstep::dbsp
