// The relayer hook: engines over the parts of a split, joined by test relayers and a barrier, as
// the distributed layer joins workers. Checks the batches (one per destination partition per
// superstep, combined when the program has a combiner) and that a partitioned run equals a
// whole-graph run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/executor.h"
#include "test_graphs.h"

namespace lockstep::bsp {
namespace {

using bsptest::MakeEngine;
using bsptest::MakeInput;
using bsptest::QueueingRelayer;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Engines over every part of a split, stepped in lockstep: each superstep runs on every engine,
// then the barrier hands every relayed batch to its destination engine.
template <class P>
class Cluster {
 public:
  Cluster(const P& program, const GraphInput& input, uint64_t parts)
      : split_(bsptest::Split(parts)) {
    for (uint64_t p = 0; p < parts; ++p) {
      engines_.push_back(MakeEngine(program, input, split_, p));
      if (engines_.back() == nullptr) throw std::runtime_error("cannot build the engine");
      relayers_.push_back(std::make_unique<QueueingRelayer>());
      engines_.back()->SetRelayer(relayers_.back().get());
    }
  }

  // One superstep everywhere; the stats are summed as the distributed layer sums them.
  absl::StatusOr<StepStats> Step() {
    StepStats total;
    total.superstep = superstep_;
    for (auto& engine : engines_) {
      auto stats = engine->RunSuperstep(superstep_, cancel_);
      if (!stats.ok()) return stats.status();
      total.active += stats->active;
      total.messages += stats->messages;
      total.unhalted += stats->unhalted;
    }
    for (auto& relayer : relayers_) {
      for (RelayBatch& batch : relayer->TakePending()) {
        EXPECT_EQ(batch.superstep, superstep_);
        if (auto st = engines_.at(batch.to_partition)->AcceptRelayed(std::move(batch)); !st.ok()) {
          return st;
        }
      }
    }
    ++superstep_;
    return total;
  }

  absl::Status RunToCompletion(uint64_t max_supersteps = 1000) {
    while (superstep_ < max_supersteps) {
      auto stats = Step();
      if (!stats.ok()) return stats.status();
      if (!DefaultKeepRunning(*stats)) return absl::OkStatus();
    }
    return absl::DeadlineExceededError("too many supersteps");
  }

  // Every vertex's value by external ID, from whichever engine holds it.
  std::map<std::string, typename P::VertexValue> Values() const {
    std::map<std::string, typename P::VertexValue> values;
    for (const auto& engine : engines_) {
      for (uint32_t v = 0; v < engine->topology().num_local(); ++v) {
        values[engine->topology().external_id(v)] = engine->values()[v];
      }
    }
    return values;
  }

  const partition::Range& split() const { return split_; }
  Engine<P>& engine(size_t p) { return *engines_[p]; }
  QueueingRelayer& relayer(size_t p) { return *relayers_[p]; }
  uint64_t superstep() const { return superstep_; }

 private:
  partition::Range split_;
  std::vector<std::unique_ptr<Engine<P>>> engines_;
  std::vector<std::unique_ptr<QueueingRelayer>> relayers_;
  std::atomic<bool> cancel_{false};
  uint64_t superstep_ = 0;
};

// A random graph over "v0" .. "v59" with parallel edges and self-loops, spread over the parts.
GraphInput RandomGraph(uint32_t n, uint32_t m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<bsptest::Edge> edges;
  for (uint32_t i = 0; i < m; ++i) {
    const uint64_t s = rng() % n, d = rng() % n;
    edges.push_back({"v" + std::to_string(s), "v" + std::to_string(d)});
    if (i % 10 == 0) edges.push_back(edges.back());  // a parallel edge
  }
  std::vector<std::string> all;
  for (uint32_t v = 0; v < n; ++v) all.push_back("v" + std::to_string(v));
  return MakeInput(edges, all);
}

// Superstep 0: every vertex sends (its input position + 1) * 1000 + i along its i-th out-edge.
// Later supersteps: a vertex sums what it gets into its value and forwards the sum + 1 while the
// superstep is below 4. Only sums: the result does not depend on message order.
template <bool kCombine>
struct SumProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;

