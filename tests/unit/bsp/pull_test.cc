// The pull of a broadcast program with a sum combiner (bsp/program.h, docs/design.md §3.4) against
// the same program sending along its edges. The pull takes one of two paths each superstep: when
// every vertex with out-edges and every remote in-neighbour published, it reads no flags and every
// vertex with in-edges has a message; otherwise it reads the flags. The program below alternates
// between the two, halts some vertices, and runs on graphs with vertices that have no in-edges or
// no out-edges, on 1 to 3 parts, relayed by UUID or by position, traced or not, and checkpointed
// and restored before each superstep. An integer sum does not depend on the order of combining,
// so every run must give the values of the push.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "lockstep/bsp/engine.h"
#include "test_graphs.h"
#include "util/engine_cluster.h"

namespace lockstep::bsp {
namespace {

using bsptest::Edge;
using bsptest::MakeInput;

// A ring of `n` vertices "v<i>" with `extra` random edges. With `sinks`, every 17th vertex has no
// out-edges; `sources` vertices "s<i>" have out-edges and no in-edges.
GraphInput Graph(uint32_t n, uint32_t extra, uint32_t sources, bool sinks, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto sink = [&](uint64_t v) { return sinks && v % 17 == 5; };
  auto name = [](const char* prefix, uint64_t i) { return prefix + std::to_string(i); };
  std::vector<Edge> edges;
  for (uint32_t i = 0; i < n; ++i) {
    if (!sink(i)) edges.push_back({name("v", i), name("v", (i * 7 + 1) % n)});
  }
  for (uint32_t i = 0; i < extra; ++i) {
    const uint64_t s = rng() % n, d = rng() % n;
    if (!sink(s)) edges.push_back({name("v", s), name("v", d)});
  }
  for (uint32_t i = 0; i < sources; ++i) {
    edges.push_back({name("s", i), name("v", rng() % n)});
    edges.push_back({name("s", i), name("v", rng() % n)});
  }
  return MakeInput(edges);
}

// Each vertex folds what it received into its value. Every vertex publishes in supersteps
// s % 3 != 2 (the path without flags next), two thirds of them otherwise; even-ranked vertices
// halt in supersteps s % 4 == 3 (a message wakes them).
template <bool kPull>
struct Folding {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;
  static constexpr bool kBroadcast = kPull;
  static constexpr bool kNeedsInEdges = true;
  static void Combine(uint64_t& into, const uint64_t& m) { into += m; }

  uint64_t last = 9;

  void Compute(Context<Folding>& ctx, std::span<const uint64_t> messages) const {
    const uint64_t s = ctx.superstep();
    const uint64_t rank = ctx.global_index();
    EXPECT_LE(messages.size(), 1u);
    uint64_t& value = ctx.value();
    value = value * 1000003 + (messages.empty() ? 7 : messages[0] * 31 + 11) + s;
    if (s >= last) {
      ctx.VoteToHalt();
      return;
    }
    if (s % 4 == 3 && rank % 2 == 0) ctx.VoteToHalt();
    if (s % 3 != 2 || (rank + s) % 3 != 0) ctx.SendToAllNeighbors(value % 997 + rank);
  }
};

// The values of a run on `parts` parts; with `checkpoint_at` >= 0, those of a second cluster
// restored from a checkpoint taken before that superstep (which must equal the first's).
template <class P>
std::map<std::string, uint64_t> RunFolding(const GraphInput& input, uint32_t parts, bool connect,
                                           int checkpoint_at, bool trace) {
  test::EngineCluster<P> cluster(P{}, input, parts);
  if (connect) {
    EXPECT_TRUE(cluster.Connect().ok());
  }
  if (trace) {
    for (uint32_t q = 0; q < parts; ++q) cluster.engine(q).SetTrace({"v1", "s0", "v10"}, nullptr);
  }
  if (checkpoint_at < 0) {
    const absl::Status st = cluster.RunToCompletion();
    EXPECT_TRUE(st.ok()) << st;
    return cluster.Values();
  }
  for (int i = 0; i < checkpoint_at; ++i) {
    auto more = cluster.Step();
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) return cluster.Values();
  }
  auto files = cluster.Checkpoint("folding", "job");
  EXPECT_TRUE(files.ok()) << files.status();
  test::EngineCluster<P> restored(P{}, input, parts);
  if (connect) {
    EXPECT_TRUE(restored.Connect().ok());
  }
  absl::Status st = restored.Restore(*files);
  EXPECT_TRUE(st.ok()) << st;
  st = restored.RunToCompletion();
  EXPECT_TRUE(st.ok()) << st;
  st = cluster.RunToCompletion();
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(restored.Values(), cluster.Values());
  return restored.Values();
}

TEST(SumPullTest, EqualsThePushOnEitherPathInEveryMode) {
  for (bool sinks : {false, true}) {
    for (uint32_t sources : {0u, 5u}) {
      const GraphInput input = Graph(1500, 4500, sources, sinks, 3 + sources);
      const auto want = RunFolding<Folding<false>>(input, 1, false, -1, false);
      for (uint32_t parts : {1u, 2u, 3u}) {
        for (bool connect : {false, true}) {
          if (parts == 1 && connect) continue;
          for (int checkpoint_at : {-1, 0, 1, 2, 3, 4, 5, 7}) {
            const bool trace = checkpoint_at % 2 != 0;
            SCOPED_TRACE(testing::Message()
                         << "sinks " << sinks << ", sources " << sources << ", parts " << parts
                         << ", connect " << connect << ", checkpoint before " << checkpoint_at);
            EXPECT_EQ((RunFolding<Folding<true>>(input, parts, connect, checkpoint_at, trace)),
                      want);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace lockstep::bsp
