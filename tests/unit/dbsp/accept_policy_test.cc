// The share of descriptors a process's servers give to connections (docs/design.md §11), as
// bookkeeping over fake descriptors and a fake clock.
#include "transport/accept_policy.h"

#include <gtest/gtest.h>

#include <string>

namespace lockstep::dbsp::transport {
namespace {

using Clock = AcceptPolicy::Clock;
using std::chrono::seconds;

std::string Peer(int port) { return "ipv4:127.0.0.1:" + std::to_string(port); }

TEST(AcceptPolicyTest, TheBudgetLeavesDescriptorsForTheProcessItself) {
  const AcceptBudget low = BudgetFor(1024);
  EXPECT_EQ(low.inbound, 896u);
  EXPECT_EQ(low.unadmitted, 448u);
  // At least 64 stay reserved, however small the limit.
  EXPECT_EQ(BudgetFor(256).inbound, 192u);
  EXPECT_EQ(BudgetFor(1u << 20).inbound, (1u << 20) - (1u << 17));
}

TEST(AcceptPolicyTest, UnadmittedConnectionsGetABoundedShareAndAreRefusedBeyondIt) {
  AcceptPolicy policy({/*inbound=*/10, /*unadmitted=*/4}, seconds(10));
  const Clock::time_point t0{};
  for (int fd = 0; fd < 4; ++fd) EXPECT_TRUE(policy.Accepted(fd, Peer(fd), t0).keep);
  // Full of silent connections still within their handshake's time: the next is refused.
  const AcceptPolicy::Verdict v = policy.Accepted(4, Peer(4), t0 + seconds(1));
  EXPECT_FALSE(v.keep);
  EXPECT_EQ(v.evict, -1);
  EXPECT_EQ(policy.counts().refused, 1u);
  // One that made an admitted call leaves the share: room for one more.
  policy.Admitted(Peer(2));
  EXPECT_TRUE(policy.Accepted(5, Peer(5), t0 + seconds(1)).keep);
  EXPECT_EQ(policy.counts().unadmitted, 4u);
  EXPECT_EQ(policy.counts().inbound, 5u);
  // As soon as silent ones close, new ones are taken again.
  EXPECT_TRUE(policy.Closed(0));
  EXPECT_TRUE(policy.Closed(1));
  EXPECT_FALSE(policy.Closed(77)) << "not a connection of ours";
  EXPECT_TRUE(policy.Accepted(0, Peer(100), t0 + seconds(2)).keep);
  EXPECT_TRUE(policy.Accepted(1, Peer(101), t0 + seconds(2)).keep);
  EXPECT_EQ(policy.counts().unadmitted, 4u);
}

TEST(AcceptPolicyTest, AdmittedConnectionsAreBoundedByTheWholeInboundShare) {
  AcceptPolicy policy({/*inbound=*/3, /*unadmitted=*/2}, seconds(10));
  const Clock::time_point t0{};
  for (int fd = 0; fd < 3; ++fd) {
    ASSERT_TRUE(policy.Accepted(fd, Peer(fd), t0).keep);
    policy.Admitted(Peer(fd));
  }
  EXPECT_EQ(policy.counts().unadmitted, 0u);
  EXPECT_FALSE(policy.Accepted(3, Peer(3), t0).keep);
}

TEST(AcceptPolicyTest, TheOldestIdleUnadmittedConnectionMakesRoomOnceItsHandshakeTimeIsUp) {
  AcceptPolicy policy({/*inbound=*/10, /*unadmitted=*/2}, seconds(10));
  const Clock::time_point t0{};
  ASSERT_TRUE(policy.Accepted(7, Peer(1), t0).keep);
  ASSERT_TRUE(policy.Accepted(8, Peer(2), t0 + seconds(3)).keep);
  EXPECT_FALSE(policy.Accepted(9, Peer(3), t0 + seconds(9)).keep);
  // Past the grace, the oldest (7) is evicted for the newcomer, then 8 for the next.
  AcceptPolicy::Verdict v = policy.Accepted(9, Peer(3), t0 + seconds(11));
  EXPECT_TRUE(v.keep);
  EXPECT_EQ(v.evict, 7);
  EXPECT_FALSE(policy.Accepted(10, Peer(4), t0 + seconds(12)).keep);
  v = policy.Accepted(10, Peer(4), t0 + seconds(14));
  EXPECT_TRUE(v.keep);
  EXPECT_EQ(v.evict, 8);
  EXPECT_EQ(policy.counts().evicted, 2u);
  // Evicted ones still hold their descriptors until they close.
  EXPECT_EQ(policy.counts().inbound, 4u);
  EXPECT_EQ(policy.counts().unadmitted, 2u);
  EXPECT_TRUE(policy.Closed(7));
  EXPECT_TRUE(policy.Closed(8));
  EXPECT_EQ(policy.counts().inbound, 2u);
  EXPECT_EQ(policy.counts().unadmitted, 2u);
}

TEST(AcceptPolicyTest, AReusedDescriptorIsANewConnection) {
  AcceptPolicy policy({/*inbound=*/10, /*unadmitted=*/1}, seconds(10));
  const Clock::time_point t0{};
  ASSERT_TRUE(policy.Accepted(5, Peer(1), t0).keep);
  policy.Closed(5);
  ASSERT_TRUE(policy.Accepted(5, Peer(2), t0 + seconds(9)).keep);
  // The stale queue entry for the first 5 does not make the second evictable early.
  EXPECT_FALSE(policy.Accepted(6, Peer(3), t0 + seconds(11)).keep);
  const AcceptPolicy::Verdict v = policy.Accepted(6, Peer(3), t0 + seconds(20));
  EXPECT_TRUE(v.keep);
  EXPECT_EQ(v.evict, 5);
  // The first connection's peer name is gone with it; admitting it changes nothing.
  policy.Admitted(Peer(1));
  EXPECT_EQ(policy.counts().unadmitted, 1u);
}

TEST(AcceptPolicyTest, GrpcPeerNamesAreMadeCanonical) {
  EXPECT_EQ(CanonicalPeer("ipv6:%5B::1%5D:5000"), "ipv6:[::1]:5000");
  EXPECT_EQ(CanonicalPeer("ipv6:[::1]:5000"), "ipv6:[::1]:5000");
  EXPECT_EQ(CanonicalPeer("ipv4:10.0.0.1:80"), "ipv4:10.0.0.1:80");
}

}  // namespace
}  // namespace lockstep::dbsp::transport