  std::shared_ptr<const std::map<VertexId, uint64_t>> position;

  static void Combine(uint64_t& into, const uint64_t& m) requires kCombine { into += m; }
  void Compute(Context<SumProgram>& ctx, std::span<const uint64_t> messages) const {
    ctx.VoteToHalt();
    if (ctx.superstep() == 0) {
      const auto slots = ctx.out_slots();
      for (size_t i = 0; i < slots.size(); ++i) {
        ctx.Send(slots[i], (position->at(ctx.id()) + 1) * 1000 + i);
      }
      return;
    }
    uint64_t sum = 0;
    for (uint64_t m : messages) sum += m;
    ctx.value() += sum;
    if (ctx.superstep() < 4) ctx.SendToAllNeighbors(sum + 1);
  }
};

std::shared_ptr<const std::map<VertexId, uint64_t>> Positions(const GraphInput& input) {
  auto position = std::make_shared<std::map<VertexId, uint64_t>>();
  for (uint64_t i = 0; i < input.num_vertices(); ++i) {
    (*position)[VertexIdFromExternal(input.external_ids[i])] = i;
  }
  return position;
}

// The superstep-0 messages partition `from` sends to vertices of other partitions: per
// destination partition, per destination UUID, the list of payloads.
std::map<uint64_t, std::map<VertexId, std::multiset<uint64_t>>> ExpectedRemote(
    const GraphInput& input, const partition::Range& split, uint64_t from) {
  std::map<uint64_t, std::map<VertexId, std::multiset<uint64_t>>> expected;
  std::vector<uint64_t> seen(input.num_vertices(), 0);  // out-edges seen so far per source
  for (size_t e = 0; e < input.num_edges(); ++e) {
    const uint32_t s = input.src[e], d = input.dst[e];
    const uint64_t i = seen[s]++;
    if (bsptest::OwnerOf(split, input.external_ids[s]) != from) continue;
    const uint64_t to = bsptest::OwnerOf(split, input.external_ids[d]);
    if (to == from) continue;
    expected[to][VertexIdFromExternal(input.external_ids[d])].insert((s + 1) * 1000 + i);
  }
  return expected;
}

std::vector<uint64_t> Payload(const RelayBatch& batch) {
  std::vector<uint64_t> values;
  std::string_view bytes = batch.payload;
  uint64_t x;
  while (Codec<uint64_t>::Decode(bytes, x)) values.push_back(x);
  EXPECT_TRUE(bytes.empty());
  return values;
}

class RelayerBatchTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(RelayerBatchTest, OneCombinedBatchPerDestinationPartition) {
  const uint64_t parts = GetParam();
  const GraphInput input = RandomGraph(60, 200, 7);
  Cluster<SumProgram<true>> cluster(SumProgram<true>{.position = Positions(input)}, input, parts);
  ASSERT_TRUE(cluster.Step().ok());
  for (uint64_t p = 0; p < parts; ++p) {
    SCOPED_TRACE(p);
    const auto expected = ExpectedRemote(input, cluster.split(), p);
    ASSERT_FALSE(expected.empty()) << "the graph should have edges between all parts";
    const auto& sent = cluster.relayer(p).sent();
    ASSERT_EQ(sent.size(), expected.size());
    std::set<uint64_t> destinations;
    for (const RelayBatch& batch : sent) {
      EXPECT_EQ(batch.superstep, 0u);
      EXPECT_EQ(batch.from_partition, p);
      EXPECT_NE(batch.to_partition, p);
      EXPECT_TRUE(destinations.insert(batch.to_partition).second) << "two batches for one part";
      const auto& want = expected.at(batch.to_partition);
      const std::vector<uint64_t> payload = Payload(batch);
      ASSERT_EQ(payload.size(), batch.ids.size());
      ASSERT_EQ(batch.ids.size(), want.size()) << "one combined message per destination vertex";
      for (size_t i = 0; i < batch.ids.size(); ++i) {
        ASSERT_TRUE(want.contains(batch.ids[i]));
        uint64_t sum = 0;
        for (uint64_t x : want.at(batch.ids[i])) sum += x;
        EXPECT_EQ(payload[i], sum) << ToString(batch.ids[i]);
        EXPECT_EQ(bsptest::OwnerOf(cluster.split(), ToString(batch.ids[i])), batch.to_partition);
      }
    }
  }
}

TEST_P(RelayerBatchTest, NonCombinerBatchCarriesEveryMessage) {
  const uint64_t parts = GetParam();
  const GraphInput input = RandomGraph(60, 200, 7);
  Cluster<SumProgram<false>> cluster(SumProgram<false>{.position = Positions(input)}, input, parts);
  ASSERT_TRUE(cluster.Step().ok());
  for (uint64_t p = 0; p < parts; ++p) {
    SCOPED_TRACE(p);
    const auto expected = ExpectedRemote(input, cluster.split(), p);
    const auto& sent = cluster.relayer(p).sent();
    ASSERT_EQ(sent.size(), expected.size());
    for (const RelayBatch& batch : sent) {
      EXPECT_EQ(batch.from_partition, p);
      std::map<VertexId, std::multiset<uint64_t>> got;
      const std::vector<uint64_t> payload = Payload(batch);
      ASSERT_EQ(payload.size(), batch.ids.size());
      for (size_t i = 0; i < batch.ids.size(); ++i) got[batch.ids[i]].insert(payload[i]);
      EXPECT_EQ(got, expected.at(batch.to_partition));
    }
  }
}

TEST_P(RelayerBatchTest, PartitionedRunEqualsWholeGraphRun) {
  const uint64_t parts = GetParam();
  const GraphInput input = RandomGraph(60, 200, 11);
  auto position = Positions(input);
  Cluster<SumProgram<true>> whole(SumProgram<true>{.position = position}, input, 1);
  ASSERT_TRUE(whole.RunToCompletion().ok());
  EXPECT_EQ(whole.superstep(), 5u);  // supersteps 0..3 send, 4 receives the last
  EXPECT_THAT(whole.relayer(0).sent(), IsEmpty());

  Cluster<SumProgram<true>> combined(SumProgram<true>{.position = position}, input, parts);
  ASSERT_TRUE(combined.RunToCompletion().ok());
  EXPECT_EQ(combined.superstep(), 5u);
  EXPECT_EQ(combined.Values(), whole.Values());
  // At most one batch per destination partition per superstep, over the whole run.
  for (uint64_t p = 0; p < parts; ++p) {
    std::set<std::pair<uint64_t, uint32_t>> seen;
    for (const RelayBatch& batch : combined.relayer(p).sent()) {
      EXPECT_TRUE(seen.insert({batch.superstep, batch.to_partition}).second);
      EXPECT_FALSE(batch.ids.empty());
    }
    EXPECT_GE(seen.size(), 4u * (parts - 1) - 1);  // supersteps 0..3 send to the other parts
  }

  Cluster<SumProgram<false>> plain(SumProgram<false>{.position = position}, input, parts);
  ASSERT_TRUE(plain.RunToCompletion().ok());
  EXPECT_EQ(plain.Values(), whole.Values());
  uint64_t nonzero = 0;
  for (const auto& [id, value] : whole.Values()) nonzero += value != 0;
  EXPECT_GT(nonzero, 30u);
}

INSTANTIATE_TEST_SUITE_P(Parts, RelayerBatchTest, ::testing::Values(2, 3));

// A broadcast program (the pull) whose values depend on the order its in-neighbours' values are
// combined in: float sums. With kAll every vertex publishes every superstep, so a symmetric graph
// takes the gather's fast path (no flags read) on every part; otherwise about two vertices in
// three publish and the gather reads the flags of local and relayed values alike.
template <bool kAll>
struct PullProgram {
  static constexpr bool kBroadcast = true;
  using VertexValue = float;
  using EdgeValue = NoValue;
  using Message = float;

