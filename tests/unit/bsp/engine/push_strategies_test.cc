// The two message strategies of programs that send messages (bsp/engine/combined_inbox.h,
// message_lists.h), each driven directly on a hand-drawn graph, with no driver and no Compute:
// sends made by hand from a block, delivery into the inbox, which vertices wake, and the relay out
// of one part and into another, by UUID and by position.
//
//   a -> b, a -> c, b -> c, c -> a, d -> c, e -> d; f has no edge
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "lockstep/bsp/engine/combined_inbox.h"
#include "lockstep/bsp/engine/context.h"
#include "lockstep/bsp/engine/message_lists.h"
#include "lockstep/bsp/engine/strategy.h"
#include "strategy_test_util.h"
#include "test_graphs.h"

namespace lockstep::bsp {
namespace {

using strategytest::Awake;
using strategytest::HaltAll;
using strategytest::Inboxes;
using strategytest::Parts;
using Messages = std::vector<uint64_t>;

struct Summing {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static void Combine(uint64_t& into, const uint64_t& m) { into += m; }
  void Compute(Context<Summing>&, std::span<const uint64_t>) const {}
};
struct Listing {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  void Compute(Context<Listing>&, std::span<const uint64_t>) const {}
};
// Summing whose messages add up in place (AddsInPlace): the same strategy, with no envelope for a
// local target.
struct SummingInPlace : Summing {
  static constexpr bool kAddsInPlace = true;
  void Compute(Context<SummingInPlace>&, std::span<const uint64_t>) const {}
};
static_assert(std::is_same_v<StrategyFor<Summing>, CombinedInbox<Summing>>);
static_assert(std::is_same_v<StrategyFor<SummingInPlace>, CombinedInbox<SummingInPlace>>);
static_assert(AddsInPlace<SummingInPlace>() && !AddsInPlace<Summing>());
static_assert(std::is_same_v<StrategyFor<Listing>, MessageLists<Listing>>);

GraphInput Drawn() {
  return bsptest::MakeInput(
      {{"a", "b"}, {"a", "c"}, {"b", "c"}, {"c", "a"}, {"d", "c"}, {"e", "d"}}, {"f"});
}

// On one part: a sends 1 to its out-neighbours, then 10 to c along its edge; d sends 100.
template <class S>
void SendByHand(Parts<S>& parts) {
  S& s = parts[0];
  auto& block = s.block(0);
  const uint32_t a = parts.Find("a").second, c = parts.Find("c").second;
  s.SendToAll(block, 0, a, 1);
  s.Send(block, c, 10);
  s.SendToAll(block, 0, parts.Find("d").second, 100);
  EXPECT_EQ(block.sent, 4u);
}

// After SendByHand and a delivery under a sum: b got 1, c 1 + 10 + 100; only they are awake.
template <class S>
void ExpectCombinedByHand(Parts<S>& parts) {
  EXPECT_EQ(Inboxes(parts),
            (std::map<std::string, Messages>{
                {"a", {}}, {"b", {1}}, {"c", {111}}, {"d", {}}, {"e", {}}, {"f", {}}}));
  EXPECT_EQ(Awake(parts),
            (std::map<std::string, bool>{
                {"a", false}, {"b", true}, {"c", true}, {"d", false}, {"e", false}, {"f", false}}));
}

TEST(CombinedInboxTest, DeliversOneCombinedMessagePerTargetAndWakesOnlyTheTargets) {
  Parts<CombinedInbox<Summing>> parts(Summing{}, Drawn(), 1);
  HaltAll(parts);
  SendByHand(parts);
  parts[0].Deliver();
  ExpectCombinedByHand(parts);
  // A vertex that ran drops its message; the next delivery brings only new ones.
  const uint32_t c = parts.Find("c").second;
  parts[0].Consume(c);
  EXPECT_TRUE(parts[0].MessagesOf(0, c).empty());
  parts[0].Send(parts[0].block(0), c, 5);
  parts[0].Deliver();
  EXPECT_EQ(Inboxes(parts)["c"], Messages{5});
}

TEST(CombinedInboxTest, AddsInPlaceDeliversTheSameSumsWithNoEnvelope) {
  Parts<CombinedInbox<SummingInPlace>> parts(SummingInPlace{}, Drawn(), 1);
  HaltAll(parts);
  SendByHand(parts);
  for (const auto& bin : parts[0].block(0).bins) EXPECT_TRUE(bin.empty());
  parts[0].Deliver();
  ExpectCombinedByHand(parts);
  // The sums start again from nothing; a relayed message (the last block's bins) adds to them.
  const uint32_t c = parts.Find("c").second, b = parts.Find("b").second;
  parts[0].Consume(c);
  parts[0].Consume(b);
  parts[0].Accept(c, 7);  // as relay_in.h hands a relayed message over: into a bin
  size_t binned = 0;
  for (const auto& bin : parts[0].block(parts[0].num_blocks()).bins) binned += bin.size();
  EXPECT_EQ(binned, 1u);
  parts[0].Send(parts[0].block(0), c, 5);
  parts[0].Deliver();
  EXPECT_EQ(Inboxes(parts)["c"], Messages{12});
  EXPECT_TRUE(Inboxes(parts)["b"].empty());
}

TEST(MessageListsTest, DeliversEveryMessageInSendingOrderAndWakesOnlyTheTargets) {
  Parts<MessageLists<Listing>> parts(Listing{}, Drawn(), 1);
  HaltAll(parts);
  SendByHand(parts);
  parts[0].Deliver();
  EXPECT_EQ(Inboxes(parts),
            (std::map<std::string, Messages>{
                {"a", {}}, {"b", {1}}, {"c", {1, 10, 100}}, {"d", {}}, {"e", {}}, {"f", {}}}));
  EXPECT_EQ(Awake(parts),
            (std::map<std::string, bool>{
                {"a", false}, {"b", true}, {"c", true}, {"d", false}, {"e", false}, {"f", false}}));
  // A vertex that ran drops its messages; relayed ones (the last block) come after local ones.
  const uint32_t c = parts.Find("c").second;
  parts[0].Consume(c);
  EXPECT_TRUE(parts[0].MessagesOf(0, c).empty());
  parts[0].Send(parts[0].block(parts[0].num_blocks()), c, 7);
  parts[0].Send(parts[0].block(0), c, 5);
  parts[0].Deliver();
  EXPECT_EQ(Inboxes(parts)["c"], (Messages{5, 7}));
}

// On 2 parts, every vertex sends its global index + 1 to its out-neighbours: each vertex receives
// what its in-neighbours sent, wherever they are, and a part relays to another part one message
// per remote target (combined) or one per edge (lists).
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
  std::vector<uint64_t> relayed(2, 0);
  std::vector<std::map<std::string, bool>> remote_targets(2);
  for (size_t e = 0; e < input.src.size(); ++e) {
    const std::string& from = input.external_ids[input.src[e]];
    const std::string& to = input.external_ids[input.dst[e]];
    want[to].push_back(input.src[e] + 1);
    const uint32_t p = parts.Find(from).first;
    if (parts.Find(to).first != p) {
      ++relayed[p];
      remote_targets[p][to] = true;
    }
  }
  for (uint32_t p = 0; p < 2; ++p) {
    S& s = parts[p];
    for (uint32_t v = 0; v < s.topology().num_local(); ++v) {
      s.SendToAll(s.block(0), 0, v, s.topology().global_index(v) + 1);
    }
  }
  EXPECT_GT(parts.Relay(0), 0u);
  for (uint32_t p = 0; p < 2; ++p) {
    const uint64_t expect =
        HasCombiner<typename S::Program> ? remote_targets[p].size() : relayed[p];
    EXPECT_EQ(parts[p].relay_out().TakeMessages(), expect) << "part " << p;
    parts[p].Deliver();
  }
  std::map<std::string, Messages> got = Inboxes(parts);
  for (auto& [name, messages] : want) {
    std::sort(messages.begin(), messages.end());
    if constexpr (HasCombiner<typename S::Program>) {
      uint64_t sum = 0;
      for (uint64_t m : messages) sum += m;
      messages = sum == 0 ? Messages{} : Messages{sum};
    }
    std::sort(got[name].begin(), got[name].end());
    EXPECT_EQ(got[name], messages) << name;
    EXPECT_EQ(Awake(parts)[name], !messages.empty()) << name;
  }
}

TEST(CombinedInboxTest, RelaysOneCombinedMessagePerRemoteTarget) {
  ExpectRelayed<CombinedInbox<Summing>>(false);
  ExpectRelayed<CombinedInbox<Summing>>(true);
  ExpectRelayed<CombinedInbox<SummingInPlace>>(false);
  ExpectRelayed<CombinedInbox<SummingInPlace>>(true);
}

TEST(MessageListsTest, RelaysEveryMessage) {
  ExpectRelayed<MessageLists<Listing>>(false);
  ExpectRelayed<MessageLists<Listing>>(true);
}

}  // namespace
}  // namespace lockstep::bsp
