// The original framework's bspgraph tests (docs/design.md §9), ported to lockstep's
// engine: Exchange, Broadcast, Aggregator, Relay and ComputeError.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/executor.h"
#include "tbb/global_control.h"
#include "test_graphs.h"

namespace lockstep::bsp {
namespace {

using bsptest::MakeEngine;
using bsptest::MakeInput;
using bsptest::ValueOf;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Step 0: each vertex votes to halt and sends 42 to the other by ID; step 1: the message wakes it
// and it takes the value.
struct ExchangeProgram {
  using VertexValue = int64_t;
  using EdgeValue = NoValue;
  using Message = int64_t;

  void Compute(Context<ExchangeProgram>& ctx, std::span<const int64_t> messages) const {
    if (ctx.superstep() == 0) {
      ctx.VoteToHalt();
      ctx.SendTo(VertexIdFromExternal(ctx.external_id() == "0" ? "1" : "0"), 42);
      return;
    }
    for (int64_t m : messages) ctx.value() = m;
  }
};

TEST(OriginalBspGraphTest, Exchange) {
  auto engine = MakeEngine(ExchangeProgram{}, MakeInput({}, {"0", "1"}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunSteps(1).ok());
  EXPECT_EQ(ValueOf(*engine, "0"), 0);
  EXPECT_EQ(ValueOf(*engine, "1"), 0);
  ASSERT_TRUE(exec.RunSteps(1).ok());
  EXPECT_EQ(exec.supersteps(), 2u);
  EXPECT_EQ(ValueOf(*engine, "0"), 42);
  EXPECT_EQ(ValueOf(*engine, "1"), 42);
}

// Vertex "0" starts at 42; every step every vertex broadcasts its value and takes what it receives.
struct BroadcastProgram {
  using VertexValue = int64_t;
  using EdgeValue = NoValue;
  using Message = int64_t;

  int64_t Init(const Context<BroadcastProgram>& ctx) const {
    return ctx.external_id() == "0" ? 42 : 0;
  }
  void Compute(Context<BroadcastProgram>& ctx, std::span<const int64_t> messages) const {
    ctx.SendToAllNeighbors(ctx.value());
    for (int64_t m : messages) ctx.value() = m;
  }
};

TEST(OriginalBspGraphTest, Broadcast) {
  auto engine = MakeEngine(BroadcastProgram{}, MakeInput({{"0", "1"}, {"0", "2"}, {"0", "3"}}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunSteps(1).ok());
  EXPECT_THAT(engine->values(), ElementsAre(42, 0, 0, 0));
  ASSERT_TRUE(exec.RunSteps(1).ok());
  EXPECT_THAT(engine->values(), ElementsAre(42, 42, 42, 42));
}

struct CountProgram {
  using VertexValue = uint8_t;
  using EdgeValue = NoValue;
  using Message = uint8_t;

  CountAggregator* counter = nullptr;

  void Register(AggregatorRegistry& aggregators) {
    counter = aggregators.Register<uint64_t>("counter");
  }
  void Compute(Context<CountProgram>& ctx, std::span<const uint8_t>) const {
    ctx.Aggregate(counter, uint64_t{1});
  }
};

TEST(OriginalBspGraphTest, Aggregator) {
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 4);
  auto engine = MakeEngine(CountProgram{}, MakeInput({}, bsptest::Numbered(1000)));
  ASSERT_NE(engine, nullptr);
  CountAggregator* counter = engine->program().counter;
  ASSERT_NE(counter, nullptr);
  EXPECT_EQ(engine->aggregators().Find("counter"), counter);
  counter->Aggregate(5);  // from outside compute, before the run
  EXPECT_EQ(counter->Get(), 0u);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunSteps(1).ok());
  EXPECT_EQ(counter->Get(), 1005u);
  EXPECT_EQ(counter->Delta(), 1005u);
}

// graph1.vertex sends 42 along its edge to graph2.vertex in superstep 0; graph2.vertex stores it
// and replies to the sender by ID in superstep 1; graph1.vertex stores the reply in superstep 2.
struct RelayMessage {
  int64_t value;
  VertexId from;
};

struct RelayProgram {
  using VertexValue = int64_t;
  using EdgeValue = NoValue;
  using Message = RelayMessage;