  std::shared_ptr<const std::map<VertexId, uint64_t>> position;

  static void Combine(float& into, const float& m) { into += m; }
  void Compute(Context<PullProgram>& ctx, std::span<const float> messages) const {
    const uint64_t pos = position->at(ctx.id());
    const uint64_t s = ctx.superstep();
    float& value = ctx.value();
    value = s == 0 ? 1.0f / static_cast<float>(pos + 3)
                   : value * 0.5f + (messages.empty() ? 0.25f : messages[0]);
    ctx.VoteToHalt();
    if (s < 5 && (kAll || (pos + s) % 3 != 0)) {
      ctx.SendToAllNeighbors(value / static_cast<float>(ctx.out_degree() + 1));
    }
  }
};

class BroadcastRelayTest : public ::testing::TestWithParam<uint64_t> {};

// The published values of other parts are relayed into the same gather as local ones: the
// partitioned run combines them in the same in-edge order as the whole-graph run, bit for bit.
TEST_P(BroadcastRelayTest, PartitionedPullEqualsWholeGraphPull) {
  const uint64_t parts = GetParam();
  GraphInput directed = RandomGraph(60, 200, 7);
  GraphInput symmetric = directed;
  MakeSymmetric(symmetric);
  for (const GraphInput* input : {&symmetric, &directed}) {
    SCOPED_TRACE(input->symmetric ? "symmetric" : "directed");
    auto position = Positions(*input);
    Cluster<PullProgram<true>> whole_all(PullProgram<true>{.position = position}, *input, 1);
    Cluster<PullProgram<true>> split_all(PullProgram<true>{.position = position}, *input, parts);
    ASSERT_TRUE(whole_all.RunToCompletion().ok());
    ASSERT_TRUE(split_all.RunToCompletion().ok());
    EXPECT_EQ(split_all.superstep(), whole_all.superstep());
    EXPECT_EQ(split_all.Values(), whole_all.Values());

    Cluster<PullProgram<false>> whole_some(PullProgram<false>{.position = position}, *input, 1);
    Cluster<PullProgram<false>> split_some(PullProgram<false>{.position = position}, *input, parts);
    ASSERT_TRUE(whole_some.RunToCompletion().ok());
    ASSERT_TRUE(split_some.RunToCompletion().ok());
    EXPECT_EQ(split_some.Values(), whole_some.Values());
    EXPECT_NE(split_some.Values(), split_all.Values());
    // Values did cross partitions.
    uint64_t relayed = 0;
    for (uint64_t p = 0; p < parts; ++p) relayed += split_all.relayer(p).sent().size();
    EXPECT_GE(relayed, 5u * parts);
  }
}

INSTANTIATE_TEST_SUITE_P(Parts, BroadcastRelayTest, ::testing::Values(2, 3, 4));

// Every vertex sends its value + 1 by ID to the vertex named next in `ring` (no edges at all), so
// the messages of other partitions go through the relayer's by-ID path.
struct RingProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static void Combine(uint64_t& into, const uint64_t& m) { into += m; }

