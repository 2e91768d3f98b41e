// The engine's neighbour piece (bsp/engine/neighbours.h), driven directly on a hand-drawn graph:
// in local mode it builds what the program declared before superstep 0; in a distributed job it
// builds it at set-up over the positions the peers agreed on, with each remote vertex's k from its
// owner.
//
//   a -> b, b -> a, a -> c, b -> c, c -> d, d -> d; e has no edge
#include "lockstep/bsp/engine/neighbours.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/bsp/engine/context.h"
#include "lockstep/bsp/engine/peers.h"
#include "test_graphs.h"
#include "util/thread_exchange.h"

namespace lockstep::bsp {
namespace {

struct Degrees {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static constexpr bool kNeighbourDegrees = true;
  void Compute(Context<Degrees>&, std::span<const uint64_t>) const {}
};
struct Lists {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static constexpr bool kNeighbourhood = true;
  void Compute(Context<Lists>&, std::span<const uint64_t>) const {}
};

GraphInput Drawn() {
  return bsptest::MakeInput(
      {{"a", "b"}, {"b", "a"}, {"a", "c"}, {"b", "c"}, {"c", "d"}, {"d", "d"}}, {"e"});
}

// k of each vertex: its distinct neighbours other than itself.
const std::map<std::string, uint32_t> kWant = {{"a", 2}, {"b", 2}, {"c", 3}, {"d", 1}, {"e", 0}};

template <class P>
Graph<NoValue> PartOf(const GraphInput& input, uint32_t parts, uint32_t p) {
  auto graph = Graph<NoValue>::Build(input, bsptest::Split(parts), p, NeedsInEdges<P>(false));
  if (!graph.ok()) throw std::runtime_error(graph.status().ToString());
  return *std::move(graph);
}

TEST(NeighboursTest, LocalModeBuildsDegreesAndListsBeforeSuperstepZero) {
  const GraphInput input = Drawn();
  const Graph<NoValue> degrees_graph = PartOf<Degrees>(input, 1, 0);
  const Graph<NoValue> lists_graph = PartOf<Lists>(input, 1, 0);
  Neighbours<Degrees> degrees;
  Neighbours<Lists> lists;
  ASSERT_TRUE(degrees.Prepare(degrees_graph.topology(), {}).ok());
  ASSERT_TRUE(lists.Prepare(lists_graph.topology(), {}).ok());
  for (const auto& [name, k] : kWant) {
    const uint32_t v = degrees_graph.topology().Find(VertexIdFromExternal(name));
    EXPECT_EQ(degrees.degree(v), k) << name;
    const uint32_t w = lists_graph.topology().Find(VertexIdFromExternal(name));
    EXPECT_EQ(lists.lists().degree(w), k) << name;
  }
  // A second Prepare keeps what was built.
  EXPECT_TRUE(degrees.Prepare(degrees_graph.topology(), {}).ok());
  EXPECT_EQ(degrees.degree(degrees_graph.topology().Find(VertexIdFromExternal("c"))), 3u);
}

TEST(NeighboursTest, ADistributedJobGivesEachSlotItsVertexsDegreeFromItsOwner) {
  const GraphInput input = Drawn();
  constexpr uint32_t kParts = 2;
  std::vector<Graph<NoValue>> graphs;
  for (uint32_t p = 0; p < kParts; ++p) graphs.push_back(PartOf<Degrees>(input, kParts, p));
  std::vector<Neighbours<Degrees>> neighbours(kParts);
  std::vector<Peers> peers(kParts);
  std::vector<absl::Status> status(kParts);
  auto group = std::make_shared<test::ThreadExchangeGroup>(kParts);
  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < kParts; ++p) {
    threads.emplace_back([&, p] {
      test::ThreadExchange exchange(group, p);
      auto agreed = peers[p].AgreeByIds(exchange, graphs[p].topology());
      status[p] = agreed.ok() ? *agreed : agreed.status();
      if (status[p].ok()) {
        status[p] = neighbours[p].Connect(graphs[p].topology(), exchange, peers[p].mirror());
      }
    });
  }
  for (auto& t : threads) t.join();
  uint32_t remote_slots = 0;
  for (uint32_t p = 0; p < kParts; ++p) {
    ASSERT_TRUE(status[p].ok()) << status[p];
    EXPECT_TRUE(peers[p].connected());
    const Topology& topo = graphs[p].topology();
    for (uint32_t v = 0; v < topo.num_local(); ++v) {
      EXPECT_EQ(neighbours[p].degree(v), kWant.at(std::string(topo.external_id(v))));
      for (uint32_t slot : topo.out_slots(v)) {
        if (topo.IsLocal(slot)) continue;
        ++remote_slots;
        const uint32_t r = slot - topo.num_local();
        const uint32_t q = topo.remote_partition(r);
        const uint32_t w = graphs[q].topology().Find(topo.remote_id(r));
        EXPECT_EQ(neighbours[p].degree(slot), neighbours[q].degree(w));
      }
    }
  }
  EXPECT_GT(remote_slots, 0u);
}

}  // namespace
}  // namespace lockstep::bsp
