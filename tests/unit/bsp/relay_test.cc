// The relayer hook: engines over the parts of a split, joined by test relayers and a barrier, as
// the distributed layer joins workers, connected through an in-process Exchange (batches address
// by position) or not (by UUID). Checks the batches (one per destination partition per superstep,
// combined when the program has a combiner, the smallest coding of positions), that a partitioned
// run equals a whole-graph run, that a malformed batch or set-up fails naming the partitions, and
// what a message costs on the wire.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/relay_positions.h"
#include "test_graphs.h"
#include "util/engine_cluster.h"
#include "util/thread_exchange.h"

namespace lockstep::bsp {
namespace {

using bsptest::MakeEngine;
using bsptest::MakeInput;
using bsptest::QueueingRelayer;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Engines over every part of a split, stepped in lockstep as the distributed layer steps them;
// connected through a ThreadExchange (batches by position) or not (batches by UUID).
template <class P>
class Cluster : public test::EngineCluster<P> {
 public:
  Cluster(const P& program, const GraphInput& input, uint64_t parts, bool connect)
      : test::EngineCluster<P>(program, input, static_cast<uint32_t>(parts)) {
    if (connect) {
      const absl::Status st = this->Connect();
      if (!st.ok()) throw std::runtime_error(st.ToString());
    }
  }
  // One superstep; the test fails if it fails.
  bool StepOk() {
    auto go_on = this->Step();
    EXPECT_TRUE(go_on.ok()) << go_on.status();
    return go_on.ok();
  }
};

// The destination UUIDs of a batch in payload order: its positions resolved through the sender's
// lists (its remote table's slice, or its boundary for published values), then its IDs.
template <class P>
std::vector<VertexId> Destinations(const Engine<P>& sender, const RelayBatch& batch) {
  const Topology& topo = sender.topology();
  const uint32_t q = batch.to_partition;
  const uint32_t first = topo.remote_partition_begin()[q];
  const uint32_t size = topo.remote_partition_begin()[q + 1] - first;
  std::vector<VertexId> out;
  const absl::Status st = ForEachPosition(batch.coding, batch.positions, size, batch.from_partition,
                                          [&](uint32_t position) {
                                            out.push_back(topo.remote_id(first + position));
                                            return absl::OkStatus();
                                          });
  EXPECT_TRUE(st.ok()) << st;
  out.insert(out.end(), batch.ids.begin(), batch.ids.end());
  return out;
}

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
  uint64_t every = 1;  // in superstep 0 only the vertices at a multiple of `every` send