  std::shared_ptr<const std::map<VertexId, VertexId>> next;

  void Compute(Context<RingProgram>& ctx, std::span<const uint64_t> messages) const {
    ctx.VoteToHalt();
    for (uint64_t m : messages) ctx.value() += m;
    if (ctx.superstep() < 3) ctx.SendTo(next->at(ctx.id()), ctx.value() + 1);
  }
};

TEST(RelayerTest, SendToIdAcrossPartitions) {
  const std::vector<std::string> names = bsptest::Numbered(12);
  auto next = std::make_shared<std::map<VertexId, VertexId>>();
  for (size_t i = 0; i < names.size(); ++i) {
    (*next)[VertexIdFromExternal(names[i])] = VertexIdFromExternal(names[(i + 1) % names.size()]);
  }
  const GraphInput input = MakeInput({}, names);
  Cluster<RingProgram> cluster(RingProgram{.next = next}, input, 3);
  ASSERT_TRUE(cluster.RunToCompletion().ok());
  uint64_t remote = 0;
  for (size_t p = 0; p < 3; ++p) remote += cluster.relayer(p).sent().size();
  EXPECT_GT(remote, 0u);
  // Each vertex gets 1, 2 and 4 in supersteps 1, 2 and 3 (its predecessor's value + 1).
  for (const auto& [name, value] : cluster.Values()) EXPECT_EQ(value, 7u) << name;
}

