// Results are bit-identical at any thread count (docs/design.md §3.5): a float-summing
// PageRank-like program with a combiner and an order-sensitive program without one, on a random
// graph with hubs, at 1, 2 and 4 threads; and the loader gives the same input at any thread count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/load/source.h"
#include "tbb/global_control.h"
#include "tbb/task_arena.h"
#include "test_graphs.h"
#include "util/temp_dir.h"

namespace lockstep::bsp {
namespace {

using bsptest::MakeEngine;

constexpr uint32_t kVertices = 20000;
constexpr uint32_t kEdges = 200000;
constexpr uint64_t kIterations = 10;

// A fixed random graph: a quarter of the edges point at one of ten hubs, a twentieth leave one of
// them, the rest are uniform; parallel edges and self-loops occur, and many vertices dangle.
const GraphInput& RandomHubGraph() {
  static const GraphInput input = [] {
    GraphInput g;
    g.external_ids = bsptest::Numbered(kVertices);
    std::mt19937_64 rng(20240601);
    auto uniform = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
    for (uint32_t e = 0; e < kEdges; ++e) {
      const uint32_t kind = uniform(20);
      uint32_t s = uniform(kVertices / 2);  // the upper half has no out-edges of its own
      uint32_t d = uniform(kVertices);
      if (kind < 5) d = uniform(10) * 1999;
      if (kind == 5) s = uniform(10) * 1999;
      g.src.push_back(s);
      g.dst.push_back(d);
    }
    return g;
  }();
  return input;
}

// PageRank in single precision, so that any change in summation order shows in the bits.
struct FloatRankProgram {
  using VertexValue = float;
  using EdgeValue = NoValue;
  using Message = float;
  static constexpr float kDamping = 0.85f;

  SumAggregator<float>* dangling[2] = {nullptr, nullptr};
  SumAggregator<float>* change = nullptr;

  static void Combine(float& into, const float& m) { into += m; }
  void Register(AggregatorRegistry& r) {
    dangling[0] = r.Register<float>("dangling.0");
    dangling[1] = r.Register<float>("dangling.1");
    change = r.Register<float>("change");
  }
  void Compute(Context<FloatRankProgram>& ctx, std::span<const float> messages) const {
    const float n = static_cast<float>(ctx.num_vertices());
    const uint64_t s = ctx.superstep();
    float rank = 1.0f / n;
    if (s > 0) {
      const float incoming = messages.empty() ? 0.0f : messages[0];
      rank = (1.0f - kDamping) / n + kDamping * (incoming + dangling[(s - 1) % 2]->Get() / n);
      ctx.Aggregate(change, std::abs(rank - ctx.value()));
    }
    ctx.value() = rank;
    if (ctx.out_degree() == 0) {
      ctx.Aggregate(dangling[s % 2], rank);
    } else {
      ctx.SendToAllNeighbors(rank / static_cast<float>(ctx.out_degree()));
    }
  }
  absl::Status PreStep(uint64_t s) {
    dangling[s % 2]->Set(0.0f);
    change->Set(0.0f);
    return absl::OkStatus();
  }
  bool KeepRunning(const StepStats& stats) const { return stats.superstep < kIterations; }
};

// No combiner; folds its messages in the order it gets them (so order changes show) and sends
// to each out-neighbour a value that depends on the edge's position.
struct FoldProgram {
  using VertexValue = float;
  using EdgeValue = NoValue;
  using Message = float;

  SumAggregator<double>* total = nullptr;

  void Register(AggregatorRegistry& r) { total = r.Register<double>("total"); }
  float Init(const Context<FoldProgram>& ctx) const {
    return static_cast<float>(ctx.index() % 97) / 97.0f;
  }
  void Compute(Context<FoldProgram>& ctx, std::span<const float> messages) const {
    float acc = ctx.value();
    for (float m : messages) acc = acc * 0.75f + m;
    ctx.value() = acc / (1.0f + static_cast<float>(messages.size()));
    ctx.Aggregate(total, static_cast<double>(ctx.value()));
    if (ctx.superstep() + 1 >= kIterations) {
      ctx.VoteToHalt();
      return;
    }
    const auto slots = ctx.out_slots();
    for (size_t i = 0; i < slots.size(); ++i) {
      ctx.Send(slots[i], ctx.value() * (1.0f + 0.001f * static_cast<float>(i)));
    }
  }
};

struct RunResult {
  std::vector<uint32_t> value_bits;
  std::vector<std::string> aggregators;  // encoded values, in name order
  uint64_t supersteps = 0;
  std::vector<float> values;
};

template <class P>
RunResult RunAt(int threads) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            static_cast<size_t>(threads));
  tbb::task_arena arena(threads);
  RunResult result;
  arena.execute([&] {
    auto engine = MakeEngine(P{}, RandomHubGraph());
    ASSERT_NE(engine, nullptr);
    Executor exec(*engine, engine->ProgramCallbacks());
    ASSERT_TRUE(exec.RunToCompletion().ok());
    result.supersteps = exec.supersteps();
    for (float v : engine->values()) {
      result.values.push_back(v);
      result.value_bits.push_back(std::bit_cast<uint32_t>(v));
    }
    engine->aggregators().ForEach([&](const AggregatorBase& a) {
      std::string bytes;
      a.EncodeValue(bytes);
      result.aggregators.push_back(bytes);
    });
  });
  return result;
}

