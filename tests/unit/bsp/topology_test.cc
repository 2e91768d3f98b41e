// Topology and Graph over the parts of a split (docs/design.md §3.6, §4): every vertex is local in
// exactly one part, each part has its vertices' complete out- (and in-) edges, remote endpoints
// carry their owner's partition, and edge values line up with the edges.
#include "lockstep/bsp/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/graph.h"
#include "test_graphs.h"

namespace lockstep::bsp {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A random weighted graph with mixed integer and string IDs, parallel edges and self-loops.
GraphInput MixedGraph() {
  std::mt19937_64 rng(99);
  auto name = [](uint64_t i) { return i % 3 == 0 ? "s" + std::to_string(i) : std::to_string(i); };
  std::vector<bsptest::Edge> edges;
  std::vector<double> weights;
  for (int e = 0; e < 1500; ++e) {
    const uint64_t s = rng() % 200, d = e % 50 == 0 ? s : rng() % 200;
    edges.push_back({name(s), name(d)});
    weights.push_back(static_cast<double>(e) + 0.25);
    if (e % 40 == 0) {
      edges.push_back(edges.back());
      weights.push_back(-static_cast<double>(e));
    }
  }
  std::vector<std::string> all;
  for (uint64_t i = 0; i < 210; ++i) all.push_back(name(i));  // 200..209 have no edges
  return bsptest::MakeInput(edges, all, weights);
}

struct EdgeView {
  VertexId other;
  double value;
  friend bool operator==(const EdgeView&, const EdgeView&) = default;
};

// MixedGraph read as undirected: each edge stored once, standing for both directions.
GraphInput SymmetricMixedGraph() {
  GraphInput input = MixedGraph();
  MakeSymmetric(input);
  return input;
}

// (parts, symmetric input)
class TopologyPartsTest : public ::testing::TestWithParam<std::tuple<uint64_t, bool>> {};

TEST_P(TopologyPartsTest, PartsCoverTheGraphExactly) {
  const uint64_t parts = std::get<0>(GetParam());
  const GraphInput built_from = std::get<1>(GetParam()) ? SymmetricMixedGraph() : MixedGraph();
  // The expectations read every directed edge from the arrays, in GraphInput's order.
  const GraphInput input = WithReverseEdges(built_from);
  const partition::Range split = bsptest::Split(parts);
  std::vector<Graph<double>> graphs;
  for (uint64_t p = 0; p < parts; ++p) {
    auto g = Graph<double>::Build(built_from, split, p, /*in_edges=*/true);
    ASSERT_TRUE(g.ok()) << g.status();
    graphs.push_back(*std::move(g));
  }

  // Every vertex is local in exactly one part: the one that owns its UUID.
  uint64_t total_local = 0, total_out = 0;
  for (uint64_t p = 0; p < parts; ++p) {
    const Topology& t = graphs[p].topology();
    EXPECT_EQ(t.num_global(), input.num_vertices());
    EXPECT_EQ(t.part(), p);
    EXPECT_EQ(t.split().size(), parts);
    total_local += t.num_local();
    total_out += t.num_out_edges();
    if (parts > 1) {
      EXPECT_GT(t.num_local(), 0u);
    }
    for (uint32_t v = 1; v < t.num_local(); ++v) {  // local order is the input's order
      EXPECT_TRUE(ExternalIdLess(t.external_id(v - 1), t.external_id(v)));
    }
  }
  EXPECT_EQ(total_local, input.num_vertices());
  EXPECT_EQ(total_out, input.num_edges());

  // Expected out- and in-edges per input vertex, in input order.
  std::vector<std::vector<EdgeView>> out(input.num_vertices()), in(input.num_vertices());
  std::vector<VertexId> uuid;
  for (const std::string& id : input.external_ids) uuid.push_back(VertexIdFromExternal(id));
  for (size_t e = 0; e < input.num_edges(); ++e) {
    out[input.src[e]].push_back({uuid[input.dst[e]], input.weights[e]});
    in[input.dst[e]].push_back({uuid[input.src[e]], input.weights[e]});
  }

  for (uint32_t g = 0; g < input.num_vertices(); ++g) {
    SCOPED_TRACE(input.external_ids[g]);
    const uint64_t owner = *split.PartitionFor(uuid[g]);
    int found = 0;
    for (uint64_t p = 0; p < parts; ++p) {
      const Graph<double>& graph = graphs[p];
      const Topology& t = graph.topology();
      const uint32_t v = t.Find(uuid[g]);
      if (v == kNoVertex) continue;
      ++found;
      EXPECT_EQ(p, owner);
      EXPECT_EQ(t.id(v), uuid[g]);
      EXPECT_EQ(t.external_id(v), input.external_ids[g]);
      EXPECT_EQ(t.global_index(v), g);
      EXPECT_EQ(t.SlotGlobalIndex(v), g);
      std::vector<EdgeView> got_out, got_in;
      for (size_t i = 0; i < t.out_degree(v); ++i) {
        const uint32_t slot = t.out_slots(v)[i];
        got_out.push_back({t.SlotId(slot), graph.out_values(v)[i]});
        EXPECT_EQ(uuid.at(t.SlotGlobalIndex(slot)), t.SlotId(slot));
      }
      for (size_t i = 0; i < t.in_degree(v); ++i) {
        const uint32_t slot = t.in_slots(v)[i];
        got_in.push_back({t.SlotId(slot), graph.in_values(v)[i]});
        EXPECT_EQ(uuid.at(t.SlotGlobalIndex(slot)), t.SlotId(slot));
      }
      EXPECT_EQ(got_out, out[g]);
      if (std::get<1>(GetParam())) {
        // A symmetric graph's in-edges are its out-edges, in their order (Topology::in_shared).
        EXPECT_TRUE(t.in_shared());
        EXPECT_EQ(got_in, out[g]);
      } else {
        EXPECT_EQ(got_in, in[g]);
      }
      EXPECT_EQ(t.out_end(v) - t.out_begin(v), out[g].size());
    }
    EXPECT_EQ(found, 1);
  }

  // Remote slots: owned elsewhere, with the owner's partition, ordered by (partition, global
  // index), the order in which each owner numbers its own vertices.
  for (uint64_t p = 0; p < parts; ++p) {
    SCOPED_TRACE(p);
    const Topology& t = graphs[p].topology();
    const auto& begin = t.remote_partition_begin();
    ASSERT_EQ(begin.size(), parts + 1);
    EXPECT_EQ(begin.front(), 0u);
    EXPECT_EQ(begin.back(), t.num_remote());
    EXPECT_EQ(begin[p], begin[p + 1]);  // none of its own
    if (parts > 1) {
      EXPECT_GT(t.num_remote(), 0u);
    }
    for (uint32_t r = 0; r < t.num_remote(); ++r) {
      const VertexId& id = t.remote_id(r);
      EXPECT_EQ(t.SlotId(t.num_local() + r), id);
      EXPECT_FALSE(t.IsLocal(t.num_local() + r));
      EXPECT_EQ(t.Find(id), kNoVertex);
      EXPECT_EQ(t.remote_partition(r), *split.PartitionFor(id));
      EXPECT_NE(t.remote_partition(r), p);
      EXPECT_GE(r, begin[t.remote_partition(r)]);
      EXPECT_LT(r, begin[t.remote_partition(r) + 1]);
      if (r > 0) {
        const uint32_t slot = t.num_local() + r;
        const auto prev = std::make_pair(t.remote_partition(r - 1), t.SlotGlobalIndex(slot - 1));
        EXPECT_LT(prev, std::make_pair(t.remote_partition(r), t.SlotGlobalIndex(slot)));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Parts, TopologyPartsTest,
                         ::testing::Combine(::testing::Values(1, 3), ::testing::Bool()));

// A symmetric input builds exactly what the same graph with its reverse edges stored builds: the
// same slots, remotes, CSR order and edge values, in every part, with and without in-edges.
void ExpectSymmetricBuildsLikeStoredReverses(const GraphInput& symmetric) {
  const GraphInput stored = WithReverseEdges(symmetric);
  EXPECT_EQ(symmetric.num_edges(), stored.num_edges());
  EXPECT_LT(symmetric.num_stored_edges(), stored.num_stored_edges());
  for (uint64_t parts : {1, 2, 3}) {
    const partition::Range split = bsptest::Split(parts);
    for (uint64_t p = 0; p < parts; ++p) {
      for (bool in_edges : {false, true}) {
        SCOPED_TRACE(absl::StrCat(parts, " parts, part ", p, in_edges ? ", in-edges" : ""));
        auto a = Graph<double>::Build(symmetric, split, p, in_edges);
        auto b = Graph<double>::Build(stored, split, p, in_edges);
        ASSERT_TRUE(a.ok() && b.ok());
        const Topology& ta = a->topology();
        const Topology& tb = b->topology();
        ASSERT_EQ(ta.num_local(), tb.num_local());
        ASSERT_EQ(ta.num_remote(), tb.num_remote());
        ASSERT_EQ(ta.num_out_edges(), tb.num_out_edges());
        for (uint32_t r = 0; r < ta.num_remote(); ++r) EXPECT_EQ(ta.remote_id(r), tb.remote_id(r));
        for (uint32_t v = 0; v < ta.num_local(); ++v) {
          EXPECT_EQ(ta.id(v), tb.id(v));
          EXPECT_THAT(ta.out_slots(v), ::testing::ElementsAreArray(tb.out_slots(v)));
          EXPECT_THAT(a->out_values(v), ::testing::ElementsAreArray(b->out_values(v)));
          ASSERT_EQ(ta.has_in_edges(), tb.has_in_edges());
          if (!in_edges) continue;
          // Stored once: the in-edges are the out-edges, which are the stored reverses' in-edges
          // in another order.
          EXPECT_TRUE(ta.in_shared());
          EXPECT_FALSE(tb.in_shared());
          EXPECT_THAT(ta.in_slots(v), ::testing::ElementsAreArray(ta.out_slots(v)));
          EXPECT_THAT(a->in_values(v), ::testing::ElementsAreArray(a->out_values(v)));
          auto edges = [](std::span<const uint32_t> slots, std::span<const double> values) {
            std::vector<std::pair<uint32_t, double>> e;
            for (size_t i = 0; i < slots.size(); ++i) e.emplace_back(slots[i], values[i]);
            std::sort(e.begin(), e.end());
            return e;
          };
          EXPECT_EQ(edges(ta.in_slots(v), a->in_values(v)), edges(tb.in_slots(v), b->in_values(v)));
        }
      }
    }
  }
}

// With self-loops, which are stored once in either direction.
TEST(TopologyTest, SymmetricInputBuildsLikeStoredReverses) {
  ExpectSymmetricBuildsLikeStoredReverses(SymmetricMixedGraph());
}

// Without self-loops.
TEST(TopologyTest, SymmetricInputWithoutSelfLoopsBuildsLikeStoredReverses) {
  GraphInput input = SymmetricMixedGraph();
  GraphInput no_loops = input;
  no_loops.src.clear();
  no_loops.dst.clear();
  no_loops.weights.clear();
  for (size_t e = 0; e < input.src.size(); ++e) {
    if (input.src[e] == input.dst[e]) continue;
    no_loops.src.push_back(input.src[e]);
    no_loops.dst.push_back(input.dst[e]);
    no_loops.weights.push_back(input.weights[e]);
  }
  MakeSymmetric(no_loops);
  ASSERT_LT(no_loops.num_stored_edges(), input.num_stored_edges());
  ExpectSymmetricBuildsLikeStoredReverses(no_loops);
}

// Enough edges for the counting sort to use several chunks per thread.
TEST(TopologyTest, LargeSymmetricInputBuildsLikeStoredReverses) {
  std::mt19937_64 rng(7);
  std::vector<bsptest::Edge> edges;
  std::vector<double> weights;
  for (int e = 0; e < 300000; ++e) {
    const uint64_t s = rng() % 3000, d = (s + 1 + rng() % 2999) % 3000;
    edges.push_back({std::to_string(s), std::to_string(d)});
    weights.push_back(static_cast<double>(e));
  }
  GraphInput input = bsptest::MakeInput(edges, {}, weights);
  MakeSymmetric(input);
  ExpectSymmetricBuildsLikeStoredReverses(input);
}

TEST(TopologyTest, OnePartHasNoRemotes) {
  const GraphInput input = MixedGraph();
  auto t = Topology::Build(input, bsptest::Split(1), 0, false, nullptr, nullptr);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->num_local(), input.num_vertices());
  EXPECT_EQ(t->num_remote(), 0u);
  EXPECT_FALSE(t->has_in_edges());
  EXPECT_THAT(t->remote_partition_begin(), ElementsAre(0, 0));
  // With one part the local index is the input index.
  for (uint32_t v = 0; v < t->num_local(); ++v) ASSERT_EQ(t->external_id(v), input.external_ids[v]);
}

TEST(TopologyTest, OutEdgesOnlyNeedOutRemotes) {
  // "a" -> "b" across parts: with out-edges only, b's part needs no remote for a.
  const partition::Range split = bsptest::Split(2);
  ASSERT_NE(bsptest::OwnerOf(split, "graph1.vertex"), bsptest::OwnerOf(split, "graph2.vertex"));
  const GraphInput input = bsptest::MakeInput({{"graph1.vertex", "graph2.vertex"}});
  const uint64_t dst_part = bsptest::OwnerOf(split, "graph2.vertex");
  auto out_only = Topology::Build(input, split, dst_part, false, nullptr, nullptr);
  auto with_in = Topology::Build(input, split, dst_part, true, nullptr, nullptr);
  ASSERT_TRUE(out_only.ok());
  ASSERT_TRUE(with_in.ok());
  EXPECT_EQ(out_only->num_remote(), 0u);
  EXPECT_EQ(with_in->num_remote(), 1u);
  EXPECT_EQ(with_in->remote_id(0), VertexIdFromExternal("graph1.vertex"));
}

// FindRemote through its bucket index: every remote is found at its index, in any part and for
// few or many remotes, and a UUID that is no remote of the part (a local one, or none) is not.
TEST(TopologyTest, FindRemoteFindsEveryRemoteAndNothingElse) {
  std::mt19937_64 rng(5);
  std::vector<bsptest::Edge> edges;
  // Enough vertices that a part's remotes are sorted by buckets of their leading bits.
  for (int e = 0; e < 30000; ++e) {
    edges.push_back({std::to_string(rng() % 15000), std::to_string(rng() % 15000)});
  }
  for (const GraphInput& input :
       {bsptest::MakeInput(edges), bsptest::MakeInput({{"a", "b"}, {"b", "c"}, {"c", "a"}})}) {
    for (uint32_t parts : {2u, 3u, 7u}) {
      const partition::Range split = bsptest::Split(parts);
      for (uint32_t part = 0; part < parts; ++part) {
        auto t = Topology::Build(input, split, part, true, nullptr, nullptr);
        ASSERT_TRUE(t.ok()) << t.status();
        for (uint32_t r = 0; r < t->num_remote(); ++r) {
          ASSERT_EQ(t->FindRemote(t->remote_id(r)), r) << parts << " parts, part " << part;
        }
        for (uint32_t v = 0; v < t->num_local(); ++v) {
          ASSERT_EQ(t->FindRemote(t->id(v)), kNoVertex);
        }
        EXPECT_EQ(t->FindRemote(VertexIdFromExternal("not a vertex of the graph")), kNoVertex);
      }
    }
  }
}

// A part built from vertices held in another order than the global index's (as a partitioned load
// may hold them) has the whole input's build's remote table: in (partition, global index) order,
// each remote found by its UUID, and the same slots along every edge.
TEST(TopologyTest, APartOfShuffledVerticesHasTheWholeBuildsRemoteTable) {
  for (const GraphInput& whole : {MixedGraph(), SymmetricMixedGraph()}) {
    const auto n = static_cast<uint32_t>(whole.num_vertices());
    const uint64_t parts = 3;
    const partition::Range split = bsptest::Split(parts);
    std::mt19937_64 rng(3);
    for (uint64_t part = 0; part < parts; ++part) {
      SCOPED_TRACE(absl::StrCat(whole.symmetric ? "symmetric" : "directed", ", part ", part));
      auto want = Topology::Build(whole, split, part, true, nullptr, nullptr);
      ASSERT_TRUE(want.ok()) << want.status();
      std::vector<uint32_t> order(n);  // order[i]: the global index of the i-th vertex held
      for (uint32_t g = 0; g < n; ++g) order[g] = g;
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<uint32_t> place(n);
      for (uint32_t i = 0; i < n; ++i) place[order[i]] = i;
      PartVertices vertices;
      vertices.num_global = n;
      for (uint32_t g : order) {
        vertices.uuids.push_back(VertexIdFromExternal(whole.external_ids[g]));
        vertices.global.push_back(g);
      }
      for (uint32_t g = 0; g < n; ++g) {
        if (*split.PartitionFor(VertexIdFromExternal(whole.external_ids[g])) != part) continue;
        vertices.local_order.push_back(place[g]);
        vertices.owned_names.push_back(whole.external_ids[g]);
      }
      GraphInput input;
      input.weights = whole.weights;
      input.directed = whole.directed;
      input.symmetric = whole.symmetric;
      input.num_reverse = whole.num_reverse;
      for (size_t e = 0; e < whole.src.size(); ++e) {
        input.src.push_back(place[whole.src[e]]);
        input.dst.push_back(place[whole.dst[e]]);
      }
      auto got =
          Topology::BuildPart(input, std::move(vertices), split, part, true, nullptr, nullptr);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->num_local(), want->num_local());
      ASSERT_EQ(got->num_remote(), want->num_remote());
      EXPECT_GT(got->num_remote(), 0u);
      EXPECT_EQ(got->remote_partition_begin(), want->remote_partition_begin());
      for (uint32_t r = 0; r < got->num_remote(); ++r) {
        const uint32_t slot = got->num_local() + r;
        ASSERT_EQ(got->remote_id(r), want->remote_id(r)) << r;
        ASSERT_EQ(got->SlotGlobalIndex(slot), want->SlotGlobalIndex(slot)) << r;
        ASSERT_EQ(got->FindRemote(got->remote_id(r)), r);
        if (r > 0 && got->remote_partition(r - 1) == got->remote_partition(r)) {
          ASSERT_LT(got->SlotGlobalIndex(slot - 1), got->SlotGlobalIndex(slot)) << r;
        }
      }
      for (uint32_t v = 0; v < got->num_local(); ++v) {
        const auto a = got->out_slots(v), b = want->out_slots(v);
        ASSERT_EQ(std::vector<uint32_t>(a.begin(), a.end()),
                  std::vector<uint32_t>(b.begin(), b.end()));
        const auto ai = got->in_slots(v), bi = want->in_slots(v);
        ASSERT_EQ(std::vector<uint32_t>(ai.begin(), ai.end()),
                  std::vector<uint32_t>(bi.begin(), bi.end()));
      }
    }
  }
}

// The remotes' UUID index is sorted on the first lookup: threads that look up at once all find
// every remote vertex.
TEST(TopologyTest, FindRemoteFromSeveralThreadsAtOnce) {
  const GraphInput input = MixedGraph();
  auto t = Topology::Build(input, bsptest::Split(3), 1, false, nullptr, nullptr);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_GT(t->num_remote(), 64u);  // enough for a bucket index
  std::vector<uint32_t> wrong(4, 0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < wrong.size(); ++i) {
    threads.emplace_back([&, i] {
      for (uint32_t r = 0; r < t->num_remote(); ++r)
        wrong[i] += t->FindRemote(t->remote_id(r)) != r;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(wrong, ::testing::Each(0u));
}

TEST(TopologyTest, TwoIdsWithOneUuidAreAnError) {
  const GraphInput input = bsptest::MakeInput(
      {{"00000000-0000-0000-0000-00000000000A", "00000000-0000-0000-0000-00000000000a"}});
  auto t = Topology::Build(input, bsptest::Split(1), 0, false, nullptr, nullptr);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()),
              AllOf(HasSubstr("00000000-0000-0000-0000-00000000000A"),
                    HasSubstr("00000000-0000-0000-0000-00000000000a")));
}

TEST(TopologyTest, PartOutOfRange) {
  auto t = Topology::Build(bsptest::MakeInput({{"a", "b"}}), bsptest::Split(3), 3, false, nullptr,
                           nullptr);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kOutOfRange);
}

TEST(GraphTest, EdgeValuesConvertFromWeights) {
  const GraphInput input = bsptest::MakeInput({{"a", "b"}, {"a", "c"}}, {}, {2.75, 3});
  auto ints = Graph<int64_t>::Build(input, bsptest::Split(1), 0, false);
  ASSERT_TRUE(ints.ok());
  EXPECT_THAT(ints->out_values(0), ElementsAre(2, 3));
  auto floats = Graph<float>::Build(input, bsptest::Split(1), 0, true);
  ASSERT_TRUE(floats.ok());
  EXPECT_THAT(floats->out_values(0), ElementsAre(2.75f, 3.0f));
  EXPECT_THAT(floats->in_values(1), ElementsAre(2.75f));
  auto none = Graph<NoValue>::Build(input, bsptest::Split(1), 0, true);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->out_values(0).empty());
  EXPECT_EQ(none->topology().out_degree(0), 2u);
}

}  // namespace
}  // namespace lockstep::bsp