TEST(RelayerTest, RemoteMessageWithoutRelayerFails) {
  const GraphInput input = RandomGraph(60, 200, 7);
  const partition::Range split = bsptest::Split(2);
  auto engine = MakeEngine(SumProgram<true>{.position = Positions(input)}, input, split, 0);
  ASSERT_NE(engine, nullptr);
  ASSERT_GT(engine->topology().num_remote(), 0u);
  Executor exec(*engine, engine->ProgramCallbacks());
  const absl::Status st = exec.RunToCompletion();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("no relayer is installed"));
}

TEST(RelayerTest, RelayerErrorFailsTheSuperstep) {
  const GraphInput input = RandomGraph(60, 200, 7);
  const partition::Range split = bsptest::Split(2);
  auto engine = MakeEngine(SumProgram<true>{.position = Positions(input)}, input, split, 0);
  ASSERT_NE(engine, nullptr);
  QueueingRelayer relayer;
  relayer.FailWith(absl::UnavailableError("peer went away"));
  engine->SetRelayer(&relayer);
  Executor exec(*engine, engine->ProgramCallbacks());
  EXPECT_EQ(exec.RunToCompletion(), absl::UnavailableError("peer went away"));
}

TEST(RelayerTest, SendToUnknownIdInOwnPartitionFailsEvenWithRelayer) {
  // "nobody" belongs to some part; the engine of that part must refuse it rather than relay it.
  const std::vector<std::string> names = bsptest::Numbered(12);
  const partition::Range split = bsptest::Split(3);
  const uint64_t part = bsptest::OwnerOf(split, "nobody");
  auto next = std::make_shared<std::map<VertexId, VertexId>>();
  for (const std::string& name : names) {
    (*next)[VertexIdFromExternal(name)] = VertexIdFromExternal("nobody");
  }
  auto engine = MakeEngine(RingProgram{.next = next}, MakeInput({}, names), split, part);
  ASSERT_NE(engine, nullptr);
  ASSERT_GT(engine->num_local_vertices(), 0u);
  QueueingRelayer relayer;
  engine->SetRelayer(&relayer);
  Executor exec(*engine, engine->ProgramCallbacks());
  const absl::Status st = exec.RunToCompletion();
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(st.message(), HasSubstr(ToString(VertexIdFromExternal("nobody"))));
  EXPECT_THAT(relayer.sent(), IsEmpty());
}

