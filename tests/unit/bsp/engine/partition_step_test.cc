// A program's partition step (docs/design.md §3.9, engine/partition_view.h) and the concurrent
// disjoint sets a step may link in (disjoint_sets.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "lockstep/bsp/disjoint_sets.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/executor.h"
#include "tbb/global_control.h"
#include "tbb/parallel_for.h"
#include "test_graphs.h"

namespace lockstep::bsp {
namespace {

using bsptest::MakeEngine;
using bsptest::MakeInput;
using bsptest::ValueOf;
using ::testing::ElementsAre;

// Records in a bit mask (above bit 8) the supersteps each vertex ran; the step gives every vertex
// its local index + 1 in the low byte and halts "b" and "c". "a" sends to its out-neighbours in
// superstep 0; everybody votes to halt.
struct StepProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint8_t;

  void PartitionStep(PartitionView<StepProgram>& part) const {
    std::span<uint64_t> values = part.values();
    part.ForEachVertex([&](uint32_t v) { values[v] = v + 1; });
    const Topology& t = part.topology();
    part.HaltUnless([&](uint32_t v) { return t.external_id(v) != "b" && t.external_id(v) != "c"; });
  }
  void Compute(Context<StepProgram>& ctx, std::span<const uint8_t>) const {
    ctx.value() |= uint64_t{1} << (8 + ctx.superstep());
    if (ctx.external_id() == "a" && ctx.superstep() == 0) ctx.SendToAllNeighbors(1);
    ctx.VoteToHalt();
  }
};
static_assert(HasPartitionStep<StepProgram>());

TEST(PartitionStepTest, HaltedVerticesSitOutSuperstepZeroUntilAMessageWakesThem) {
  auto engine = MakeEngine(StepProgram{}, MakeInput({{"a", "b"}}, {"c", "d"}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_EQ(exec.supersteps(), 2u);
  // a, b, c, d are local indexes 0..3: the step's values stay in the low byte.
  EXPECT_EQ(ValueOf(*engine, "a"), 1u | (1u << 8));
  EXPECT_EQ(ValueOf(*engine, "b"), 2u | (1u << 9));  // woken by a's message in superstep 1
  EXPECT_EQ(ValueOf(*engine, "c"), 3u);              // never ran
  EXPECT_EQ(ValueOf(*engine, "d"), 4u | (1u << 8));
}

// Links from two threads give every index its set's least member as root, as a serial union-find
// does, on random graphs with many small sets and one large one.
TEST(ConcurrentDisjointSetsTest, RootsAreEachSetsLeastMemberAtAnyThreadCount) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    std::mt19937 rng(seed);
    const uint32_t n = 20000;
    std::uniform_int_distribution<uint32_t> any(0, n - 1);
    std::vector<std::pair<uint32_t, uint32_t>> edges(seed * 6000);
    for (auto& e : edges) e = {any(rng), any(rng)};
    std::vector<uint32_t> serial(n);
    std::iota(serial.begin(), serial.end(), 0);
    auto find = [&](uint32_t x) {
      while (serial[x] != x) x = serial[x];
      return x;
    };
    for (auto [a, b] : edges) {
      const uint32_t ra = find(a), rb = find(b);
      serial[std::max(ra, rb)] = std::min(ra, rb);
    }
    for (uint32_t v = 0; v < n; ++v) serial[v] = find(v);
    for (size_t threads : {1, 2, 4}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      std::vector<uint32_t> parent(n, 12345);
      ConcurrentDisjointSets sets(parent);
      tbb::parallel_for(size_t{0}, edges.size(),
                        [&](size_t e) { sets.Link(edges[e].first, edges[e].second); });
      std::vector<uint32_t> found(n);
      for (uint32_t v = 0; v < n; ++v) found[v] = sets.Find(v);  // along uncompressed paths
      EXPECT_EQ(found, serial) << "seed " << seed << ", " << threads << " threads";
      sets.Compress();
      EXPECT_EQ(parent, serial) << "seed " << seed << ", " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace lockstep::bsp
