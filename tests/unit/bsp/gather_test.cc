// Broadcast programs without a combiner (gathers, bsp/program.h): Compute receives the values its
// in-neighbours (and out-neighbours, both ways) published the superstep before, read where they
// were published. Checked against a direct count on 1 to 3 parts, directed and undirected, when
// only some vertices publish (the flags are read) and when all do.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "test_graphs.h"

namespace lockstep::bsp {
namespace {

using bsptest::Edge;
using bsptest::MakeInput;

// Superstep 0: the vertices whose global index is a multiple of `every` publish it, and every
// vertex halts. Superstep 1: each vertex woken keeps the sum and the number of the values it
// received.
template <bool kBoth>
struct SumOfPublished {
  struct Value {
    uint64_t sum = 0;
    uint64_t count = 0;
    bool operator==(const Value&) const = default;
  };
  using VertexValue = Value;
  using EdgeValue = NoValue;
  using Message = uint32_t;
  static constexpr bool kBroadcast = true;
  static constexpr bool kBothDirections = kBoth;

  uint32_t every = 1;

  void Compute(Context<SumOfPublished>& ctx, std::span<const uint32_t> messages) const {
    if (ctx.superstep() == 0) {
      if (ctx.global_index() % every == 0) ctx.SendToAllNeighbors(ctx.global_index());
      ctx.VoteToHalt();  // superstep 1 runs only the vertices the engine wakes
      return;
    }
    for (uint32_t m : messages) ctx.value().sum += m;
    ctx.value().count += messages.size();
    ctx.VoteToHalt();
  }
};

template <bool kBoth>
void ExpectTheDirectCount(const GraphInput& input, uint32_t every) {
  // For each vertex: the publishers along its in-edges (and out-edges, both ways), once per
  // stored edge; on a symmetric graph once per edge between them.
  const size_t n = input.num_vertices();
  std::vector<typename SumOfPublished<kBoth>::Value> expected(n);
  auto offer = [&](uint32_t from, uint32_t to) {
    if (from % every != 0) return;
    expected[to].sum += from;
    expected[to].count += 1;
  };
  for (size_t e = 0; e < input.src.size(); ++e) {
    const uint32_t a = input.src[e], b = input.dst[e];
    offer(a, b);
    if ((kBoth || input.symmetric) && a != b) offer(b, a);
    if (!input.symmetric && kBoth && a == b) offer(a, a);
  }
  SumOfPublished<kBoth> program;
  program.every = every;
  for (uint32_t parts : {1u, 2u, 3u}) {
    SCOPED_TRACE(::testing::Message() << parts << " parts, every " << every << ", both " << kBoth
                                      << ", symmetric " << input.symmetric);
    test::EngineCluster<SumOfPublished<kBoth>> cluster(program, input, parts);
    ASSERT_TRUE(cluster.Connect().ok());
    ASSERT_TRUE(cluster.RunToCompletion().ok());
    const auto values = cluster.Values();
    for (size_t v = 0; v < n; ++v) {
      const auto& got = values.at(input.external_ids[v]);
      EXPECT_EQ(got.sum, expected[v].sum) << input.external_ids[v];
      EXPECT_EQ(got.count, expected[v].count) << input.external_ids[v];
    }
  }
}

TEST(GatherTest, EveryVertexReceivesWhatItsNeighboursPublished) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> any(0, 199);
  std::vector<Edge> edges;
  for (int e = 0; e < 900; ++e)
    edges.push_back({std::to_string(any(rng)), std::to_string(any(rng))});
  edges.push_back({"7", "7"});
  // Vertices with out-edges alone: both ways, they receive what their out-neighbours published.
  for (int v = 0; v < 6; ++v) edges.push_back({"source" + std::to_string(v), std::to_string(v)});
  for (bool symmetric : {false, true}) {
    GraphInput input = MakeInput(edges, {"isolated"});
    input.symmetric = symmetric;
    for (uint32_t every : {1u, 3u}) {
      ExpectTheDirectCount<false>(input, every);
      ExpectTheDirectCount<true>(input, every);
    }
  }
}

}  // namespace
}  // namespace lockstep::bsp
