// The three message strategies of broadcast programs (bsp/engine/sum_pull.h, min_broadcast.h,
// gather.h), each driven directly on a hand-drawn graph, with no driver and no Compute: values
// published by hand from a block, their delivery, which vertices wake, and the relay of published
// values out of one part and into another, by UUID and by position.
//
//   a -> b, a -> c, b -> c, c -> a, d -> c, e -> d; f has no edge
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "lockstep/bsp/engine/context.h"
#include "lockstep/bsp/engine/gather.h"
#include "lockstep/bsp/engine/min_broadcast.h"
#include "lockstep/bsp/engine/strategy.h"
#include "lockstep/bsp/engine/sum_pull.h"
#include "strategy_test_util.h"
#include "test_graphs.h"

namespace lockstep::bsp {
namespace {

using strategytest::Awake;
using strategytest::HaltAll;
using strategytest::Inboxes;
using strategytest::Parts;
using Messages = std::vector<uint64_t>;
using Wakes = std::map<std::string, bool>;

struct PullSum {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static constexpr bool kBroadcast = true;
  static void Combine(uint64_t& into, const uint64_t& m) { into += m; }
  void Compute(Context<PullSum>&, std::span<const uint64_t>) const {}
};
// Distances that start at 100: a message improves a vertex if it is below that.
struct Distance {
  uint64_t d = 100;
};
struct PullMin {
  using VertexValue = Distance;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static constexpr bool kBroadcast = true;
  static void Combine(uint64_t& into, const uint64_t& m) { into = std::min(into, m); }
  static bool Improves(const Distance& value, uint64_t m) { return m < value.d; }
  void Compute(Context<PullMin>&, std::span<const uint64_t>) const {}
};
// The same with a message the push cannot combine in place: offers go through the bins.
struct Boxed {
  uint64_t d = 0;
  bool operator<(const Boxed& other) const { return d < other.d; }
  bool operator==(const Boxed& other) const { return d == other.d; }
};
struct PullMinBoxed {
  using VertexValue = Distance;
  using EdgeValue = NoValue;
  using Message = Boxed;
  static constexpr bool kBroadcast = true;
  static void Combine(Boxed& into, const Boxed& m) { into = std::min(into, m); }
  static bool Improves(const Distance& value, const Boxed& m) { return m.d < value.d; }
  void Compute(Context<PullMinBoxed>&, std::span<const Boxed>) const {}
};
struct Labels {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static constexpr bool kBroadcast = true;
  void Compute(Context<Labels>&, std::span<const uint64_t>) const {}
};
static_assert(std::is_same_v<StrategyFor<PullSum>, SumPull<PullSum>>);
static_assert(std::is_same_v<StrategyFor<PullMin>, MinBroadcast<PullMin>>);
static_assert(PushesInPlace<PullMin>() && !PushesInPlace<PullMinBoxed>());
static_assert(std::is_same_v<StrategyFor<Labels>, Gather<Labels>>);

GraphInput Drawn() {
  return bsptest::MakeInput(
      {{"a", "b"}, {"a", "c"}, {"b", "c"}, {"c", "a"}, {"d", "c"}, {"e", "d"}}, {"f"});
}

uint64_t Value(uint64_t m) { return m; }
uint64_t Value(const Boxed& m) { return m.d; }

// Each vertex's messages as numbers.
template <class S>
std::map<std::string, Messages> Received(Parts<S>& parts) {
  std::map<std::string, Messages> out;
  for (auto& [name, messages] : Inboxes(parts)) {
    for (const auto& m : messages) out[name].push_back(Value(m));
    out[name];
  }
  return out;
}

// On one part, the vertices named publish the values given.
template <class S>
void Publish(Parts<S>& parts, const std::map<std::string, uint64_t>& values) {
  S& s = parts[0];
  for (const auto& [name, value] : values) {
    s.SendToAll(s.block(0), 0, parts.Find(name).second, typename S::Message{value});
  }
  StepStats stats;
  s.EndCompute(stats);
}

TEST(SumPullTest, PullsWhatInNeighboursPublishedWithAndWithoutReadingFlags) {
  Parts<SumPull<PullSum>> parts(PullSum{}, Drawn(), 1);
  // Every vertex with out-edges publishes: every vertex with in-edges has a message and wakes.
  HaltAll(parts);
  Publish(parts, {{"a", 1}, {"b", 2}, {"c", 4}, {"d", 8}, {"e", 16}});
  EXPECT_EQ(parts[0].block(0).sent, 6u);  // a value per out-edge
  parts[0].Deliver();
  EXPECT_EQ(Received(parts),
            (std::map<std::string, Messages>{
                {"a", {4}}, {"b", {1}}, {"c", {11}}, {"d", {16}}, {"e", {}}, {"f", {}}}));
  EXPECT_EQ(
      Awake(parts),
      (Wakes{{"a", true}, {"b", true}, {"c", true}, {"d", true}, {"e", false}, {"f", false}}));
  // Only a publishes: only its out-neighbours have a message and wake.
  HaltAll(parts);
  Publish(parts, {{"a", 32}});
  parts[0].Deliver();
  EXPECT_EQ(Received(parts),
            (std::map<std::string, Messages>{
                {"a", {}}, {"b", {32}}, {"c", {32}}, {"d", {}}, {"e", {}}, {"f", {}}}));
  EXPECT_EQ(
      Awake(parts),
      (Wakes{{"a", false}, {"b", true}, {"c", true}, {"d", false}, {"e", false}, {"f", false}}));
}

template <class P>
void ExpectMinDelivery(DeliveryDirection direction) {
  SCOPED_TRACE(static_cast<int>(direction));
  Parts<MinBroadcast<P>> parts(P{}, Drawn(), 1);
  MinBroadcast<P>& s = parts[0];
  s.SetDirection(direction);
  auto consume = [&] {
    for (uint32_t v = 0; v < s.topology().num_local(); ++v) s.Consume(v);
  };
  // c takes the least of 5, 7 and 200; b takes 5; nothing reaches a (c did not publish).
  HaltAll(parts);
  Publish(parts, {{"a", 5}, {"b", 7}, {"d", 200}});
  s.Deliver();
  EXPECT_EQ(Received(parts),
            (std::map<std::string, Messages>{
                {"a", {}}, {"b", {5}}, {"c", {5}}, {"d", {}}, {"e", {}}, {"f", {}}}));
  EXPECT_EQ(
      Awake(parts),
      (Wakes{{"a", false}, {"b", true}, {"c", true}, {"d", false}, {"e", false}, {"f", false}}));
  // A value that improves no vertex (200 against 100) is not delivered, and wakes no one.
  consume();
  HaltAll(parts);
  Publish(parts, {{"d", 200}});
  s.Deliver();
  EXPECT_EQ(Received(parts)["c"], Messages{});
  EXPECT_FALSE(Awake(parts)["c"]);
  const bool pushed = direction == DeliveryDirection::kPush;
  EXPECT_EQ(s.pushed_supersteps(), pushed ? 2u : 0u);
  EXPECT_EQ(s.pulled_supersteps(), pushed ? 0u : 2u);
}

TEST(MinBroadcastTest, DeliversOnlyTheLeastImprovingValuePushedOrPulled) {
  for (DeliveryDirection d : {DeliveryDirection::kPush, DeliveryDirection::kPull}) {
    ExpectMinDelivery<PullMin>(d);       // pushed in place
    ExpectMinDelivery<PullMinBoxed>(d);  // pushed through the bins
  }
}

TEST(GatherTest, GivesEachVertexItsInNeighboursValuesOfTheSuperstepBefore) {
  Parts<Gather<Labels>> parts(Labels{}, Drawn(), 1);
  HaltAll(parts);
  Publish(parts, {{"a", 1}, {"b", 2}, {"d", 4}});
  parts[0].Deliver();
  std::map<std::string, Messages> got = Received(parts);
  std::sort(got["c"].begin(), got["c"].end());
  EXPECT_EQ(got, (std::map<std::string, Messages>{
                     {"a", {}}, {"b", {1}}, {"c", {1, 2, 4}}, {"d", {}}, {"e", {}}, {"f", {}}}));
  // Every vertex with an edge to gather along wakes (its gather finds whether it has messages).
  EXPECT_EQ(
      Awake(parts),
      (Wakes{{"a", true}, {"b", true}, {"c", true}, {"d", true}, {"e", false}, {"f", false}}));
  // In in-edge order.
  const std::map<std::string, uint64_t> published = {{"a", 1}, {"b", 2}, {"d", 4}};
  const Topology& topo = parts[0].topology();
  Messages in_order;
  for (uint32_t slot : topo.in_slots(parts.Find("c").second)) {
    in_order.push_back(published.at(std::string(topo.external_id(slot))));
  }
  EXPECT_EQ(Inboxes(parts)["c"], in_order);
  // A superstep in which no one published: no values, no one woken.
  HaltAll(parts);
  Publish(parts, {});
  parts[0].Deliver();
  for (const auto& [name, messages] : Received(parts)) EXPECT_TRUE(messages.empty()) << name;
  for (const auto& [name, awake] : Awake(parts)) EXPECT_FALSE(awake) << name;
}

// On 2 parts, every vertex with out-edges publishes its global index + 1: each vertex receives
// (combined) what its in-neighbours published, wherever they are, and each value crosses once to
// each other part with an out-neighbour of its vertex.
template <class S>
void ExpectRelayed(bool connect) {
  SCOPED_TRACE(connect ? "by position" : "by UUID");
  const GraphInput input = Drawn();
  Parts<S> parts(typename S::Program{}, input, 2);
  if (connect) {
    ASSERT_TRUE(parts.Connect().ok());
  }
  HaltAll(parts);
  std::map<std::string, Messages> want;
  for (const std::string& name : input.external_ids) want[name] = {};
  std::vector<std::map<std::string, bool>> crossing(2);  // by part, the vertices whose values go
  for (size_t e = 0; e < input.src.size(); ++e) {
    const std::string& from = input.external_ids[input.src[e]];
    const std::string& to = input.external_ids[input.dst[e]];
    want[to].push_back(input.src[e] + 1);
    const uint32_t p = parts.Find(from).first;
    if (parts.Find(to).first != p) crossing[p][from] = true;
  }
  for (uint32_t p = 0; p < 2; ++p) {
    S& s = parts[p];
    for (uint32_t v = 0; v < s.topology().num_local(); ++v) {
      if (s.topology().out_degree(v) == 0) continue;
      s.SendToAll(s.block(0), 0, v, typename S::Message{s.topology().global_index(v) + 1});
    }
    StepStats stats;
    s.EndCompute(stats);
  }
  EXPECT_GT(parts.Relay(0), 0u);
  for (uint32_t p = 0; p < 2; ++p) {
    EXPECT_EQ(parts[p].relay_out().TakeMessages(), crossing[p].size()) << "part " << p;
    parts[p].Deliver();
  }
  std::map<std::string, Messages> got = Received(parts);
  for (auto& [name, messages] : want) {
    if constexpr (std::is_same_v<S, SumPull<PullSum>>) {
      uint64_t sum = 0;
      for (uint64_t m : messages) sum += m;
      messages = sum == 0 ? Messages{} : Messages{sum};
    } else if constexpr (std::is_same_v<S, MinBroadcast<PullMin>>) {
      if (!messages.empty()) messages = {*std::min_element(messages.begin(), messages.end())};
    }
    std::sort(messages.begin(), messages.end());
    std::sort(got[name].begin(), got[name].end());
    EXPECT_EQ(got[name], messages) << name;
  }
}

TEST(SumPullTest, RelaysEachValueOncePerPartWithAnOutNeighbour) {
  ExpectRelayed<SumPull<PullSum>>(false);
  ExpectRelayed<SumPull<PullSum>>(true);
}

TEST(MinBroadcastTest, RelaysEachValueOncePerPartWithAnOutNeighbour) {
  ExpectRelayed<MinBroadcast<PullMin>>(false);
  ExpectRelayed<MinBroadcast<PullMin>>(true);
}

TEST(GatherTest, RelaysEachValueOncePerPartWithAnOutNeighbour) {
  ExpectRelayed<Gather<Labels>>(false);
  ExpectRelayed<Gather<Labels>>(true);
}

}  // namespace
}  // namespace lockstep::bsp