  static void Combine(uint64_t& into, const uint64_t& m) requires kCombine { into += m; }
  void Compute(Context<SumProgram>& ctx, std::span<const uint64_t> messages) const {
    ctx.VoteToHalt();
    if (ctx.superstep() == 0) {
      if (position->at(ctx.id()) % every != 0) return;
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

// Parts, and whether the engines are connected (positions) or not (UUIDs).
class RelayerBatchTest : public ::testing::TestWithParam<std::tuple<uint64_t, bool>> {};

TEST_P(RelayerBatchTest, OneCombinedBatchPerDestinationPartition) {
  const auto [parts, connect] = GetParam();
  const GraphInput input = RandomGraph(60, 200, 7);
  Cluster<SumProgram<true>> cluster(SumProgram<true>{.position = Positions(input)}, input, parts,
                                    connect);
  ASSERT_TRUE(cluster.StepOk());
  for (uint32_t p = 0; p < parts; ++p) {
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
      // Connected, messages along edges never carry a UUID.
      EXPECT_EQ(batch.ids.empty(), connect);
      EXPECT_EQ(batch.coding == PositionCoding::kNone, !connect);
      const auto& want = expected.at(batch.to_partition);
      const std::vector<VertexId> ids = Destinations(cluster.engine(p), batch);
      const std::vector<uint64_t> payload = Payload(batch);
      ASSERT_EQ(payload.size(), ids.size());
      ASSERT_EQ(ids.size(), want.size()) << "one combined message per destination vertex";
      for (size_t i = 0; i < ids.size(); ++i) {
        ASSERT_TRUE(want.contains(ids[i]));
        uint64_t sum = 0;
        for (uint64_t x : want.at(ids[i])) sum += x;
        EXPECT_EQ(payload[i], sum) << ToString(ids[i]);
        EXPECT_EQ(bsptest::OwnerOf(cluster.split(), ToString(ids[i])), batch.to_partition);
      }
    }
  }
}

TEST_P(RelayerBatchTest, NonCombinerBatchCarriesEveryMessage) {
  const auto [parts, connect] = GetParam();
  const GraphInput input = RandomGraph(60, 200, 7);
  Cluster<SumProgram<false>> cluster(SumProgram<false>{.position = Positions(input)}, input, parts,
                                     connect);
  ASSERT_TRUE(cluster.StepOk());
  for (uint32_t p = 0; p < parts; ++p) {
    SCOPED_TRACE(p);
    const auto expected = ExpectedRemote(input, cluster.split(), p);
    const auto& sent = cluster.relayer(p).sent();
    ASSERT_EQ(sent.size(), expected.size());
    for (const RelayBatch& batch : sent) {
      EXPECT_EQ(batch.from_partition, p);
      EXPECT_EQ(batch.ids.empty(), connect);
      EXPECT_EQ(batch.coding == PositionCoding::kNone, !connect);
      std::map<VertexId, std::multiset<uint64_t>> got;
      const std::vector<VertexId> ids = Destinations(cluster.engine(p), batch);
      const std::vector<uint64_t> payload = Payload(batch);
      ASSERT_EQ(payload.size(), ids.size());
      for (size_t i = 0; i < ids.size(); ++i) got[ids[i]].insert(payload[i]);
      EXPECT_EQ(got, expected.at(batch.to_partition));
    }
  }
}

TEST_P(RelayerBatchTest, PartitionedRunEqualsWholeGraphRun) {
  const auto [parts, connect] = GetParam();
  const GraphInput input = RandomGraph(60, 200, 11);
  auto position = Positions(input);
  Cluster<SumProgram<true>> whole(SumProgram<true>{.position = position}, input, 1, connect);
  ASSERT_TRUE(whole.RunToCompletion().ok());
  EXPECT_EQ(whole.superstep(), 5u);  // supersteps 0..3 send, 4 receives the last
  EXPECT_THAT(whole.relayer(0).sent(), IsEmpty());

  Cluster<SumProgram<true>> combined(SumProgram<true>{.position = position}, input, parts, connect);
  ASSERT_TRUE(combined.RunToCompletion().ok());
  EXPECT_EQ(combined.superstep(), 5u);
  EXPECT_EQ(combined.Values(), whole.Values());
  // At most one batch per destination partition per superstep, over the whole run.
  for (uint32_t p = 0; p < parts; ++p) {
    std::set<std::pair<uint64_t, uint32_t>> seen;
    for (const RelayBatch& batch : combined.relayer(p).sent()) {
      EXPECT_TRUE(seen.insert({batch.superstep, batch.to_partition}).second);
      EXPECT_FALSE(Destinations(combined.engine(p), batch).empty());
    }
    EXPECT_GE(seen.size(), 4u * (parts - 1) - 1);  // supersteps 0..3 send to the other parts
  }

  Cluster<SumProgram<false>> plain(SumProgram<false>{.position = position}, input, parts, connect);
  ASSERT_TRUE(plain.RunToCompletion().ok());
  EXPECT_EQ(plain.Values(), whole.Values());
  uint64_t nonzero = 0;
  for (const auto& [id, value] : whole.Values()) nonzero += value != 0;
  EXPECT_GT(nonzero, 30u);
}

INSTANTIATE_TEST_SUITE_P(Parts, RelayerBatchTest,
                         ::testing::Combine(::testing::Values(uint64_t{2}, uint64_t{3},
                                                              uint64_t{4}),
                                            ::testing::Bool()));

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

class PullRelayTest : public ::testing::TestWithParam<uint64_t> {};

// The published values of other parts are relayed into the same gather as local ones: the
// partitioned run combines them in the same in-edge order as the whole-graph run, bit for bit.
TEST_P(PullRelayTest, PartitionedPullEqualsWholeGraphPull) {
  const uint64_t parts = GetParam();
  GraphInput directed = RandomGraph(60, 200, 7);
  GraphInput symmetric = directed;
  MakeSymmetric(symmetric);
  for (const auto& [input, connect] : {std::pair{&symmetric, false}, std::pair{&symmetric, true},
                                       std::pair{&directed, false}, std::pair{&directed, true}}) {
    SCOPED_TRACE(std::string(input->symmetric ? "symmetric" : "directed") +
                 (connect ? ", by position" : ", by UUID"));
    auto position = Positions(*input);
    Cluster<PullProgram<true>> whole_all(PullProgram<true>{.position = position}, *input, 1, false);
    Cluster<PullProgram<true>> split_all(PullProgram<true>{.position = position}, *input, parts,
                                         connect);
    ASSERT_TRUE(whole_all.RunToCompletion().ok());
    ASSERT_TRUE(split_all.RunToCompletion().ok());
    EXPECT_EQ(split_all.superstep(), whole_all.superstep());
    EXPECT_EQ(split_all.Values(), whole_all.Values());

    Cluster<PullProgram<false>> whole_some(PullProgram<false>{.position = position}, *input, 1,
                                           false);
    Cluster<PullProgram<false>> split_some(PullProgram<false>{.position = position}, *input, parts,
                                           connect);
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

// 70 parts: more than the 64 whose boundary lists the engine gathers as bits.
INSTANTIATE_TEST_SUITE_P(Parts, PullRelayTest, ::testing::Values(2, 3, 4, 70));

// A broadcast program: in supersteps 0..3 the vertices whose (input position + superstep) is a
// multiple of `every` publish their position + 1 + their value; every vertex adds what it gets.
// With every = 1 all publish (as in PageRank); otherwise the batches say who did.
struct PublishProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static constexpr bool kBroadcast = true;
  static void Combine(uint64_t& into, const uint64_t& m) { into += m; }

  std::shared_ptr<const std::map<VertexId, uint64_t>> position;
  uint64_t every = 1;

  void Compute(Context<PublishProgram>& ctx, std::span<const uint64_t> messages) const {
    for (uint64_t m : messages) ctx.value() += m;
    if (ctx.superstep() >= 4) {
      ctx.VoteToHalt();
      return;
    }
    const uint64_t me = position->at(ctx.id());
    if ((me + ctx.superstep()) % every == 0) ctx.SendToAllNeighbors(me + 1 + ctx.value());
  }
};

class BroadcastRelayTest : public ::testing::TestWithParam<std::tuple<uint64_t, uint64_t, bool>> {};

TEST_P(BroadcastRelayTest, PartitionedRunEqualsWholeGraphRun) {
  const auto [parts, every, connect] = GetParam();
  const GraphInput input = RandomGraph(300, 900, 5);
  const PublishProgram program{.position = Positions(input), .every = every};
  Cluster<PublishProgram> whole(program, input, 1, false);
  ASSERT_TRUE(whole.RunToCompletion().ok());
  Cluster<PublishProgram> cluster(program, input, parts, connect);
  ASSERT_TRUE(cluster.RunToCompletion().ok());
  EXPECT_EQ(cluster.superstep(), whole.superstep());
  EXPECT_EQ(cluster.Values(), whole.Values());
  std::set<PositionCoding> codings;
  for (uint32_t p = 0; p < parts; ++p) {
    for (const RelayBatch& batch : cluster.relayer(p).sent()) {
      EXPECT_TRUE(batch.published);
      EXPECT_EQ(batch.ids.empty(), connect);
      codings.insert(batch.coding);
    }
  }
  if (!connect) {
    EXPECT_THAT(codings, ElementsAre(PositionCoding::kNone));
  } else if (every == 1) {
    // Everybody published: the batch is the values and nothing else.
    EXPECT_THAT(codings, ElementsAre(PositionCoding::kAll));
    EXPECT_EQ(cluster.relayed_bytes(), 8 * cluster.relayed_messages());
  } else {
    EXPECT_FALSE(codings.contains(PositionCoding::kNone));
    EXPECT_FALSE(codings.contains(PositionCoding::kAll));
  }
}

INSTANTIATE_TEST_SUITE_P(PartsEveryConnect, BroadcastRelayTest,
                         ::testing::Combine(::testing::Values(uint64_t{2}, uint64_t{4}),
                                            ::testing::Values(uint64_t{1}, uint64_t{3},
                                                              uint64_t{40}),
                                            ::testing::Bool()));

// A min-combined broadcast (BFS from several sources, each starting at its own offset): the
// sources are the vertices at a multiple of 97 in input order and start at (position % 5); a
// vertex that improves offers its value + 1 to its out-neighbours. With Improves the engine may
// push or pull each superstep (program.h); the answer must not depend on that. With kBoth the
// offers go to in-neighbours too (kBothDirections).
template <class T, bool kBoth = false>
struct MinHopsProgram {
  static constexpr bool kBroadcast = true;
  static constexpr bool kBothDirections = kBoth;
  using VertexValue = T;
  using EdgeValue = NoValue;
  using Message = T;
  static constexpr T kNone = std::numeric_limits<T>::has_infinity
                                 ? std::numeric_limits<T>::infinity()
                                 : std::numeric_limits<T>::max();

  std::shared_ptr<const std::map<VertexId, uint64_t>> position;

  static void Combine(T& into, const T& m) { into = std::min(into, m); }
  static bool Improves(const T& value, const T& m) { return m < value; }
  T Init(const Context<MinHopsProgram>& ctx) const {
    const uint64_t pos = position->at(ctx.id());
    return pos % 97 == 0 ? static_cast<T>(pos % 5) : kNone;
  }
  void Compute(Context<MinHopsProgram>& ctx, std::span<const T> messages) const {
    const bool start = ctx.superstep() == 0 && ctx.value() != kNone;
    if (start || (!messages.empty() && messages[0] < ctx.value())) {
      if (!start) ctx.value() = messages[0];
      ctx.SendToAllNeighbors(ctx.value() + T{1});
    }
    ctx.VoteToHalt();
  }
};

// The same by relaxing every directed edge (both ways with `both`) until nothing changes; an edge
// costs its weight, or 1 in an unweighted input.
template <class T>
std::map<std::string, T> MinHopsOracle(const GraphInput& input, bool both) {
  const T none = MinHopsProgram<T>::kNone;
  std::vector<T> value(input.num_vertices(), none);
  for (uint64_t v = 0; v < value.size(); v += 97) value[v] = static_cast<T>(v % 5);
  for (bool changed = true; changed;) {
    changed = false;
    auto relax = [&](uint32_t u, uint32_t v, T w) {
      if (value[u] != none && value[u] + w < value[v]) {
        value[v] = value[u] + w;
        changed = true;
      }
    };
    for (size_t e = 0; e < input.src.size(); ++e) {
      const T w = input.weights.empty() ? T{1} : static_cast<T>(input.weights[e]);
      relax(input.src[e], input.dst[e], w);
      if (input.symmetric || both) relax(input.dst[e], input.src[e], w);
    }
  }
  std::map<std::string, T> out;
  for (uint64_t v = 0; v < value.size(); ++v) out[input.external_ids[v]] = value[v];
  return out;
}

// Runs `program` on 1 to 4 parts, connected or not, pushed, pulled or chosen per superstep: the
// values are `want` everywhere, in as many supersteps (unless values were held back, kAnyOrder),
// no in-edges are built on a symmetric graph (the gather takes the out-edges), and each direction
// that may be taken was. Returns the supersteps in which some part held values back.
template <class P>
uint64_t ExpectEveryWay(const P& program, const GraphInput& input,
                        const std::map<std::string, typename P::VertexValue>& want) {
  static_assert(IsMinBroadcast<P>());
  using Direction = typename Engine<P>::Direction;
  uint64_t supersteps = 0;
  uint64_t held_back = 0;
  for (uint64_t parts : {1, 2, 3, 4}) {
    for (bool connect : {false, true}) {
      if (parts == 1 && connect) continue;
      for (Direction d : {Direction::kChoose, Direction::kPush, Direction::kPull}) {
        SCOPED_TRACE(::testing::Message() << parts << " parts, connect " << connect
                                          << ", direction " << static_cast<int>(d));
        Cluster<P> cluster(program, input, parts, connect);
        for (uint32_t p = 0; p < parts; ++p) {
          cluster.engine(p).SetDirection(d);
          EXPECT_EQ(cluster.engine(p).topology().has_in_edges(), !input.symmetric);
        }
        EXPECT_TRUE(cluster.RunToCompletion().ok());
        EXPECT_EQ(cluster.Values(), want);
        uint64_t pushed = 0, pulled = 0, held = 0;
        for (uint32_t p = 0; p < parts; ++p) {
          pushed += cluster.engine(p).pushed_supersteps();
          pulled += cluster.engine(p).pulled_supersteps();
          held += cluster.engine(p).held_back_supersteps();
        }
        held_back += held;
        // Only a program that takes its messages in any order holds back, and only by choice.
        if (!IsAnyOrder<P>() || d != Direction::kChoose) {
          EXPECT_EQ(held, 0u);
        }
        if (held == 0) {
          if (supersteps == 0) supersteps = cluster.superstep();
          EXPECT_EQ(cluster.superstep(), supersteps);
        }
        if (d != Direction::kPull) {
          EXPECT_GT(pushed, 0u);
        }
        if (d != Direction::kPush) {
          EXPECT_GT(pulled + held, 0u);  // a frontier too large to push: pulled or held back
        }
      }
    }
  }
  return held_back;
}

template <class T>
class MinBroadcastTest : public ::testing::Test {};
using MinTypes = ::testing::Types<int64_t, uint32_t, double>;
TYPED_TEST_SUITE(MinBroadcastTest, MinTypes);

// Pushed, pulled, or chosen per superstep, on 1 to 4 parts connected or not, directed or
// symmetric, one way or both: the values are the oracle's, in as many supersteps, and the rule
// did both.
template <class T, bool kBoth>
void CheckMinBroadcast() {
  GraphInput directed = RandomGraph(3000, 4500, 13);
  GraphInput symmetric = directed;
  MakeSymmetric(symmetric);
  for (const GraphInput* input : {&directed, &symmetric}) {
    SCOPED_TRACE(::testing::Message() << (input->symmetric ? "symmetric" : "directed")
                                      << (kBoth ? ", both ways" : ", one way"));
    ExpectEveryWay(MinHopsProgram<T, kBoth>{.position = Positions(*input)}, *input,
                   MinHopsOracle<T>(*input, kBoth));
  }
}

TYPED_TEST(MinBroadcastTest, PushPullOrChosenGiveTheSameAnswer) {
  CheckMinBroadcast<TypeParam, false>();
}

TYPED_TEST(MinBroadcastTest, BothWaysPushPullOrChosenGiveTheSameAnswer) {
  CheckMinBroadcast<TypeParam, true>();
}

// A min-combined broadcast whose message changes along an edge (Along: + the edge's weight, as
// SSSP). A double pushes in place; boxed in a struct (kBoxed) it cannot, and a push bins its
// offers by target. With kAny it takes its messages in any order (kAnyOrder), and a large
// frontier goes out least values first.
struct BoxedCost {
  double cost;
  friend bool operator<(const BoxedCost& a, const BoxedCost& b) { return a.cost < b.cost; }
};

template <bool kAny = false, bool kBoxed = false>
struct WeightedMinProgram {
  static constexpr bool kBroadcast = true;
  static constexpr bool kAnyOrder = kAny;
  using VertexValue = double;
  using EdgeValue = double;
  using Message = std::conditional_t<kBoxed, BoxedCost, double>;
  std::shared_ptr<const std::map<VertexId, uint64_t>> position;
  static double Cost(const Message& m) {
    if constexpr (kBoxed) {
      return m.cost;
    } else {
      return m;
    }
  }
  static void Combine(Message& into, const Message& m) {
    if (m < into) into = m;
  }
  static bool Improves(double value, const Message& m) { return Cost(m) < value; }
  static Message Along(const Message& m, double w) { return Message{Cost(m) + w}; }
  double Init(const Context<WeightedMinProgram>& ctx) const {
    const uint64_t pos = position->at(ctx.id());
    return pos % 97 == 0 ? static_cast<double>(pos % 5) : std::numeric_limits<double>::infinity();
  }
  void Compute(Context<WeightedMinProgram>& ctx, std::span<const Message> messages) const {
    const bool start = ctx.superstep() == 0 && !std::isinf(ctx.value());
    if (start || (!messages.empty() && Cost(messages[0]) < ctx.value())) {
      if (!start) ctx.value() = Cost(messages[0]);
      ctx.SendToAllNeighbors(Message{ctx.value()});
    }
    ctx.VoteToHalt();
  }
};

// Weighted graphs for the programs above: directed and symmetric, weights 0 to `weights` - 1.
std::vector<GraphInput> WeightedGraphs(uint32_t vertices, uint32_t edges, uint32_t seed,
                                       uint32_t weights) {
  GraphInput directed = RandomGraph(vertices, edges, seed);
  for (size_t e = 0; e < directed.src.size(); ++e) {
    directed.weights.push_back(static_cast<double>(e % weights));
  }
  GraphInput symmetric = directed;
  MakeSymmetric(symmetric);
  return {directed, symmetric};
}

TEST(MinBroadcastAlongTest, PushPullOrChosenGiveTheSameAnswer) {
  static_assert(PushesInPlace<WeightedMinProgram<>>());
  static_assert(!PushesInPlace<WeightedMinProgram<false, true>>());
  for (const GraphInput& input : WeightedGraphs(3000, 4500, 17, 7)) {
    SCOPED_TRACE(input.symmetric ? "symmetric" : "directed");
    const auto want = MinHopsOracle<double>(input, false);
    EXPECT_EQ(ExpectEveryWay(WeightedMinProgram<>{.position = Positions(input)}, input, want), 0u);
    EXPECT_EQ(
        ExpectEveryWay(WeightedMinProgram<false, true>{.position = Positions(input)}, input, want),
        0u);
  }
}

// Taking its messages in any order, a frontier too large to push goes out least values first
// and the rest is held back to later supersteps: the same values on 1 to 4 parts, in place or
// binned, and the engine did hold back.
TEST(MinBroadcastAlongTest, HeldBackValuesGiveTheSameAnswer) {
  for (const GraphInput& input : WeightedGraphs(3000, 12000, 19, 50)) {
    SCOPED_TRACE(input.symmetric ? "symmetric" : "directed");
    const auto want = MinHopsOracle<double>(input, false);
    EXPECT_GT(ExpectEveryWay(WeightedMinProgram<true>{.position = Positions(input)}, input, want),
              0u);
    EXPECT_GT(
        ExpectEveryWay(WeightedMinProgram<true, true>{.position = Positions(input)}, input, want),
        0u);
  }
}

// A double -0 and +0 compare equal; a vertex reached by both gets +0 whatever the direction.
struct SignedZeroProgram {
  static constexpr bool kBroadcast = true;
  using VertexValue = double;
  using EdgeValue = NoValue;
  using Message = double;
  std::shared_ptr<const std::map<VertexId, uint64_t>> position;
  static void Combine(double& into, const double& m) { into = std::min(into, m); }
  static bool Improves(double value, double m) { return m < value; }
  double Init(const Context<SignedZeroProgram>&) const {
    return std::numeric_limits<double>::infinity();
  }
  void Compute(Context<SignedZeroProgram>& ctx, std::span<const double> messages) const {
    if (ctx.superstep() == 0) {
      ctx.SendToAllNeighbors(position->at(ctx.id()) % 2 == 0 ? -0.0 : 0.0);
    } else if (!messages.empty() && messages[0] < ctx.value()) {
      ctx.value() = messages[0];
    }
    ctx.VoteToHalt();
  }
};

TEST(MinBroadcastZeroTest, MinusZeroAndZeroGiveZero) {
  using Direction = Engine<SignedZeroProgram>::Direction;
  GraphInput input = RandomGraph(200, 600, 3);
  MakeSymmetric(input);
  for (Direction d : {Direction::kPush, Direction::kPull}) {
    Cluster<SignedZeroProgram> cluster(SignedZeroProgram{.position = Positions(input)}, input, 1,
                                       false);
    cluster.engine(0).SetDirection(d);
    ASSERT_TRUE(cluster.RunToCompletion().ok());
    for (const auto& [name, value] : cluster.Values()) {
      if (std::isinf(value)) continue;
      EXPECT_EQ(value, 0.0) << name;
      EXPECT_FALSE(std::signbit(value)) << name;
    }
  }
}

// Connected, a message along an edge costs its payload and at most a byte or two of position (none
// when every remote vertex gets one, an eighth of a byte a slot for a bitmap); by UUID it costs 16
// bytes more.
TEST(RelayBytesTest, AboutOnePositionByteOrTwoPerMessage) {
  const GraphInput input = RandomGraph(4000, 16000, 3);
  auto position = Positions(input);
  struct Case {
    uint64_t every;
    bool connect;
    PositionCoding coding;
    double low, high;  // bytes per message
  };
  for (const Case& c :
       {Case{1, false, PositionCoding::kNone, 24, 24},
        Case{50, false, PositionCoding::kNone, 24, 24}, Case{1, true, PositionCoding::kAll, 8, 8},
        Case{3, true, PositionCoding::kBitmap, 8.05, 8.5},
        Case{50, true, PositionCoding::kDeltas, 9, 10}}) {
    SCOPED_TRACE(::testing::Message() << "every " << c.every << (c.connect ? ", connected" : ""));
    Cluster<SumProgram<true>> cluster(SumProgram<true>{.position = position, .every = c.every},
                                      input, 3, c.connect);
    ASSERT_TRUE(cluster.StepOk());
    ASSERT_GT(cluster.relayed_messages(), 150u);
    uint64_t bytes = 0;
    for (uint32_t p = 0; p < 3; ++p) {
      for (const RelayBatch& batch : cluster.relayer(p).sent()) {
        EXPECT_EQ(batch.coding, c.coding);
        bytes += batch.content_bytes();
      }
    }
    EXPECT_EQ(bytes, cluster.relayed_bytes());
    const double per_message =
        static_cast<double>(bytes) / static_cast<double>(cluster.relayed_messages());
    EXPECT_GE(per_message, c.low);
    EXPECT_LE(per_message, c.high);
  }
}

// Every vertex sends its value + 1 by ID to the vertex named next in `ring`, and with
// `along_edges` also along its out-edges, so that a batch has both sections.
struct RingProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static void Combine(uint64_t& into, const uint64_t& m) { into += m; }

  std::shared_ptr<const std::map<VertexId, VertexId>> next;
  bool along_edges = false;

  void Compute(Context<RingProgram>& ctx, std::span<const uint64_t> messages) const {
    ctx.VoteToHalt();
    for (uint64_t m : messages) ctx.value() += m;
    if (ctx.superstep() >= 3) return;
    ctx.SendTo(next->at(ctx.id()), ctx.value() + 1);
    if (along_edges) {
      for (uint32_t slot : ctx.out_slots()) ctx.Send(slot, ctx.value() + 1);
    }
  }
};

std::shared_ptr<const std::map<VertexId, VertexId>> Ring(const std::vector<std::string>& names) {
  auto next = std::make_shared<std::map<VertexId, VertexId>>();
  for (size_t i = 0; i < names.size(); ++i) {
    (*next)[VertexIdFromExternal(names[i])] = VertexIdFromExternal(names[(i + 1) % names.size()]);
  }
  return next;
}

TEST(RelayerTest, SendToIdAcrossPartitions) {
  const std::vector<std::string> names = bsptest::Numbered(12);
  const GraphInput input = MakeInput({}, names);
  for (bool connect : {false, true}) {
    Cluster<RingProgram> cluster(RingProgram{.next = Ring(names)}, input, 3, connect);
    ASSERT_TRUE(cluster.RunToCompletion().ok());
    uint64_t remote = 0;
    for (uint32_t p = 0; p < 3; ++p) {
      for (const RelayBatch& batch : cluster.relayer(p).sent()) {
        EXPECT_EQ(batch.coding, PositionCoding::kNone);  // no edges: by ID only
        remote += batch.ids.size();
      }
    }
    EXPECT_GT(remote, 0u);
    // Each vertex gets 1, 2 and 4 in supersteps 1, 2 and 3 (its predecessor's value + 1).
    for (const auto& [name, value] : cluster.Values()) EXPECT_EQ(value, 7u) << name;
  }
}

TEST(RelayerTest, BatchWithPositionsAndIdsEqualsWholeGraphRun) {
  GraphInput input = RandomGraph(60, 200, 13);
  const RingProgram program{.next = Ring(input.external_ids), .along_edges = true};
  Cluster<RingProgram> whole(program, input, 1, false);
  ASSERT_TRUE(whole.RunToCompletion().ok());
  Cluster<RingProgram> cluster(program, input, 3, true);
  ASSERT_TRUE(cluster.RunToCompletion().ok());
  EXPECT_EQ(cluster.Values(), whole.Values());
  bool both = false;
  for (uint32_t p = 0; p < 3; ++p) {
    for (const RelayBatch& batch : cluster.relayer(p).sent()) {
      both = both || (batch.coding != PositionCoding::kNone && !batch.ids.empty());
    }
  }
  EXPECT_TRUE(both);
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

// --- Batches by position: malformed ones, and the set-up -----------------------------------------

// A malformed batch from partition 0 to a connected partition 1 fails partition 1's next
// superstep with `code` and a message naming partition 0 and containing `words`.
struct BadBatch {
  std::string name;
  std::function<void(RelayBatch&, uint32_t size)> make;  // size: partition 0's list for 1
  absl::StatusCode code;
  std::string words;
};

// Makes `batch` bad as `c` says (for a list of `size`), hands it to partition 1 of `cluster` and
// expects its next superstep to fail as `c` says.
template <class P>
void ExpectFails(Cluster<P>& cluster, RelayBatch batch, uint32_t size, const BadBatch& c) {
  c.make(batch, size);
  ASSERT_TRUE(cluster.engine(1).AcceptRelayed(std::move(batch)).ok());
  std::atomic<bool> cancel{false};
  const absl::Status st = cluster.engine(1).RunSuperstep(1, cancel).status();
  EXPECT_EQ(st.code(), c.code) << st;
  EXPECT_THAT(st.message(), AllOf(HasSubstr("partition 0"), HasSubstr(c.words)));
}

TEST(MalformedBatchTest, EveryMalformedBatchFailsNamingTheSender) {
  auto message = [](RelayBatch& b, uint64_t x) { Codec<uint64_t>::Encode(x, b.payload); };
  const std::vector<BadBatch> cases = {
      {"position beyond the list",
       [&](RelayBatch& b, uint32_t size) {
         b.coding = PositionCoding::kDeltas;
         AppendVarint(size, b.positions);
         message(b, 1);
       },
       absl::StatusCode::kDataLoss, "beyond the list"},
      {"a delta that runs past the list",
       [&](RelayBatch& b, uint32_t size) {
         b.coding = PositionCoding::kDeltas;
         AppendVarint(size - 1, b.positions);
         AppendVarint(1, b.positions);
         message(b, 1);
         message(b, 2);
       },
       absl::StatusCode::kDataLoss, "beyond the list"},
      {"a cut varint",
       [&](RelayBatch& b, uint32_t) {
         b.coding = PositionCoding::kDeltas;
         b.positions = "\x80";
         message(b, 1);
       },
       absl::StatusCode::kDataLoss, "varint"},
      {"a bitmap of the wrong size",
       [&](RelayBatch& b, uint32_t size) {
         b.coding = PositionCoding::kBitmap;
         b.positions.assign((size + 7) / 8 + 1, '\0');
       },
       absl::StatusCode::kDataLoss, "bitmap"},
      {"bytes after all",
       [&](RelayBatch& b, uint32_t size) {
         b.coding = PositionCoding::kAll;
         b.positions = "x";
         for (uint32_t i = 0; i < size; ++i) message(b, 1);
       },
       absl::StatusCode::kDataLoss, "after 'all'"},
      {"positions without a coding",
       [&](RelayBatch& b, uint32_t) {
         b.positions = "\x01";
         message(b, 1);
       },
       absl::StatusCode::kDataLoss, "without a coding"},
      {"an unknown coding",
       [&](RelayBatch& b, uint32_t) {
         b.coding = static_cast<PositionCoding>(9);
         message(b, 1);
       },
       absl::StatusCode::kDataLoss, "unknown coding 9"},
      {"fewer messages than positions",
       [&](RelayBatch& b, uint32_t size) {
         b.coding = PositionCoding::kAll;
         for (uint32_t i = 0; i + 1 < size; ++i) message(b, 1);
       },
       absl::StatusCode::kDataLoss, "cannot decode a message relayed from partition 0"},
      {"trailing bytes",
       [&](RelayBatch& b, uint32_t size) {
         b.coding = PositionCoding::kAll;
         for (uint32_t i = 0; i < size; ++i) message(b, 1);
         b.payload += "x";
       },
       absl::StatusCode::kDataLoss, "trailing bytes in a batch relayed from partition 0"},
      {"published values for a program of messages",
       [&](RelayBatch& b, uint32_t size) {
         b.published = true;
         b.coding = PositionCoding::kAll;
         for (uint32_t i = 0; i < size; ++i) message(b, 1);
       },
       absl::StatusCode::kInvalidArgument, "wrong kind"},
  };
  const GraphInput input = RandomGraph(60, 200, 7);
  for (const BadBatch& c : cases) {
    SCOPED_TRACE(c.name);
    Cluster<SumProgram<true>> cluster(SumProgram<true>{.position = Positions(input)}, input, 2,
                                      true);
    const auto& begin = cluster.engine(0).topology().remote_partition_begin();
    const uint32_t size = begin[2] - begin[1];
    ASSERT_GT(size, 1u);
    RelayBatch batch{.superstep = 0, .from_partition = 0, .to_partition = 1};
    ExpectFails(cluster, std::move(batch), size, c);
  }
}

TEST(MalformedBatchTest, BitmapBitBeyondTheList) {
  const GraphInput input = RandomGraph(60, 200, 7);
  Cluster<PublishProgram> cluster(PublishProgram{.position = Positions(input)}, input, 2, true);
  // Partition 0's boundary list for partition 1 has as many entries as partition 1 has remote
  // in-neighbours from it; a bitmap's padding bits must stay clear.
  const Topology& topo = cluster.engine(1).topology();
  std::set<uint32_t> sources;
  for (uint32_t v = 0; v < topo.num_local(); ++v) {
    for (uint32_t slot : topo.in_slots(v)) {
      if (!topo.IsLocal(slot) && topo.remote_partition(slot - topo.num_local()) == 0) {
        sources.insert(slot);
      }
    }
  }
  const uint32_t size = static_cast<uint32_t>(sources.size());
  ASSERT_GT(size, 0u);
  const uint32_t padded = (size + 7) / 8 * 8;
  RelayBatch batch{.superstep = 0, .published = true, .from_partition = 0, .to_partition = 1};
  batch.coding = PositionCoding::kBitmap;
  batch.positions.assign(padded / 8, '\0');
  // The last bit of the last byte: beyond the list unless size is a multiple of 8, in which case
  // one byte too many is the error.
  if (padded == size) batch.positions.push_back('\0');
  batch.positions.back() = static_cast<char>(0x80);
  Codec<uint64_t>::Encode(1, batch.payload);
  ASSERT_TRUE(cluster.engine(1).AcceptRelayed(std::move(batch)).ok());
  std::atomic<bool> cancel{false};
  const absl::Status st = cluster.engine(1).RunSuperstep(1, cancel).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << st;
  EXPECT_THAT(st.message(), HasSubstr("partition 0 relayed a batch with malformed positions"));
}

// On a symmetric graph every remote vertex of partition 0 is an in-neighbour in partition 1, so a
// batch of every value is decoded in place into a run of partition 1's remote table: a malformed
// one fails as it does on the general path.
TEST(MalformedBatchTest, EveryValueOfARunDecodedInPlaceOrFailsNamingTheSender) {
  GraphInput input = RandomGraph(60, 200, 7);
  MakeSymmetric(input);
  auto value = [](RelayBatch& b, uint64_t x) { Codec<uint64_t>::Encode(x, b.payload); };
  const std::vector<BadBatch> cases = {
      {"bytes after all",
       [&](RelayBatch& b, uint32_t size) {
         b.positions = "x";
         for (uint32_t i = 0; i < size; ++i) value(b, 1);
       },
       absl::StatusCode::kDataLoss, "after 'all'"},
      {"fewer values than the list",
       [&](RelayBatch& b, uint32_t size) {
         for (uint32_t i = 0; i + 1 < size; ++i) value(b, 1);
       },
       absl::StatusCode::kDataLoss, "cannot decode a value relayed from partition 0"},
      {"trailing bytes",
       [&](RelayBatch& b, uint32_t size) {
         for (uint32_t i = 0; i < size; ++i) value(b, 1);
         b.payload += "x";
       },
       absl::StatusCode::kDataLoss, "trailing bytes in a batch relayed from partition 0"},
  };
  for (const BadBatch& c : cases) {
    SCOPED_TRACE(c.name);
    Cluster<PublishProgram> cluster(PublishProgram{.position = Positions(input)}, input, 2, true);
    const Topology& topo = cluster.engine(1).topology();
    const auto& begin = topo.remote_partition_begin();
    const uint32_t size = begin[1] - begin[0];
    ASSERT_GT(size, 1u);
    // Every remote vertex of partition 0 is a source here: the list is the table's run.
    std::set<uint32_t> sources;
    for (uint32_t v = 0; v < topo.num_local(); ++v) {
      for (uint32_t slot : topo.in_slots(v)) {
        if (!topo.IsLocal(slot)) sources.insert(slot - topo.num_local());
      }
    }
    ASSERT_EQ(sources.size(), size);
    RelayBatch batch{.superstep = 0, .published = true, .from_partition = 0, .to_partition = 1};
    batch.coding = PositionCoding::kAll;
    ExpectFails(cluster, std::move(batch), size, c);
  }
}

TEST(MalformedBatchTest, PositionsFromAPartitionWithoutSetUp) {
  const GraphInput input = RandomGraph(60, 200, 7);
  for (uint32_t from : {0u, 1u, 7u}) {
    SCOPED_TRACE(from);
    // Connected, partition 1 knows no positions of itself or of a partition 7; not connected,
    // of nobody.
    for (bool connect : {false, true}) {
      if (connect == (from == 0)) continue;
      Cluster<SumProgram<true>> cluster(SumProgram<true>{.position = Positions(input)}, input, 2,
                                        connect);
      RelayBatch batch{.superstep = 0, .from_partition = from, .to_partition = 1};
      batch.coding = PositionCoding::kDeltas;
      AppendVarint(0, batch.positions);
      Codec<uint64_t>::Encode(1, batch.payload);
      ASSERT_TRUE(cluster.engine(1).AcceptRelayed(std::move(batch)).ok());
      std::atomic<bool> cancel{false};
      const absl::Status st = cluster.engine(1).RunSuperstep(1, cancel).status();
      EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
      EXPECT_THAT(st.message(), HasSubstr(absl::StrCat("partition ", from,
                                                       " relayed a batch by "
                                                       "position, but partition 1")));
    }
  }
}

// ConnectPeers on every engine at once, each on its own thread; their statuses.
template <class P>
std::vector<absl::Status> ConnectAll(const std::vector<Engine<P>*>& engines, uint32_t group_size) {
  auto group = std::make_shared<test::ThreadExchangeGroup>(group_size);
  std::vector<absl::Status> status(engines.size());
  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < engines.size(); ++p) {
    threads.emplace_back([&, p] {
      test::ThreadExchange exchange(group, p);
      status[p] = engines[p]->ConnectPeers(exchange);
    });
  }
  for (auto& t : threads) t.join();
  return status;
}

// Two names: one that part 0 of a 2-way split owns, one that part 1 owns.
std::pair<std::string, std::string> OnePerPart(const partition::Range& split) {
  std::string in0, in1;
  for (const std::string& name : bsptest::Numbered(100)) {
    std::string& slot = bsptest::OwnerOf(split, name) == 0 ? in0 : in1;
    if (slot.empty()) slot = name;
  }
  return {in0, in1};
}

// The lists agreed when the relay is set up give the run the whole graph gives: for messages
// along edges in many small steps (1, 2 or 7 UUIDs per peer per step); for published values by
// their length and digest (the step does not apply).
TEST(ConnectPeersTest, ListsInManyStepsGiveTheWholeGraphsRun) {
  const GraphInput input = RandomGraph(300, 900, 5);
  for (size_t step : {size_t{1}, size_t{2}, size_t{7}}) {
    SCOPED_TRACE(step);
    const PublishProgram publish{.position = Positions(input), .every = 3};
    Cluster<PublishProgram> whole_publish(publish, input, 1, false);
    ASSERT_TRUE(whole_publish.RunToCompletion().ok());
    Cluster<PublishProgram> publish_cluster(publish, input, 4, false);
    ASSERT_TRUE(publish_cluster.Connect(step).ok());
    ASSERT_TRUE(publish_cluster.RunToCompletion().ok());
    EXPECT_EQ(publish_cluster.Values(), whole_publish.Values());
    for (uint32_t p = 0; p < 4; ++p) EXPECT_TRUE(publish_cluster.engine(p).connected());

    const SumProgram<true> sum{.position = Positions(input)};
    Cluster<SumProgram<true>> whole_sum(sum, input, 1, false);
    ASSERT_TRUE(whole_sum.RunToCompletion().ok());
    Cluster<SumProgram<true>> sum_cluster(sum, input, 3, false);
    ASSERT_TRUE(sum_cluster.Connect(step).ok());
    ASSERT_TRUE(sum_cluster.RunToCompletion().ok());
    EXPECT_EQ(sum_cluster.Values(), whole_sum.Values());
  }
}

TEST(ConnectPeersTest, AnEdgeToAVertexThePeerLacksFailsTheSetUpNamingBoth) {
  const partition::Range split = bsptest::Split(2);
  const auto [x, y] = OnePerPart(split);
  // Partition 0 sees an edge x -> y; partition 1 was built from an input without y.
  auto sender = MakeEngine(SumProgram<true>{}, MakeInput({{x, y}}), split, 0);
  auto receiver = MakeEngine(SumProgram<true>{}, MakeInput({}, {x}), split, 1);
  ASSERT_NE(sender, nullptr);
  ASSERT_NE(receiver, nullptr);
  const auto status = ConnectAll<SumProgram<true>>({sender.get(), receiver.get()}, 2);
  EXPECT_TRUE(status[0].ok()) << status[0];
  EXPECT_EQ(status[1].code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status[1].message(), AllOf(HasSubstr("partition 0 has an edge to vertex "),
                                         HasSubstr(ToString(VertexIdFromExternal(y))),
                                         HasSubstr("which partition 1 does not have")));
  EXPECT_FALSE(receiver->connected());
}

// A program that reads its neighbours' lists and degrees: their set-up is collective too.
struct NeighbourhoodProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static constexpr bool kNeighbourhood = true;
  static constexpr bool kNeighbourDegrees = true;
  void Compute(Context<NeighbourhoodProgram>& ctx, std::span<const uint64_t>) const {
    ctx.value() = ctx.neighbour_count() + ctx.degree();
    ctx.VoteToHalt();
  }
};

// A process that finds a bad relay list still takes the neighbours' collective steps before it
// fails, so its peer is not left waiting in them (the thread exchange has no abort: a process
// that skipped them would hang this test); the peer, sent nothing for its remote, fails too.
TEST(ConnectPeersTest, ABadListStillTakesPartInTheNeighboursSetUp) {
  const partition::Range split = bsptest::Split(2);
  const auto [x, y] = OnePerPart(split);
  auto sender = MakeEngine(NeighbourhoodProgram{}, MakeInput({{x, y}}), split, 0);
  auto receiver = MakeEngine(NeighbourhoodProgram{}, MakeInput({}, {x}), split, 1);
  ASSERT_NE(sender, nullptr);
  ASSERT_NE(receiver, nullptr);
  const auto status = ConnectAll<NeighbourhoodProgram>({sender.get(), receiver.get()}, 2);
  EXPECT_EQ(status[1].code(), absl::StatusCode::kNotFound) << status[1];
  EXPECT_EQ(status[0].code(), absl::StatusCode::kDataLoss) << status[0];
  EXPECT_THAT(status[0].message(), HasSubstr("partition 1 sent"));
}

TEST(ConnectPeersTest, BroadcastListsMustMatchTheInEdges) {
  const partition::Range split = bsptest::Split(2);
  const auto [x, y] = OnePerPart(split);
  PublishProgram program{.position = std::make_shared<std::map<VertexId, uint64_t>>()};
  {
    // Partition 0 would publish x to partition 1, which has no in-edge from x.
    auto sender = MakeEngine(program, MakeInput({{x, y}}), split, 0);
    auto receiver = MakeEngine(program, MakeInput({}, {x, y}), split, 1);
    const auto status = ConnectAll<PublishProgram>({sender.get(), receiver.get()}, 2);
    EXPECT_TRUE(status[0].ok()) << status[0];
    EXPECT_EQ(status[1].code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(status[1].message(),
                HasSubstr("partition 0 would send the values of 1 vertices, but partition 1 has 0 "
                          "remote in-neighbours in partition 0"));
    EXPECT_FALSE(receiver->connected());
  }
  {
    // As many vertices, but another one: partition 0 would publish x, and partition 1 has an
    // in-edge from x2 instead.
    std::string x2;
    for (const std::string& name : bsptest::Numbered(100)) {
      if (name != x && bsptest::OwnerOf(split, name) == 0) x2 = name;
    }
    ASSERT_FALSE(x2.empty());
    auto sender = MakeEngine(program, MakeInput({{x, y}}, {x2}), split, 0);
    auto receiver = MakeEngine(program, MakeInput({{x2, y}}, {x}), split, 1);
    const auto status = ConnectAll<PublishProgram>({sender.get(), receiver.get()}, 2);
    EXPECT_TRUE(status[0].ok()) << status[0];
    EXPECT_EQ(status[1].code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(status[1].message(),
                HasSubstr("partition 0 would send the values of 1 vertices that are not the 1 "
                          "remote in-neighbours partition 1 has in partition 0"));
    EXPECT_FALSE(receiver->connected());
  }
  {
    // Partition 1 has an in-edge from x that partition 0 does not know of.
    auto sender = MakeEngine(program, MakeInput({}, {x, y}), split, 0);
    auto receiver = MakeEngine(program, MakeInput({{x, y}}), split, 1);
    const auto status = ConnectAll<PublishProgram>({sender.get(), receiver.get()}, 2);
    EXPECT_TRUE(status[0].ok()) << status[0];
    EXPECT_EQ(status[1].code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(status[1].message(), HasSubstr("values of 0 vertices, but partition 1 has 1"));
  }
}

TEST(ConnectPeersTest, AnExchangeOfAnotherSizeIsRefusedBeforeAnyCollective) {
  const GraphInput input = RandomGraph(60, 200, 7);
  auto engine = MakeEngine(SumProgram<true>{}, input, bsptest::Split(2), 0);
  ASSERT_NE(engine, nullptr);
  auto group = std::make_shared<test::ThreadExchangeGroup>(3);
  test::ThreadExchange exchange(group, 0);
  const absl::Status st = engine->ConnectPeers(exchange);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("partition 0 of 2"));
}

// --- The codings ---------------------------------------------------------------------------------

std::vector<uint32_t> Walk(PositionCoding coding, const std::string& bytes, uint32_t size) {
  std::vector<uint32_t> out;
  const absl::Status st = ForEachPosition(coding, bytes, size, 0, [&](uint32_t position) {
    out.push_back(position);
    return absl::OkStatus();
  });
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

TEST(PositionCodingTest, PicksTheSmallestCodingAndRoundTrips) {
  struct Case {
    uint32_t size;
    std::vector<uint32_t> positions;
    PositionCoding coding;
    size_t bytes;
  };
  std::vector<uint32_t> all(100), every_other, sparse = {3, 5000, 9999};
  for (uint32_t i = 0; i < 100; ++i) all[i] = i;
  for (uint32_t i = 0; i < 100; i += 2) every_other.push_back(i);
  const std::vector<Case> cases = {
      {100, all, PositionCoding::kAll, 0},
      {100, every_other, PositionCoding::kBitmap, 13},
      {10000, sparse, PositionCoding::kDeltas, 1 + 2 + 2},
      {100, {}, PositionCoding::kNone, 0},
      {4, {1, 1, 2, 3}, PositionCoding::kDeltas, 4},  // a repeat: deltas, although dense
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.positions.size());
    std::string bytes = "stale";
    PositionWriter writer(bytes);
    for (uint32_t p : c.positions) writer.Add(p);
    EXPECT_EQ(writer.count(), c.positions.size());
    EXPECT_EQ(writer.Finish(c.size), c.coding);
    EXPECT_EQ(bytes.size(), c.bytes);
    EXPECT_EQ(Walk(c.coding, bytes, c.size), c.positions);
  }
  std::mt19937_64 rng(1);
  for (int round = 0; round < 200; ++round) {
    const uint32_t size = 1 + rng() % 3000;
    const uint32_t step = 1 + rng() % 40;
    std::vector<uint32_t> positions;
    for (uint32_t p = rng() % step; p < size; p += 1 + rng() % step) positions.push_back(p);
    std::string bytes;
    PositionWriter writer(bytes);
    for (uint32_t p : positions) writer.Add(p);
    const PositionCoding coding = writer.Finish(size);
    EXPECT_EQ(Walk(coding, bytes, size), positions);
    // Never more than the plain deltas, never more than a bitmap.
    EXPECT_LE(bytes.size(), (size + 7) / 8 + 0u);
  }
}

TEST(PositionCodingTest, Varints) {
  for (uint64_t x : {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{1} << 35, ~uint64_t{0}}) {
    std::string bytes;
    AppendVarint(x, bytes);
    bytes += "tail";
    std::string_view in = bytes;
    uint64_t y = 1;
    ASSERT_TRUE(ReadVarint(in, y));
    EXPECT_EQ(y, x);
    EXPECT_EQ(in, "tail");
  }
  uint64_t y;
  std::string_view overlong("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
  EXPECT_FALSE(ReadVarint(overlong, y));
  std::string_view cut("\xff\xff", 2);
  EXPECT_FALSE(ReadVarint(cut, y));
}

}  // namespace
}  // namespace lockstep::bsp