// Compares bit patterns, reporting the first difference rather than 20000 values.
void ExpectSameBits(const RunResult& a, const RunResult& b, int threads) {
  SCOPED_TRACE(testing::Message() << threads << " threads against 1");
  EXPECT_EQ(a.supersteps, b.supersteps);
  EXPECT_EQ(a.aggregators, b.aggregators);
  ASSERT_EQ(a.value_bits.size(), b.value_bits.size());
  size_t differ = 0, first = 0;
  for (size_t i = 0; i < a.value_bits.size(); ++i) {
    if (a.value_bits[i] != b.value_bits[i] && differ++ == 0) first = i;
  }
  EXPECT_EQ(differ, 0u) << "first at vertex " << first << ": " << a.values[first] << " vs "
                        << b.values[first];
}

// The same iteration in double precision over the input, as an oracle for the float program.
std::vector<double> RankOracle(const GraphInput& g) {
  const size_t n = g.num_vertices();
  std::vector<uint32_t> degree(n, 0);
  for (uint32_t s : g.src) ++degree[s];
  std::vector<double> rank(n, 1.0 / static_cast<double>(n)), next(n);
  for (uint64_t it = 0; it < kIterations; ++it) {
    double dangling = 0;
    for (size_t v = 0; v < n; ++v) {
      if (degree[v] == 0) dangling += rank[v];
    }
    std::vector<double> incoming(n, 0.0);
    for (size_t e = 0; e < g.num_edges(); ++e)
      incoming[g.dst[e]] += rank[g.src[e]] / degree[g.src[e]];
    for (size_t v = 0; v < n; ++v) {
      next[v] = (1 - 0.85) / static_cast<double>(n) +
                0.85 * (incoming[v] + dangling / static_cast<double>(n));
    }
    rank.swap(next);
  }
  return rank;
}

TEST(DeterminismTest, FloatRankIsBitIdenticalAtAnyThreadCount) {
  const RunResult one = RunAt<FloatRankProgram>(1);
  ASSERT_EQ(one.supersteps, kIterations + 1);
  // It computes PageRank (within single precision) ...
  const std::vector<double> oracle = RankOracle(RandomHubGraph());
  double sum = 0;
  for (size_t v = 0; v < oracle.size(); ++v) {
    ASSERT_NEAR(one.values[v], oracle[v], 1e-3 * oracle[v] + 1e-9) << "vertex " << v;
    sum += one.values[v];
  }
  EXPECT_NEAR(sum, 1.0, 1e-3);
  EXPECT_GT(one.values[0], 100.0f / kVertices);  // a hub
  // ... and the same bits at every thread count.
  for (int threads : {2, 4}) ExpectSameBits(one, RunAt<FloatRankProgram>(threads), threads);
}

TEST(DeterminismTest, NonCombinerIsBitIdenticalAtAnyThreadCount) {
  const RunResult one = RunAt<FoldProgram>(1);
  ASSERT_EQ(one.supersteps, kIterations);
  for (int threads : {2, 4}) ExpectSameBits(one, RunAt<FoldProgram>(threads), threads);
}

// The loader cuts files into chunks by thread count; the input must not depend on it. (A quarter
// of the graph keeps the test quick under the sanitizers.)
TEST(DeterminismTest, LoaderIsIndependentOfThreadCount) {
  const GraphInput& g = RandomHubGraph();
  constexpr size_t kLoaded = kEdges / 4;
  test::TempDir dir;
  std::string ints, names;
  for (size_t e = 0; e < kLoaded; ++e) {
    const std::string s = g.external_ids[g.src[e]], d = g.external_ids[g.dst[e]];
    ints += s + " " + d + " " + std::to_string(e % 13) + ".5\n";
    names += "n" + s + "\tn" + d + "\n";
    if (e % 5000 == 0) ints += "# comment\n";
  }
  const std::string ints_path = dir.Write("ints.el", ints);
  const std::string names_path = dir.Write("names.el", names);
  std::vector<GraphInput> loaded;
  for (int threads : {1, 2, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<size_t>(threads));
    tbb::task_arena arena(threads);
    arena.execute([&] {
      for (const std::string& path : {ints_path, names_path}) {
        auto input = load::LoadGraph({.path = path}, WeightUse::kNonNegative);
        ASSERT_TRUE(input.ok()) << input.status();
        loaded.push_back(*std::move(input));
      }
    });
  }
  ASSERT_EQ(loaded.size(), 6u);
  // Integer IDs: the loader sorts them numerically, exactly as RandomHubGraph numbers them, except
  // that vertices without edges are not in an edge list.
  EXPECT_EQ(loaded[0].num_edges(), kLoaded);
  EXPECT_EQ(loaded[0].weights.size(), kLoaded);
  EXPECT_EQ(loaded[1].num_edges(), kLoaded);
  EXPECT_TRUE(loaded[1].weights.empty());
  for (size_t e = 0; e < kLoaded; e += 97) {
    EXPECT_EQ(loaded[0].external_ids[loaded[0].src[e]], g.external_ids[g.src[e]]);
    EXPECT_EQ(loaded[0].external_ids[loaded[0].dst[e]], g.external_ids[g.dst[e]]);
    EXPECT_EQ(loaded[1].external_ids[loaded[1].dst[e]], "n" + g.external_ids[g.dst[e]]);
    EXPECT_EQ(loaded[0].weights[e], static_cast<double>(e % 13) + 0.5);
  }
  for (size_t i = 2; i < loaded.size(); ++i) {
    SCOPED_TRACE(i);
    const GraphInput& want = loaded[i % 2];
    EXPECT_EQ(loaded[i].external_ids, want.external_ids);
    EXPECT_EQ(loaded[i].src, want.src);
    EXPECT_EQ(loaded[i].dst, want.dst);
    EXPECT_EQ(loaded[i].weights, want.weights);
  }
}

}  // namespace
}  // namespace lockstep::bsp