// Batches relayed in superstep 0 are decoded when the receiver starts superstep 1.
TEST(AcceptRelayedTest, BadBatchesFailTheNextSuperstep) {
  const GraphInput input = MakeInput({}, {"a", "b"});
  auto make = [&] {
    return MakeEngine(RingProgram{.next = std::make_shared<std::map<VertexId, VertexId>>()}, input);
  };
  {
    auto engine = make();
    ASSERT_NE(engine, nullptr);
    RelayBatch batch{.from_partition = 4, .ids = {VertexIdFromExternal("zz")}};
    Codec<uint64_t>::Encode(1, batch.payload);
    ASSERT_TRUE(engine->AcceptRelayed(std::move(batch)).ok());
    std::atomic<bool> cancel{false};
    const auto stats = engine->RunSuperstep(1, cancel);
    EXPECT_EQ(stats.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(stats.status().message(),
                AllOf(HasSubstr(ToString(VertexIdFromExternal("zz"))), HasSubstr("partition 4")));
  }
  {
    auto engine = make();
    ASSERT_NE(engine, nullptr);
    RelayBatch batch{.from_partition = 2, .ids = {VertexIdFromExternal("a")}, .payload = "abc"};
    ASSERT_TRUE(engine->AcceptRelayed(std::move(batch)).ok());
    std::atomic<bool> cancel{false};
    EXPECT_EQ(engine->RunSuperstep(1, cancel).status().code(), absl::StatusCode::kDataLoss);
  }
  {
    auto engine = make();
    ASSERT_NE(engine, nullptr);
    RelayBatch batch{.from_partition = 2, .ids = {VertexIdFromExternal("a")}};
    Codec<uint64_t>::Encode(1, batch.payload);
    batch.payload += "x";
    ASSERT_TRUE(engine->AcceptRelayed(std::move(batch)).ok());
    std::atomic<bool> cancel{false};
    EXPECT_EQ(engine->RunSuperstep(1, cancel).status().code(), absl::StatusCode::kDataLoss);
  }
}

// A batch of one uint64_t message for `target`, relayed in `superstep` by partition `from`.
RelayBatch BatchFor(const std::string& target, uint64_t superstep, uint32_t from, uint64_t value) {
  RelayBatch b{
      .superstep = superstep, .from_partition = from, .ids = {VertexIdFromExternal(target)}};
  Codec<uint64_t>::Encode(value, b.payload);
  return b;
}

// Relayed messages are delivered at the start of the receiver's next superstep, after its own
// local messages of the previous superstep, in sender-partition order.
struct OrderProgram {
  using VertexValue = uint8_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;

  std::shared_ptr<std::vector<std::vector<uint64_t>>> inbox;

  void Compute(Context<OrderProgram>& ctx, std::span<const uint64_t> messages) const {
    if (ctx.external_id() == "a" && ctx.superstep() == 0) ctx.SendToAllNeighbors(1);
    if (ctx.external_id() == "b") inbox->emplace_back(messages.begin(), messages.end());
    ctx.VoteToHalt();
  }
};

TEST(AcceptRelayedTest, DeliveredNextSuperstepAfterLocalInPartitionOrder) {
  auto engine =
      MakeEngine(OrderProgram{.inbox = std::make_shared<std::vector<std::vector<uint64_t>>>()},
                 MakeInput({{"a", "b"}}));
  ASSERT_NE(engine, nullptr);
  std::atomic<bool> cancel{false};
  ASSERT_TRUE(engine->RunSuperstep(0, cancel).ok());
  // Relayed in superstep 0, accepted between supersteps 0 and 1, in reverse partition order.
  ASSERT_TRUE(engine->AcceptRelayed(BatchFor("b", 0, 7, 70)).ok());
  ASSERT_TRUE(engine->AcceptRelayed(BatchFor("b", 0, 3, 30)).ok());
  ASSERT_TRUE(engine->RunSuperstep(1, cancel).ok());
  ASSERT_TRUE(engine->AcceptRelayed(BatchFor("b", 1, 5, 50)).ok());
  ASSERT_TRUE(engine->RunSuperstep(2, cancel).ok());
  const auto& inbox = *engine->program().inbox;
  ASSERT_EQ(inbox.size(), 3u);
  EXPECT_THAT(inbox[0], IsEmpty());
  EXPECT_THAT(inbox[1], ElementsAre(1, 30, 70));
  EXPECT_THAT(inbox[2], ElementsAre(50));
}

// A faster peer may relay its superstep-s messages before this engine has run superstep s; they
// must wait for superstep s + 1 like everybody else's.
TEST(AcceptRelayedTest, BatchFromAFasterPeerWaitsForTheNextSuperstep) {
  auto engine =
      MakeEngine(OrderProgram{.inbox = std::make_shared<std::vector<std::vector<uint64_t>>>()},
                 MakeInput({{"a", "b"}}));
  ASSERT_NE(engine, nullptr);
  std::atomic<bool> cancel{false};
  ASSERT_TRUE(engine->AcceptRelayed(BatchFor("b", 0, 1, 10)).ok());
  ASSERT_TRUE(engine->RunSuperstep(0, cancel).ok());
  ASSERT_TRUE(engine->AcceptRelayed(BatchFor("b", 1, 1, 11)).ok());
  ASSERT_TRUE(engine->AcceptRelayed(BatchFor("b", 2, 1, 12)).ok());  // two steps ahead
  ASSERT_TRUE(engine->RunSuperstep(1, cancel).ok());
  ASSERT_TRUE(engine->RunSuperstep(2, cancel).ok());
  ASSERT_TRUE(engine->RunSuperstep(3, cancel).ok());
  const auto& inbox = *engine->program().inbox;
  ASSERT_EQ(inbox.size(), 4u);
  EXPECT_THAT(inbox[0], IsEmpty());
  EXPECT_THAT(inbox[1], ElementsAre(1, 10));
  EXPECT_THAT(inbox[2], ElementsAre(11));
  EXPECT_THAT(inbox[3], ElementsAre(12));
}

}  // namespace
}  // namespace lockstep::bsp
