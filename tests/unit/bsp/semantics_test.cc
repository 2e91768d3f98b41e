// The engine's and executor's semantics (docs/design.md §3.2): message timing, halting and waking,
// when a job stops, callbacks and their stats, cancellation, sending by ID, in-edges, edge values,
// and what combiner and non-combiner programs receive.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/executor.h"
#include "test_graphs.h"

namespace lockstep::bsp {
namespace {

using bsptest::MakeEngine;
using bsptest::MakeInput;
using bsptest::ValueOf;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string StatsText(const StepStats& s) {
  return absl::StrCat("s=", s.superstep, " active=", s.active, " messages=", s.messages,
                      " unhalted=", s.unhalted);
}

// --- Message timing
// -------------------------------------------------------------------------------

// "a" sends its superstep number to "b" in supersteps 0 and 2; "b" counts, per superstep, what it
// receives and the sum of the payloads. Nobody halts before superstep 5.
struct TimingValue {
  std::array<uint32_t, 8> received{};
  std::array<uint64_t, 8> payload{};
};

struct TimingProgram {
  using VertexValue = TimingValue;
  using EdgeValue = NoValue;
  using Message = uint64_t;

  void Compute(Context<TimingProgram>& ctx, std::span<const uint64_t> messages) const {
    const uint64_t s = ctx.superstep();
    ctx.value().received[s] = static_cast<uint32_t>(messages.size());
    for (uint64_t m : messages) ctx.value().payload[s] += m + 100;
    if (ctx.external_id() == "a" && (s == 0 || s == 2)) ctx.SendToAllNeighbors(s);
    if (s >= 5) ctx.VoteToHalt();
  }
};

TEST(MessageTest, SentInSuperstepSArriveInSPlusOneOnly) {
  auto engine = MakeEngine(TimingProgram{}, MakeInput({{"a", "b"}}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_EQ(exec.supersteps(), 6u);
  const TimingValue& b = ValueOf(*engine, "b");
  EXPECT_THAT(b.received, ElementsAre(0, 1, 0, 1, 0, 0, 0, 0));
  EXPECT_THAT(b.payload, ElementsAre(0, 100, 0, 102, 0, 0, 0, 0));
  EXPECT_THAT(ValueOf(*engine, "a").received, ElementsAre(0, 0, 0, 0, 0, 0, 0, 0));
}

// Records in a bit mask the supersteps in which each vertex ran. "b" and "c" vote to halt every
// time; "a" stays awake until superstep 3 and messages "b" in superstep 2 only.
struct WakeProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint8_t;

  void Compute(Context<WakeProgram>& ctx, std::span<const uint8_t>) const {
    ctx.value() |= uint64_t{1} << ctx.superstep();
    if (ctx.external_id() == "a") {
      if (ctx.superstep() == 2) ctx.SendToAllNeighbors(1);
      if (ctx.superstep() < 3) return;
    }
    ctx.VoteToHalt();
  }
};

TEST(MessageTest, MessageWakesHaltedVertex) {
  auto engine = MakeEngine(WakeProgram{}, MakeInput({{"a", "b"}}, {"c"}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_EQ(exec.supersteps(), 4u);
  EXPECT_EQ(ValueOf(*engine, "a"), 0b1111u);
  EXPECT_EQ(ValueOf(*engine, "b"), 0b1001u);  // ran in superstep 0, halted, woken in 3
  EXPECT_EQ(ValueOf(*engine, "c"), 0b0001u);
}

// --- Stopping ------------------------------------------------------------------------------------

// A token passed along 0 -> 1 -> 2 -> 3; every vertex votes to halt every time.
struct TokenProgram {
  using VertexValue = uint32_t;
  using EdgeValue = NoValue;
  using Message = uint32_t;

  void Compute(Context<TokenProgram>& ctx, std::span<const uint32_t> messages) const {
    ctx.VoteToHalt();
    if (ctx.superstep() == 0 && ctx.external_id() == "0") {
      ctx.SendToAllNeighbors(1);
      return;
    }
    for (uint32_t m : messages) {
      ctx.value() = m;
      ctx.SendToAllNeighbors(m + 1);
    }
  }
};

TEST(StopTest, StopsWhenAllHaltedAndNoMessagePending) {
  auto engine = MakeEngine(TokenProgram{}, MakeInput({{"0", "1"}, {"1", "2"}, {"2", "3"}}));
  ASSERT_NE(engine, nullptr);
  std::vector<std::string> progress;
  ExecutorOptions options;
  options.progress = [&](const StepStats& s) { progress.push_back(StatsText(s)); };
  Executor exec(*engine, engine->ProgramCallbacks(), options);
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_TRUE(exec.stopped());
  EXPECT_EQ(exec.supersteps(), 4u);
  EXPECT_THAT(engine->values(), ElementsAre(0, 1, 2, 3));
  // Every vertex halted in superstep 0 but a message was pending, so the job went on.
  EXPECT_THAT(
      progress,
      ElementsAre("s=0 active=4 messages=1 unhalted=0", "s=1 active=1 messages=1 unhalted=0",
                  "s=2 active=1 messages=1 unhalted=0", "s=3 active=1 messages=0 unhalted=0"));
  // A stopped executor runs nothing more.
  ASSERT_TRUE(exec.RunSteps(5).ok());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_EQ(exec.supersteps(), 4u);
}

TEST(StopTest, DefaultKeepRunning) {
  EXPECT_FALSE(DefaultKeepRunning(StepStats{.active = 10}));
  EXPECT_TRUE(DefaultKeepRunning(StepStats{.messages = 1}));
  EXPECT_TRUE(DefaultKeepRunning(StepStats{.unhalted = 1}));
}

TEST(StopTest, EmptyGraphStopsAfterOneSuperstep) {
  auto engine = MakeEngine(TokenProgram{}, GraphInput{});
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_EQ(exec.supersteps(), 1u);
}

struct NeverHaltProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint8_t;

  void Compute(Context<NeverHaltProgram>& ctx, std::span<const uint8_t>) const { ++ctx.value(); }
};

TEST(StopTest, MaxSuperstepsExceededIsAnError) {
  auto engine = MakeEngine(NeverHaltProgram{}, MakeInput({{"a", "b"}}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks(), ExecutorOptions{.max_supersteps = 5});
  const absl::Status st = exec.RunToCompletion();
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(st.message(),
              AllOf(HasSubstr("5 supersteps"), HasSubstr("superstep limit (max_supersteps)")));
  EXPECT_EQ(exec.supersteps(), 5u);
  EXPECT_THAT(engine->values(), ElementsAre(5, 5));
}

TEST(StopTest, RunStepsStopsAtNWithoutError) {
  auto engine = MakeEngine(NeverHaltProgram{}, MakeInput({{"a", "b"}}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks(), ExecutorOptions{.max_supersteps = 7});
  ASSERT_TRUE(exec.RunSteps(3).ok());
  EXPECT_EQ(exec.supersteps(), 3u);
  EXPECT_FALSE(exec.stopped());
  EXPECT_THAT(engine->values(), ElementsAre(3, 3));
  ASSERT_TRUE(exec.RunSteps(2).ok());
  EXPECT_EQ(exec.supersteps(), 5u);
  ASSERT_TRUE(exec.RunSteps(0).ok());
  EXPECT_EQ(exec.supersteps(), 5u);
  // RunToCompletion continues from there and counts the cap from superstep 0.
  EXPECT_EQ(exec.RunToCompletion().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(exec.supersteps(), 7u);
}

TEST(StopTest, RunStepsEndsEarlyWhenTheJobStops) {
  auto engine = MakeEngine(TokenProgram{}, MakeInput({{"0", "1"}, {"1", "2"}, {"2", "3"}}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunSteps(100).ok());
  EXPECT_EQ(exec.supersteps(), 4u);
  EXPECT_TRUE(exec.stopped());
}

// --- Callbacks -----------------------------------------------------------------------------------

struct Log {
  std::mutex mu;
  std::vector<std::string> lines;
  void Add(std::string line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(std::move(line));
  }
};

// a -> b -> c; every vertex sends to its neighbours in superstep 0 only and always votes to halt.
struct LoggingProgram {
  using VertexValue = uint8_t;
  using EdgeValue = NoValue;
  using Message = uint8_t;

  std::shared_ptr<Log> log = std::make_shared<Log>();

  void Compute(Context<LoggingProgram>& ctx, std::span<const uint8_t> messages) const {
    log->Add(absl::StrCat("compute ", ctx.superstep(), " ", ctx.external_id(), " got ",
                          messages.size()));
    if (ctx.superstep() == 0) ctx.SendToAllNeighbors(1);
    ctx.VoteToHalt();
  }
  absl::Status PreStep(uint64_t superstep) {
    log->Add(absl::StrCat("pre ", superstep));
    return absl::OkStatus();
  }
  absl::Status PostStep(const StepStats& stats) {
    log->Add("post " + StatsText(stats));
    return absl::OkStatus();
  }
  bool KeepRunning(const StepStats& stats) {
    log->Add("keep " + StatsText(stats));
    return DefaultKeepRunning(stats);
  }
};

TEST(CallbackTest, OrderSuperstepsAndStats) {
  auto engine = MakeEngine(LoggingProgram{}, MakeInput({{"a", "b"}, {"b", "c"}}));
  ASSERT_NE(engine, nullptr);
  std::shared_ptr<Log> log = engine->program().log;
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_EQ(exec.supersteps(), 2u);
  EXPECT_THAT(log->lines, ElementsAre("pre 0",                                      //
                                      "compute 0 a got 0",                          //
                                      "compute 0 b got 0",                          //
                                      "compute 0 c got 0",                          //
                                      "post s=0 active=3 messages=2 unhalted=0",    //
                                      "keep s=0 active=3 messages=2 unhalted=0",    //
                                      "pre 1",                                      //
                                      "compute 1 b got 1",                          //
                                      "compute 1 c got 1",                          //
                                      "post s=1 active=2 messages=0 unhalted=0",    //
                                      "keep s=1 active=2 messages=0 unhalted=0"));  //
}

TEST(CallbackTest, KeepRunningOverridesTheDefaultRule) {
  auto engine = MakeEngine(NeverHaltProgram{}, MakeInput({{"a", "b"}}));
  ASSERT_NE(engine, nullptr);
  Callbacks cb;
  cb.keep_running = [](const StepStats& s) -> absl::StatusOr<bool> { return s.superstep < 2; };
  Executor exec(*engine, std::move(cb));
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_EQ(exec.supersteps(), 3u);
  EXPECT_TRUE(exec.stopped());
}

TEST(CallbackTest, CallbackErrorsFailTheJob) {
  const GraphInput input = MakeInput({{"a", "b"}});
  {
    auto engine = MakeEngine(NeverHaltProgram{}, input);
    ASSERT_NE(engine, nullptr);
    Callbacks cb;
    cb.pre_step = [](uint64_t s) {
      return s == 2 ? absl::AbortedError("pre failed") : absl::OkStatus();
    };
    Executor exec(*engine, std::move(cb));
    EXPECT_EQ(exec.RunToCompletion(), absl::AbortedError("pre failed"));
    EXPECT_EQ(exec.supersteps(), 2u);
    EXPECT_THAT(engine->values(), ElementsAre(2, 2));  // superstep 2 did not run
  }
  {
    auto engine = MakeEngine(NeverHaltProgram{}, input);
    ASSERT_NE(engine, nullptr);
    Callbacks cb;
    cb.post_step = [](const StepStats& s) {
      return s.superstep == 1 ? absl::DataLossError("post failed") : absl::OkStatus();
    };
    Executor exec(*engine, std::move(cb));
    EXPECT_EQ(exec.RunSteps(10), absl::DataLossError("post failed"));
    EXPECT_EQ(exec.supersteps(), 2u);
  }
  {
    auto engine = MakeEngine(NeverHaltProgram{}, input);
    ASSERT_NE(engine, nullptr);
    Callbacks cb;
    cb.keep_running = [](const StepStats&) -> absl::StatusOr<bool> {
      return absl::UnavailableError("keep failed");
    };
    Executor exec(*engine, std::move(cb));
    EXPECT_EQ(exec.RunToCompletion(), absl::UnavailableError("keep failed"));
    EXPECT_EQ(exec.supersteps(), 1u);
  }
}

TEST(CallbackTest, LocalExecutorFactoryPassesOptionsAndCallbacks) {
  auto engine = MakeEngine(NeverHaltProgram{}, MakeInput({{"a", "b"}}));
  ASSERT_NE(engine, nullptr);
  std::vector<uint64_t> pre;
  Callbacks cb;
  cb.pre_step = [&](uint64_t s) {
    pre.push_back(s);
    return absl::OkStatus();
  };
  auto exec = LocalExecutorFactory(ExecutorOptions{.max_supersteps = 3})(*engine, std::move(cb));
  ASSERT_TRUE(exec.ok());
  EXPECT_EQ(&(*exec)->engine(), engine.get());
  EXPECT_EQ((*exec)->RunToCompletion().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(pre, ElementsAre(0, 1, 2));
}

// --- Cancellation --------------------------------------------------------------------------------

TEST(CancelTest, BeforeTheRun) {
  auto engine = MakeEngine(NeverHaltProgram{}, MakeInput({{"a", "b"}}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  exec.Cancel();
  EXPECT_EQ(exec.RunToCompletion().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(exec.RunSteps(1).code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(exec.supersteps(), 0u);
  EXPECT_THAT(engine->values(), ElementsAre(0, 0));
}

TEST(CancelTest, FromACallback) {
  auto engine = MakeEngine(NeverHaltProgram{}, MakeInput({{"a", "b"}}));
  ASSERT_NE(engine, nullptr);
  Executor* self = nullptr;
  Callbacks cb;
  cb.post_step = [&](const StepStats& s) {
    if (s.superstep == 2) self->Cancel();
    return absl::OkStatus();
  };
  Executor exec(*engine, std::move(cb));
  self = &exec;
  EXPECT_EQ(exec.RunToCompletion().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(exec.supersteps(), 3u);
  EXPECT_THAT(engine->values(), ElementsAre(3, 3));
}

// Vertex "a" cancels the job from compute in superstep 1.
struct CancellingProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint8_t;

  std::shared_ptr<std::atomic<Executor*>> executor = std::make_shared<std::atomic<Executor*>>();

  void Compute(Context<CancellingProgram>& ctx, std::span<const uint8_t>) const {
    ++ctx.value();
    if (ctx.superstep() == 1 && ctx.external_id() == "a") executor->load()->Cancel();
  }
};

TEST(CancelTest, FromCompute) {
  auto engine = MakeEngine(CancellingProgram{}, MakeInput({{"a", "b"}}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  engine->program().executor->store(&exec);
  const absl::Status st = exec.RunToCompletion();
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(exec.supersteps(), 1u);  // superstep 1 did not complete
}

TEST(CancelTest, FromAnotherThread) {
  auto engine = MakeEngine(NeverHaltProgram{}, MakeInput({{"a", "b"}}, bsptest::Numbered(3000)));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks(),
                ExecutorOptions{.max_supersteps = uint64_t{1} << 40});
  absl::Status st;
  std::thread runner([&] { st = exec.RunToCompletion(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  exec.Cancel();
  runner.join();
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled);
}

// --- Sending by ID -------------------------------------------------------------------------------

// "a" sends 7 to the vertex named by `target` (no edge needed); everybody else sums what it gets.
struct SendToProgram {
  using VertexValue = uint64_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;

  std::string target;

  void Compute(Context<SendToProgram>& ctx, std::span<const uint64_t> messages) const {
    for (uint64_t m : messages) ctx.value() += m;
    if (ctx.superstep() == 0 && ctx.external_id() == "a") {
      ctx.SendTo(VertexIdFromExternal(target), 7);
      ctx.SendTo(VertexIdFromExternal(target), 8);
    }
    ctx.VoteToHalt();
  }
};

TEST(SendToTest, LocalVertex) {
  auto engine = MakeEngine(SendToProgram{.target = "c"}, MakeInput({{"a", "b"}}, {"c"}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_EQ(exec.supersteps(), 2u);
  EXPECT_EQ(ValueOf(*engine, "c"), 15u);
  EXPECT_EQ(ValueOf(*engine, "b"), 0u);
}

TEST(SendToTest, UnknownIdFailsTheJobNamingIt) {
  const std::string unknown = ToString(VertexIdFromExternal("nobody"));
  for (bool with_relayer : {false, true}) {
    SCOPED_TRACE(with_relayer ? "with a relayer" : "without a relayer");
    auto engine = MakeEngine(SendToProgram{.target = "nobody"}, MakeInput({{"a", "b"}}));
    ASSERT_NE(engine, nullptr);
    // With one partition the unknown ID is the engine's own, so a relayer must not take it.
    bsptest::QueueingRelayer relayer;
    if (with_relayer) engine->SetRelayer(&relayer);
    Executor exec(*engine, engine->ProgramCallbacks());
    const absl::Status st = exec.RunToCompletion();
    EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(st.message(), AllOf(HasSubstr(unknown), HasSubstr("'a'")));
    EXPECT_THAT(relayer.sent(), IsEmpty());
  }
}

TEST(SendToTest, UuidTargetsAreUsedAsTheyAre) {
  const std::string uuid = "123e4567-e89b-42d3-a456-426614174000";
  auto engine = MakeEngine(SendToProgram{.target = uuid}, MakeInput({{"a", uuid}}));
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_EQ(ValueOf(*engine, uuid), 15u);
}

// --- In-edges and edge values --------------------------------------------------------------------

struct EdgeRecord {
  std::mutex mu;
  std::map<std::string, std::vector<std::pair<std::string, double>>> out, in;
  std::map<VertexId, std::string> names;
};

// Records each vertex's out- and in-edges (neighbour name, value) in superstep 0 and sends along
// its in-edges; in superstep 1 it stores the number of messages it got.
struct EdgeProgram {
  using VertexValue = uint32_t;
  using EdgeValue = double;
  using Message = uint8_t;
  static constexpr bool kNeedsInEdges = true;

  std::shared_ptr<EdgeRecord> record;

  void Compute(Context<EdgeProgram>& ctx, std::span<const uint8_t> messages) const {
    ctx.VoteToHalt();
    if (ctx.superstep() == 1) {
      ctx.value() = static_cast<uint32_t>(messages.size());
      return;
    }
    std::vector<std::pair<std::string, double>> out, in;
    EXPECT_EQ(ctx.out_slots().size(), ctx.out_values().size());
    EXPECT_EQ(ctx.out_slots().size(), ctx.out_degree());
    EXPECT_EQ(ctx.in_slots().size(), ctx.in_values().size());
    for (size_t i = 0; i < ctx.out_slots().size(); ++i) {
      out.emplace_back(record->names.at(ctx.SlotId(ctx.out_slots()[i])), ctx.out_values()[i]);
    }
    for (size_t i = 0; i < ctx.in_slots().size(); ++i) {
      in.emplace_back(record->names.at(ctx.SlotId(ctx.in_slots()[i])), ctx.in_values()[i]);
      ctx.Send(ctx.in_slots()[i], 1);
    }
    std::lock_guard<std::mutex> lock(record->mu);
    record->out[ctx.external_id()] = std::move(out);
    record->in[ctx.external_id()] = std::move(in);
  }
};

using Neighbors = std::vector<std::pair<std::string, double>>;

TEST(EdgeTest, InEdgesAndEdgeValues) {
  // Parallel a -> b edges and a self-loop b -> b; "d" has no edges.
  const GraphInput input = MakeInput({{"a", "b"}, {"c", "b"}, {"b", "b"}, {"a", "b"}, {"b", "c"}},
                                     {"d"}, {1.5, 2.5, 4, 0.5, 3});
  auto record = std::make_shared<EdgeRecord>();
  for (const std::string& id : input.external_ids) record->names[VertexIdFromExternal(id)] = id;
  auto engine = MakeEngine(EdgeProgram{.record = record}, input);
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());

  EXPECT_EQ(record->out["a"], (Neighbors{{"b", 1.5}, {"b", 0.5}}));
  EXPECT_EQ(record->out["b"], (Neighbors{{"b", 4}, {"c", 3}}));
  EXPECT_EQ(record->out["c"], (Neighbors{{"b", 2.5}}));
  EXPECT_EQ(record->out["d"], Neighbors{});
  EXPECT_EQ(record->in["a"], Neighbors{});
  EXPECT_EQ(record->in["b"], (Neighbors{{"a", 1.5}, {"c", 2.5}, {"b", 4}, {"a", 0.5}}));
  EXPECT_EQ(record->in["c"], (Neighbors{{"b", 3}}));
  EXPECT_EQ(record->in["d"], Neighbors{});
  // Sending along in-edges reaches the in-neighbours, once per edge.
  EXPECT_EQ(ValueOf(*engine, "a"), 2u);
  EXPECT_EQ(ValueOf(*engine, "b"), 2u);  // from c's in-edge b -> c and its own self-loop
  EXPECT_EQ(ValueOf(*engine, "c"), 1u);
  EXPECT_EQ(ValueOf(*engine, "d"), 0u);
}

TEST(EdgeTest, EdgeValuesDefaultToOneWithoutWeights) {
  const GraphInput input = MakeInput({{"a", "b"}, {"b", "a"}});
  auto record = std::make_shared<EdgeRecord>();
  for (const std::string& id : input.external_ids) record->names[VertexIdFromExternal(id)] = id;
  auto engine = MakeEngine(EdgeProgram{.record = record}, input);
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  EXPECT_EQ(record->out["a"], (Neighbors{{"b", 1.0}}));
  EXPECT_EQ(record->in["a"], (Neighbors{{"b", 1.0}}));
}

// Without kNeedsInEdges the topology has no in-edges at all.
TEST(EdgeTest, NoInEdgesUnlessAsked) {
  auto engine = MakeEngine(TokenProgram{}, MakeInput({{"0", "1"}}));
  ASSERT_NE(engine, nullptr);
  EXPECT_FALSE(engine->topology().has_in_edges());
  auto with_in =
      MakeEngine(EdgeProgram{.record = std::make_shared<EdgeRecord>()}, MakeInput({{"0", "1"}}));
  ASSERT_NE(with_in, nullptr);
  EXPECT_TRUE(with_in->topology().has_in_edges());
}

// --- Combiner and non-combiner programs ----------------------------------------------------------

struct Inbox {
  std::mutex mu;
  std::vector<std::vector<uint64_t>> by_superstep;
};

// In superstep 0 every vertex except "0" sends 10 * index + i along its i-th out-edge; in
// superstep 1 "0" records what it got. kCombine picks the program's shape.
template <bool kCombine>
struct FanInProgram {
  using VertexValue = uint8_t;
  using EdgeValue = NoValue;
  using Message = uint64_t;

  std::shared_ptr<Inbox> inbox;

  static void Combine(uint64_t& into, const uint64_t& m) requires kCombine { into += m; }
  void Compute(Context<FanInProgram>& ctx, std::span<const uint64_t> messages) const {
    ctx.VoteToHalt();
    if (ctx.superstep() == 0) {
      const auto slots = ctx.out_slots();
      for (size_t i = 0; i < slots.size(); ++i) ctx.Send(slots[i], 10 * ctx.index() + i);
      return;
    }
    std::lock_guard<std::mutex> lock(inbox->mu);
    inbox->by_superstep.emplace_back(messages.begin(), messages.end());
  }
};

using CombiningFanIn = FanInProgram<true>;
using PlainFanIn = FanInProgram<false>;

static_assert(HasCombiner<CombiningFanIn>);
static_assert(!HasCombiner<PlainFanIn>);

// 2500 vertices (three blocks of compute) all point at "0"; "5" has three parallel edges to it.
GraphInput FanInGraph() {
  std::vector<bsptest::Edge> edges;
  for (int v = 2499; v >= 1; --v) {
    edges.push_back({std::to_string(v), "0"});
    if (v == 5) {
      edges.push_back({"5", "0"});
      edges.push_back({"5", "0"});
    }
  }
  return MakeInput(edges);
}

TEST(CombinerTest, NonCombinerGetsEveryMessageInSenderOrder) {
  auto engine = MakeEngine(PlainFanIn{.inbox = std::make_shared<Inbox>()}, FanInGraph());
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  std::vector<uint64_t> expected;
  for (uint64_t v = 1; v < 2500; ++v) {
    expected.push_back(10 * v);
    if (v == 5) {
      expected.push_back(51);
      expected.push_back(52);
    }
  }
  const auto& inbox = engine->program().inbox->by_superstep;
  ASSERT_EQ(inbox.size(), 1u);
  EXPECT_THAT(inbox[0], ElementsAreArray(expected));
}

TEST(CombinerTest, CombinerGetsOneCombinedMessage) {
  auto engine = MakeEngine(CombiningFanIn{.inbox = std::make_shared<Inbox>()}, FanInGraph());
  ASSERT_NE(engine, nullptr);
  Executor exec(*engine, engine->ProgramCallbacks());
  ASSERT_TRUE(exec.RunToCompletion().ok());
  uint64_t sum = 51 + 52;
  for (uint64_t v = 1; v < 2500; ++v) sum += 10 * v;
  const auto& inbox = engine->program().inbox->by_superstep;
  ASSERT_EQ(inbox.size(), 1u);
  EXPECT_THAT(inbox[0], ElementsAre(sum));
}

}  // namespace
}  // namespace lockstep::bsp
