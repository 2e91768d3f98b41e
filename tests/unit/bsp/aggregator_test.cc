// Aggregators: the typed operations, deltas, the encoded forms the distributed layer exchanges,
// the registry, and what compute and the callbacks see during a run (docs/design.md §3.3).
#include "lockstep/bsp/aggregator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/executor.h"
#include "test_graphs.h"

// A variable-size aggregator value needs its own codec, as any variable-size type does.
template <>
struct lockstep::bsp::Codec<std::vector<uint32_t>> {
  static void Encode(const std::vector<uint32_t>& v, std::string& out) {
    EncodeLength(v.size(), out);
    for (uint32_t x : v) Codec<uint32_t>::Encode(x, out);
  }
  static bool Decode(std::string_view& in, std::vector<uint32_t>& v) {
    uint64_t n;
    if (!DecodeLength(in, n) || n > in.size() / sizeof(uint32_t)) return false;
    v.resize(n);
    for (uint32_t& x : v) Codec<uint32_t>::Decode(in, x);
    return true;
  }
};

namespace lockstep::bsp {
namespace {

using bsptest::MakeEngine;
using bsptest::MakeInput;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// User-defined operations: a sorted set union and an arg-min with ties to the smaller vertex.
struct UnionOp {
  static std::vector<uint32_t> Identity() { return {}; }
  static void Merge(std::vector<uint32_t>& into, const std::vector<uint32_t>& x) {
    std::vector<uint32_t> merged;
    std::set_union(into.begin(), into.end(), x.begin(), x.end(), std::back_inserter(merged));
    into = std::move(merged);
  }
};

struct ArgMin {
  double value;
  uint32_t vertex;
};
struct ArgMinOp {
  static ArgMin Identity() {
    return {std::numeric_limits<double>::infinity(), std::numeric_limits<uint32_t>::max()};
  }
  static void Merge(ArgMin& into, const ArgMin& x) {
    if (x.value < into.value || (x.value == into.value && x.vertex < into.vertex)) into = x;
  }
};

std::string Encoded(const AggregatorBase& a, bool delta) {
  std::string out;
  if (delta) {
    a.EncodeDelta(out);
  } else {
    a.EncodeValue(out);
  }
  return out;
}

TEST(AggregatorOpTest, Identities) {
  EXPECT_EQ(SumOp<int64_t>::Identity(), 0);
  EXPECT_EQ(MinOp<double>::Identity(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(MaxOp<double>::Identity(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(MinOp<int32_t>::Identity(), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(MaxOp<int32_t>::Identity(), std::numeric_limits<int32_t>::lowest());
  EXPECT_EQ(MaxOp<uint64_t>::Identity(), 0u);
}

TEST(AggregatorTest, SumDeltaAndPersistence) {
  SumAggregator<int64_t> sum("sum");
  sum.PrepareSlots(3);
  EXPECT_EQ(sum.name(), "sum");
  EXPECT_EQ(sum.Get(), 0);
  sum.AggregateIn(0, 5);
  sum.AggregateIn(2, 7);
  sum.AggregateIn(2, 1);
  sum.Aggregate(100);       // outside compute
  EXPECT_EQ(sum.Get(), 0);  // nothing is visible before the merge
  sum.MergeStep();
  EXPECT_EQ(sum.Get(), 113);
  EXPECT_EQ(sum.Delta(), 113);
  // The value persists; the delta is only the last superstep's contributions.
  sum.AggregateIn(1, -3);
  sum.MergeStep();
  EXPECT_EQ(sum.Get(), 110);
  EXPECT_EQ(sum.Delta(), -3);
  sum.MergeStep();
  EXPECT_EQ(sum.Get(), 110);
  EXPECT_EQ(sum.Delta(), 0);
  sum.Set(1);
  sum.AggregateIn(0, 2);
  sum.MergeStep();
  EXPECT_EQ(sum.Get(), 3);
  EXPECT_EQ(sum.Delta(), 2);
}

TEST(AggregatorTest, MinAndMax) {
  MinAggregator<double> min("min");
  MaxAggregator<int32_t> max("max");
  min.PrepareSlots(2);
  max.PrepareSlots(2);
  EXPECT_EQ(min.Get(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(max.Get(), std::numeric_limits<int32_t>::lowest());
  for (double x : {5.0, 3.0, 9.0}) min.AggregateIn(1, x);
  for (int32_t x : {-5, 3, -9}) max.AggregateIn(0, x);
  min.MergeStep();
  max.MergeStep();
  EXPECT_EQ(min.Get(), 3.0);
  EXPECT_EQ(min.Delta(), 3.0);
  EXPECT_EQ(max.Get(), 3);
  EXPECT_EQ(max.Delta(), 3);
  min.AggregateIn(0, 4.0);
  max.Aggregate(-20);
  min.MergeStep();
  max.MergeStep();
  EXPECT_EQ(min.Get(), 3.0);    // the value keeps the minimum over all supersteps ...
  EXPECT_EQ(min.Delta(), 4.0);  // ... the delta is this superstep's
  EXPECT_EQ(max.Get(), 3);
  EXPECT_EQ(max.Delta(), -20);
}

TEST(AggregatorTest, UserDefinedOperations) {
  Aggregator<std::vector<uint32_t>, UnionOp> set("set");
  set.PrepareSlots(2);
  set.AggregateIn(0, {1, 5});
  set.AggregateIn(1, {2, 5, 9});
  set.Aggregate({0});
  set.MergeStep();
  EXPECT_THAT(set.Get(), ElementsAre(0, 1, 2, 5, 9));
  set.AggregateIn(1, {3});
  set.MergeStep();
  EXPECT_THAT(set.Get(), ElementsAre(0, 1, 2, 3, 5, 9));
  EXPECT_THAT(set.Delta(), ElementsAre(3));

  Aggregator<ArgMin, ArgMinOp> argmin("argmin");
  argmin.PrepareSlots(2);
  argmin.AggregateIn(0, {2.0, 7});
  argmin.AggregateIn(1, {1.0, 9});
  argmin.AggregateIn(1, {1.0, 4});
  argmin.MergeStep();
  EXPECT_EQ(argmin.Get().value, 1.0);
  EXPECT_EQ(argmin.Get().vertex, 4u);
}

// A floating-point sum is exact until it is read, so it is the same whichever thread ran which
// block, and whichever worker: nothing is lost to rounding in between (see exact_sum_test.cc).
TEST(AggregatorTest, FloatingPointSumsAreExactWhateverTheSlots) {
  for (size_t one : {0, 1, 2}) {
    SumAggregator<double> sum("sum");
    sum.PrepareSlots(3);
    sum.AggregateIn(0, 1e16);
    sum.AggregateIn(one, 1.0);  // would be lost to rounding next to 1e16 (the spacing there is 2)
    sum.AggregateIn(2, -1e16);
    sum.MergeStep();
    EXPECT_EQ(sum.Get(), 1.0);
    EXPECT_EQ(sum.Delta(), 1.0);
  }
}

TEST(AggregatorTest, EncodedDeltaAndValueRoundTrip) {
  // Two workers and a master, as the distributed layer uses them.
  SumAggregator<double> w1("x"), w2("x"), master("x");
  w1.AggregateIn(0, 2.5);
  w2.AggregateIn(0, 1.25);
  w1.MergeStep();
  w2.MergeStep();
  master.Set(10);
  ASSERT_TRUE(master.MergeEncodedDelta(Encoded(w1, true)).ok());
  ASSERT_TRUE(master.MergeEncodedDelta(Encoded(w2, true)).ok());
  EXPECT_EQ(master.Get(), 13.75);
  ASSERT_TRUE(w1.SetEncodedValue(Encoded(master, false)).ok());
  ASSERT_TRUE(w2.SetEncodedValue(Encoded(master, false)).ok());
  EXPECT_EQ(w1.Get(), 13.75);
  EXPECT_EQ(w2.Get(), 13.75);

  // A min merges encoded deltas as a min.
  MinAggregator<int64_t> m1("m"), m2("m");
  m1.AggregateIn(0, -4);
  m1.MergeStep();
  m2.Set(3);
  ASSERT_TRUE(m2.MergeEncodedDelta(Encoded(m1, true)).ok());
  EXPECT_EQ(m2.Get(), -4);

  // A variable-size value.
  Aggregator<std::vector<uint32_t>, UnionOp> s1("s"), s2("s");
  s1.AggregateIn(0, {4, 8});
  s1.MergeStep();
  s2.Set({1, 8});
  ASSERT_TRUE(s2.MergeEncodedDelta(Encoded(s1, true)).ok());
  EXPECT_THAT(s2.Get(), ElementsAre(1, 4, 8));
  ASSERT_TRUE(s1.SetEncodedValue(Encoded(s2, false)).ok());
  EXPECT_THAT(s1.Get(), ElementsAre(1, 4, 8));
}

TEST(AggregatorTest, BadEncodingsAreErrorsThatNameTheAggregator) {
  SumAggregator<double> sum("pagerank.change");
  sum.Set(1.5);
  const std::string good = Encoded(sum, false);
  for (const std::string& bad : {std::string("abc"), good + "x", std::string()}) {
    for (bool delta : {true, false}) {
      const absl::Status st = delta ? sum.MergeEncodedDelta(bad) : sum.SetEncodedValue(bad);
      EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(st.message(), HasSubstr("\"pagerank.change\""));
      EXPECT_EQ(sum.Get(), 1.5);  // untouched
    }
  }
}

TEST(AggregatorRegistryTest, RegisterFindAndOrder) {
  AggregatorRegistry registry;
  EXPECT_TRUE(registry.empty());
  auto* b = registry.Register<double>("b");
  auto* a = registry.Register<uint64_t, MaxOp<uint64_t>>("a");
  auto* c = registry.Register<int32_t, MinOp<int32_t>>("c");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(registry.empty());
  EXPECT_EQ(registry.Register<double>("b"), b);  // same name and type: the same aggregator
  EXPECT_EQ((registry.Register<double, MinOp<double>>("b")), nullptr);  // another op
  EXPECT_EQ(registry.Register<float>("b"), nullptr);                    // another type
  EXPECT_EQ(registry.Find("a"), a);
  EXPECT_EQ(registry.Find("c"), c);
  EXPECT_EQ(registry.Find("d"), nullptr);
  std::vector<std::string> names;
  registry.ForEach([&](const AggregatorBase& agg) { names.push_back(agg.name()); });
  EXPECT_THAT(names, ElementsAre("a", "b", "c"));

  // Slots prepared before or after registration take contributions from compute and outside.
  registry.PrepareSlots(4);
  auto* late = registry.Register<int64_t>("late");
  late->AggregateIn(3, 2);
  late->Aggregate(5);
  b->AggregateIn(3, 1.5);
  registry.MergeStep();
  EXPECT_EQ(late->Get(), 7);
  EXPECT_EQ(b->Get(), 1.5);
}

// --- Visibility during a run ---------------------------------------------------------------------

// 3000 vertices (three blocks). Every vertex adds 1 to "sum" and reports the value it reads
// through "seen.min"/"seen.max"; it also offers (its index mod 7, index) to an arg-min.
struct VisibilityProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint8_t;

  SumAggregator<uint64_t>* sum = nullptr;
  MinAggregator<uint64_t>* seen_min = nullptr;
  MaxAggregator<uint64_t>* seen_max = nullptr;
  Aggregator<ArgMin, ArgMinOp>* argmin = nullptr;
  // What the callbacks saw, per superstep.
  std::vector<uint64_t> post_sum, post_seen_min, post_seen_max, pre_sum;

  void Register(AggregatorRegistry& r) {
    sum = r.Register<uint64_t>("sum");
    seen_min = r.Register<uint64_t, MinOp<uint64_t>>("seen.min");
    seen_max = r.Register<uint64_t, MaxOp<uint64_t>>("seen.max");
    argmin = r.Register<ArgMin, ArgMinOp>("argmin");
  }
  void Compute(Context<VisibilityProgram>& ctx, std::span<const uint8_t>) const {
    const uint64_t seen = sum->Get();
    ctx.value() = seen;
    ctx.Aggregate(seen_min, seen);
    ctx.Aggregate(seen_max, seen);
    ctx.Aggregate(sum, uint64_t{1});
    ctx.Aggregate(argmin, ArgMin{static_cast<double>((ctx.index() + 3) % 7), ctx.index()});
  }
  absl::Status PreStep(uint64_t s) {
    pre_sum.push_back(sum->Get());
    if (s == 2) sum->Set(100000);
    if (s == 3) sum->Aggregate(7);  // merged with superstep 3's contributions
    return absl::OkStatus();
  }
  absl::Status PostStep(const StepStats&) {
    post_sum.push_back(sum->Get());
    post_seen_min.push_back(seen_min->Delta());
    post_seen_max.push_back(seen_max->Delta());
    return absl::OkStatus();
  }
};

TEST(AggregatorVisibilityTest, ComputeSeesStartOfStepCallbacksSeeMerged) {
  auto engine = MakeEngine(VisibilityProgram{}, MakeInput({}, bsptest::Numbered(3000)));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunSteps(5).ok());
  const VisibilityProgram& p = engine->program();
  constexpr uint64_t n = 3000;
  EXPECT_THAT(p.pre_sum, ElementsAre(0, n, 2 * n, 100000 + n, 100000 + 2 * n + 7));
  // Every vertex of a superstep read the same value: the one at the superstep's start.
  EXPECT_THAT(p.post_seen_min, ElementsAre(0, n, 100000, 100000 + n, 100000 + 2 * n + 7));
  EXPECT_THAT(p.post_seen_max, ElementsAre(0, n, 100000, 100000 + n, 100000 + 2 * n + 7));
  EXPECT_THAT(p.post_sum,
              ElementsAre(n, 2 * n, 100000 + n, 100000 + 2 * n + 7, 100000 + 3 * n + 7));
  EXPECT_EQ(p.sum->Delta(), n);
  for (uint64_t v : engine->values()) ASSERT_EQ(v, 100000 + 2 * n + 7);
  // (index + 3) % 7 is 0 first at index 4.
  EXPECT_EQ(p.argmin->Get().value, 0.0);
  EXPECT_EQ(p.argmin->Get().vertex, 4u);
}

}  // namespace
}  // namespace lockstep::bsp
