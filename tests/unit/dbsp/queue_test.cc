// The bounded outbox of a stream: back-pressure, close and clear.
#include "lockstep/dbsp/queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lockstep::dbsp {
namespace {

using namespace std::chrono_literals;

// How long a call that must stay blocked is given before the test calls it blocked.
constexpr auto kBlocked = 100ms;

TEST(BoundedQueueTest, PopsInPushOrder) {
  BoundedQueue<std::string> q(3);
  EXPECT_TRUE(q.Push("a"));
  EXPECT_TRUE(q.Push("b"));
  EXPECT_TRUE(q.Push("c"));
  EXPECT_EQ(q.Pop(), "a");
  EXPECT_EQ(q.Pop(), "b");
  EXPECT_EQ(q.Pop(), "c");
}

TEST(BoundedQueueTest, MoveOnlyItems) {
  BoundedQueue<std::unique_ptr<int>> q(1);
  EXPECT_TRUE(q.Push(std::make_unique<int>(7)));
  auto item = q.Pop();
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(**item, 7);
}

TEST(BoundedQueueTest, PushBlocksWhenFullUntilAPop) {
  BoundedQueue<int> q(2);
  ASSERT_TRUE(q.Push(1));
  ASSERT_TRUE(q.Push(2));
  auto pushing = std::async(std::launch::async, [&] { return q.Push(3); });
  ASSERT_EQ(pushing.wait_for(kBlocked), std::future_status::timeout) << "a full queue took more";
  EXPECT_EQ(q.Pop(), 1);
  ASSERT_EQ(pushing.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(pushing.get());
  EXPECT_EQ(q.Pop(), 2);
  EXPECT_EQ(q.Pop(), 3);
}

TEST(BoundedQueueTest, PopBlocksWhenEmptyUntilAPush) {
  BoundedQueue<int> q(1);
  auto popping = std::async(std::launch::async, [&] { return q.Pop(); });
  ASSERT_EQ(popping.wait_for(kBlocked), std::future_status::timeout);
  ASSERT_TRUE(q.Push(5));
  ASSERT_EQ(popping.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(popping.get(), 5);
}

TEST(BoundedQueueTest, CloseWakesABlockedPushWhichDropsItsItem) {
  BoundedQueue<int> q(1);
  ASSERT_TRUE(q.Push(1));
  auto pushing = std::async(std::launch::async, [&] { return q.Push(2); });
  ASSERT_EQ(pushing.wait_for(kBlocked), std::future_status::timeout);
  q.Close();
  ASSERT_EQ(pushing.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(pushing.get());
  EXPECT_FALSE(q.Push(3)) << "a closed queue takes nothing";
  EXPECT_EQ(q.Pop(), 1) << "what was queued before the close is still delivered";
  EXPECT_EQ(q.Pop(), std::nullopt);
}

TEST(BoundedQueueTest, CloseDrainsThenEnds) {
  BoundedQueue<int> q(4);
  ASSERT_TRUE(q.Push(1));
  ASSERT_TRUE(q.Push(2));
  q.Close();
  EXPECT_EQ(q.Pop(), 1);
  EXPECT_EQ(q.Pop(), 2);
  EXPECT_EQ(q.Pop(), std::nullopt);
  EXPECT_EQ(q.Pop(), std::nullopt);
}

TEST(BoundedQueueTest, CloseWakesABlockedPop) {
  BoundedQueue<int> q(1);
  auto popping = std::async(std::launch::async, [&] { return q.Pop(); });
  ASSERT_EQ(popping.wait_for(kBlocked), std::future_status::timeout);
  q.Close();
  ASSERT_EQ(popping.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(popping.get(), std::nullopt);
}

TEST(BoundedQueueTest, ClearDropsQueuedItemsAndFreesSpace) {
  BoundedQueue<int> q(2);
  ASSERT_TRUE(q.Push(1));
  ASSERT_TRUE(q.Push(2));
  auto pushing = std::async(std::launch::async, [&] { return q.Push(3); });
  ASSERT_EQ(pushing.wait_for(kBlocked), std::future_status::timeout);
  q.Clear();
  ASSERT_EQ(pushing.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(pushing.get());
  EXPECT_EQ(q.Pop(), 3) << "1 and 2 were cleared";
  q.Close();
  EXPECT_EQ(q.Pop(), std::nullopt);
}

TEST(BoundedQueueTest, ManyProducersOneConsumerLoseNothing) {
  BoundedQueue<int> q(4);
  constexpr int kProducers = 4, kEach = 500;
  std::vector<std::future<void>> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.push_back(std::async(std::launch::async, [&q, p] {
      for (int i = 0; i < kEach; ++i) ASSERT_TRUE(q.Push(p * kEach + i));
    }));
  }
  std::vector<int> last(kProducers, -1);
  for (int n = 0; n < kProducers * kEach; ++n) {
    auto item = q.Pop();
    ASSERT_TRUE(item.has_value());
    const int p = *item / kEach;
    EXPECT_GT(*item, last[p]) << "one producer's items stay in order";
    last[p] = *item;
  }
  for (auto& f : producers) f.get();
  for (int p = 0; p < kProducers; ++p) EXPECT_EQ(last[p], p * kEach + kEach - 1);
}

}  // namespace
}  // namespace lockstep::dbsp