namespace lockstep::bsp {
namespace {

// Two external IDs with one UUID (a UUID spelled in both cases; a name and its own UUID) fail the
// build naming the first vertex, in input order, that repeats an earlier one's UUID, and that one.
TEST(TopologyTest, ExternalIdsWithOneUuidAreNamed) {
  const std::string lower = ToString(VertexIdFromExternal("7"));
  std::string upper = lower;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string own = ToString(VertexIdFromExternal("5"));
  GraphInput input;
  input.external_ids = {"1", lower, "5", upper, "3", own};
  auto split = partition::Range::Whole(1);
  ASSERT_TRUE(split.ok());
  auto t = Topology::Build(input, *split, 0, false, nullptr, nullptr);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(),
            "vertex IDs '" + upper + "' and '" + lower + "' map to the same UUID " + lower);
  // The same among enough vertices that the UUID sort goes by buckets of leading bits.
  for (int i = 0; i < 5000; ++i) input.external_ids.push_back("w" + std::to_string(i));
  t = Topology::Build(input, *split, 0, false, nullptr, nullptr);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "vertex IDs '" + upper + "' and '" + lower + "' map to the same UUID " + lower);
  // Without the repeats, every vertex is found by its UUID, and no other is.
  input.external_ids = {"1", lower, "5", "3"};
  for (int i = 0; i < 5000; ++i) input.external_ids.push_back("v" + std::to_string(i));
  t = Topology::Build(input, *split, 0, false, nullptr, nullptr);
  ASSERT_TRUE(t.ok()) << t.status();
  for (uint32_t v = 0; v < t->num_local(); ++v) {
    EXPECT_EQ(t->Find(VertexIdFromExternal(input.external_ids[v])), v);
  }
  EXPECT_EQ(t->Find(VertexIdFromExternal("absent")), kNoVertex);
}