  void Compute(Context<RelayProgram>& ctx, std::span<const RelayMessage> messages) const {
    if (ctx.superstep() == 0 && ctx.external_id() == "graph1.vertex") {
      ctx.SendToAllNeighbors({42, ctx.id()});
    }
    for (const RelayMessage& m : messages) {
      ctx.value() = m.value;
      if (ctx.external_id() == "graph2.vertex") ctx.SendTo(m.from, {m.value, ctx.id()});
    }
  }
};

TEST(OriginalBspGraphTest, Relay) {
  const GraphInput input = MakeInput({{"graph1.vertex", "graph2.vertex"}});
  const partition::Range split = bsptest::Split(2);
  const uint64_t part1 = bsptest::OwnerOf(split, "graph1.vertex");
  const uint64_t part2 = bsptest::OwnerOf(split, "graph2.vertex");
  ASSERT_NE(part1, part2) << "the test needs the vertices in different parts";

  auto g1 = MakeEngine(RelayProgram{}, input, split, part1);
  auto g2 = MakeEngine(RelayProgram{}, input, split, part2);
  ASSERT_NE(g1, nullptr);
  ASSERT_NE(g2, nullptr);
  ASSERT_EQ(g1->num_local_vertices(), 1u);
  ASSERT_EQ(g2->num_local_vertices(), 1u);
  bsptest::QueueingRelayer r1, r2;
  g1->SetRelayer(&r1);
  g2->SetRelayer(&r2);
  Executor x1(*g1, g1->ProgramCallbacks());
  Executor x2(*g2, g2->ProgramCallbacks());

  // Both executors run superstep s, then the barrier hands each engine what the other relayed.
  auto step = [&] {
    ASSERT_TRUE(x1.RunSteps(1).ok());
    ASSERT_TRUE(x2.RunSteps(1).ok());
    for (RelayBatch& b : r1.TakePending()) {
      ASSERT_EQ(b.to_partition, part2);
      ASSERT_TRUE(g2->AcceptRelayed(std::move(b)).ok());
    }
    for (RelayBatch& b : r2.TakePending()) {
      ASSERT_EQ(b.to_partition, part1);
      ASSERT_TRUE(g1->AcceptRelayed(std::move(b)).ok());
    }
  };

  step();  // superstep 0: graph1.vertex sends along its (remote) edge
  ASSERT_EQ(r1.sent().size(), 1u);
  EXPECT_EQ(r1.sent()[0].superstep, 0u);
  EXPECT_EQ(r1.sent()[0].from_partition, part1);
  EXPECT_THAT(r1.sent()[0].ids, ElementsAre(VertexIdFromExternal("graph2.vertex")));
  EXPECT_TRUE(r2.sent().empty());
  EXPECT_EQ(ValueOf(*g1, "graph1.vertex"), 0);
  EXPECT_EQ(ValueOf(*g2, "graph2.vertex"), 0);

  step();  // superstep 1: graph2.vertex stores 42 and replies by ID
  EXPECT_EQ(ValueOf(*g1, "graph1.vertex"), 0);
  EXPECT_EQ(ValueOf(*g2, "graph2.vertex"), 42);
  ASSERT_EQ(r2.sent().size(), 1u);
  EXPECT_EQ(r2.sent()[0].superstep, 1u);
  EXPECT_EQ(r2.sent()[0].from_partition, part2);
  EXPECT_THAT(r2.sent()[0].ids, ElementsAre(VertexIdFromExternal("graph1.vertex")));

  step();  // superstep 2: graph1.vertex stores the reply
  EXPECT_EQ(ValueOf(*g1, "graph1.vertex"), 42);
  EXPECT_EQ(ValueOf(*g2, "graph2.vertex"), 42);
  EXPECT_EQ(r1.sent().size(), 1u);
  EXPECT_EQ(r2.sent().size(), 1u);
}

struct FailingProgram {
  using VertexValue = uint8_t;
  using EdgeValue = NoValue;
  using Message = uint8_t;

  absl::Status Compute(Context<FailingProgram>& ctx, std::span<const uint8_t>) const {
    if (ctx.external_id() == "50") return absl::InternalError("something went wrong");
    return absl::OkStatus();
  }
};

TEST(OriginalBspGraphTest, ComputeError) {
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 4);
  auto engine = MakeEngine(FailingProgram{}, MakeInput({}, bsptest::Numbered(1000)));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  const absl::Status st = exec.RunToCompletion();
  EXPECT_EQ(st.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(st.message(), AllOf(HasSubstr("vertex '50'"), HasSubstr("something went wrong")));
  EXPECT_EQ(exec.supersteps(), 0u);
}

}  // namespace
}  // namespace lockstep::bsp