// Packed edges hold each number in as many bits as its bound needs (at least 1) and a pair in
// whole bytes, 1 to 8 of them: each number reads back whole, the largest of each width included,
// whatever its neighbours, set in any order.
TEST(PartEdgesTest, NumbersReadBackAtEveryWidth) {
  const std::vector<std::pair<uint64_t, uint64_t>> bounds = {
      {0, 0},
      {1, 2},
      {2, 200},
      {5, 300},
      {1 << 20, 1 << 20},
      {160000, 504403},
      {(uint64_t{1} << 24) + 1, 3},
      {uint64_t{1} << 32, 1},
      {uint64_t{1} << 32, uint64_t{1} << 32}};
  for (const auto& [sources, targets] : bounds) {
    const uint32_t ts = static_cast<uint32_t>(std::max<uint64_t>(sources, 1) - 1);
    const uint32_t td = static_cast<uint32_t>(std::max<uint64_t>(targets, 1) - 1);
    const std::vector<std::pair<uint32_t, uint32_t>> pairs = {
        {0, td}, {ts, 0}, {ts, td}, {0x5555u & ts, 0xaaaaaaaau & td}, {ts / 3, td / 7}, {0, 0}};
    PartEdges edges(pairs.size(), sources, targets);
    const uint64_t bits = std::max(1, static_cast<int>(std::bit_width(ts))) +
                          std::max(1, static_cast<int>(std::bit_width(td)));
    EXPECT_EQ(edges.bytes(), pairs.size() * ((bits + 7) / 8) + 8) << sources << " " << targets;
    for (size_t e : {4, 1, 5, 0, 3, 2}) edges.Set(e, pairs[e].first, pairs[e].second);
    for (size_t e = 0; e < pairs.size(); ++e) {
      EXPECT_EQ(edges.src(e), pairs[e].first) << sources << " " << targets << " edge " << e;
      EXPECT_EQ(edges.dst(e), pairs[e].second) << sources << " " << targets << " edge " << e;
    }
    edges.Clear();
    EXPECT_EQ(edges.size(), 0u);
  }
  PartEdges both(2, 1000);  // one bound for both ends
  both.Set(0, 999, 0);
  both.Set(1, 0, 999);
  EXPECT_EQ(both.bytes(), 2 * 3 + 8);
  EXPECT_EQ(both.src(0), 999u);
  EXPECT_EQ(both.dst(1), 999u);
}

}  // namespace
}  // namespace lockstep::bsp
