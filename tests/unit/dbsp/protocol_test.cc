// The distributed protocol without sockets (docs/design.md §5): the transition table pair by pair,
// and both roles' state machines driven by fake steps — duplicate, out-of-order and unknown steps,
// a release for a barrier a worker is not in, relay batches outside their window, and an abort in
// every state.
#include "protocol/protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lockstep::dbsp::protocol {
namespace {

using ::testing::HasSubstr;

Step At(Barrier b, uint64_t superstep = 0) {
  Step s;
  s.barrier = b;
  s.superstep = superstep;
  return s;
}

std::string Message(const absl::Status& st) { return std::string(st.message()); }

// Every (state, event) pair against the expected next state, written out here independently of
// the table: a new phase has to be added to both.
TEST(TransitionTableTest, EveryStateAndEventPair) {
  const std::map<std::pair<Barrier, Event>, Position> expected = {
      {{Barrier::kAwaitingJob, Event::kAssign}, {Barrier::kPre, 7}},
      {{Barrier::kPre, Event::kRelease}, {Barrier::kPost, 7}},
      {{Barrier::kPost, Event::kRelease}, {Barrier::kPostKeepRunning, 7}},
      {{Barrier::kPostKeepRunning, Event::kRelease}, {Barrier::kPre, 8}},
      {{Barrier::kPostKeepRunning, Event::kReleaseStop}, {Barrier::kExecutedGraph, 7}},
      {{Barrier::kPostKeepRunning, Event::kReleaseCheckpoint}, {Barrier::kCheckpoint, 8}},
      {{Barrier::kCheckpoint, Event::kRelease}, {Barrier::kPre, 7}},
      {{Barrier::kExecutedGraph, Event::kRelease}, {Barrier::kPersistedResults, 7}},
      {{Barrier::kPersistedResults, Event::kRelease}, {Barrier::kCompletedJob, 7}},
      {{Barrier::kCompletedJob, Event::kRelease}, {Barrier::kDone, 7}},
  };
  int pairs = 0;
  for (Barrier b : kAllBarriers) {
    for (Event e : kAllEvents) {
      ++pairs;
      SCOPED_TRACE(std::string(Name(b)) + " + " + Name(e));
      const std::optional<Position> next = Next({b, 7}, e);
      if (e == Event::kAbort) {
        if (IsFinal(b)) {
          EXPECT_FALSE(next.has_value());
        } else {
          ASSERT_TRUE(next.has_value());
          EXPECT_EQ(next->barrier, Barrier::kAborted);
        }
        continue;
      }
      const auto it = expected.find({b, e});
      if (it == expected.end()) {
        EXPECT_FALSE(next.has_value()) << "to " << Describe(*next);
      } else {
        ASSERT_TRUE(next.has_value());
        EXPECT_EQ(*next, it->second) << Describe(*next);
      }
    }
  }
  EXPECT_EQ(pairs, 10 * 5);
}

TEST(TransitionTableTest, NamesAndDescriptions) {
  EXPECT_EQ(Describe({Barrier::kPost, 3}), "POST of superstep 3");
  EXPECT_EQ(Describe({Barrier::kExecutedGraph, 3}), "EXECUTED_GRAPH");
  EXPECT_TRUE(IsBarrier(Barrier::kPre));
  EXPECT_FALSE(IsBarrier(Barrier::kAwaitingJob));
  EXPECT_FALSE(IsBarrier(Barrier::kDone));
  EXPECT_TRUE(IsPerSuperstep(Barrier::kPostKeepRunning));
  EXPECT_FALSE(IsPerSuperstep(Barrier::kPersistedResults));
  EXPECT_EQ(Describe({Barrier::kCheckpoint, 4}), "CHECKPOINT of superstep 4");
}

// --- the master's side

// Every worker enters `at`; then the master releases it.
void Barrier2(MasterProtocol& m, Position at, Event release = Event::kRelease) {
  for (uint32_t w = 0; w < m.workers(); ++w) {
    ASSERT_FALSE(m.complete());
    ASSERT_TRUE(m.Enter(w, At(at.barrier, at.superstep)).ok()) << w << " at " << Describe(at);
  }
  ASSERT_TRUE(m.complete());
  ASSERT_TRUE(m.Release(release).ok());
}

TEST(MasterProtocolTest, AWholeJobInTableOrder) {
  MasterProtocol m(2);
  EXPECT_EQ(m.position().barrier, Barrier::kAwaitingJob);
  ASSERT_TRUE(m.Assign().ok());
  for (uint64_t s = 0; s < 3; ++s) {
    EXPECT_EQ(m.position(), (Position{Barrier::kPre, s}));
    Barrier2(m, {Barrier::kPre, s});
    Barrier2(m, {Barrier::kPost, s});
    Barrier2(m, {Barrier::kPostKeepRunning, s}, s == 2 ? Event::kReleaseStop : Event::kRelease);
  }
  EXPECT_EQ(m.position().barrier, Barrier::kExecutedGraph);
  EXPECT_TRUE(m.HangUpIsFailure());
  Barrier2(m, {Barrier::kExecutedGraph, 2});
  Barrier2(m, {Barrier::kPersistedResults, 2});
  Barrier2(m, {Barrier::kCompletedJob, 2});
  EXPECT_EQ(m.position().barrier, Barrier::kDone);
  EXPECT_FALSE(m.HangUpIsFailure());
}

// A checkpoint between two supersteps: POST_KEEP_RUNNING(s) released with the checkpoint
// decision leads to CHECKPOINT(s + 1), whose release leads to PRE(s + 1).
TEST(MasterProtocolTest, ACheckpointBetweenTwoSupersteps) {
  MasterProtocol m(2);
  ASSERT_TRUE(m.Assign().ok());
  Barrier2(m, {Barrier::kPre, 0});
  Barrier2(m, {Barrier::kPost, 0});
  Barrier2(m, {Barrier::kPostKeepRunning, 0}, Event::kReleaseCheckpoint);
  EXPECT_EQ(m.position(), (Position{Barrier::kCheckpoint, 1}));
  // Not a window for relay batches, and a late or early entry is refused.
  EXPECT_FALSE(m.CheckRelay(0, 1, 0, 1).ok());
  EXPECT_FALSE(m.Enter(0, At(Barrier::kCheckpoint, 0)).ok());
  EXPECT_FALSE(m.Enter(0, At(Barrier::kPre, 1)).ok());
  Barrier2(m, {Barrier::kCheckpoint, 1});
  EXPECT_EQ(m.position(), (Position{Barrier::kPre, 1}));
  // Only POST_KEEP_RUNNING releases with a checkpoint.
  EXPECT_FALSE(m.Release(Event::kReleaseCheckpoint).ok());
}

// An attempt that resumes from a checkpoint starts at PRE of the superstep it resumes at.
TEST(MasterProtocolTest, AResumedJobStartsAtItsSuperstep) {
  MasterProtocol m(2);
  ASSERT_TRUE(m.Assign(20).ok());
  EXPECT_EQ(m.position(), (Position{Barrier::kPre, 20}));
  EXPECT_FALSE(m.Enter(0, At(Barrier::kPre, 0)).ok());
  Barrier2(m, {Barrier::kPre, 20});
  WorkerProtocol w;
  ASSERT_TRUE(w.Assign(1, 2, 20).ok());
  EXPECT_EQ(w.position(), (Position{Barrier::kPre, 20}));
  EXPECT_FALSE(w.Enter(At(Barrier::kPre, 0)).ok());
}

TEST(MasterProtocolTest, EntriesComeBackInWorkerOrder) {
  MasterProtocol m(3);
  ASSERT_TRUE(m.Assign().ok());
  for (uint32_t w : {2u, 0u, 1u}) {
    Step e = At(Barrier::kPre);
    e.active = 10 + w;
    ASSERT_TRUE(m.Enter(w, e).ok());
  }
  ASSERT_TRUE(m.complete());
  for (uint32_t w = 0; w < 3; ++w) EXPECT_EQ(m.entries()[w].active, 10 + w);
}

TEST(MasterProtocolTest, DuplicateOutOfOrderAndUnknownEntriesAreRefused) {
  MasterProtocol m(2);
  // Before the job is assigned.
  EXPECT_THAT(Message(m.Enter(0, At(Barrier::kPre))), HasSubstr("the job is at AWAITING_JOB"));
  ASSERT_TRUE(m.Assign().ok());
  EXPECT_FALSE(m.Assign().ok());
  // Out of order: a later barrier, another superstep, a step that is no barrier.
  EXPECT_THAT(Message(m.Enter(0, At(Barrier::kPost))),
              HasSubstr("entered POST of superstep 0 but the job is at PRE of superstep 0"));
  EXPECT_THAT(Message(m.Enter(0, At(Barrier::kPre, 1))),
              HasSubstr("but the job is at PRE of superstep 0"));
  EXPECT_THAT(Message(m.Enter(0, At(Barrier::kDone))), HasSubstr("no barrier"));
  EXPECT_THAT(Message(m.Enter(0, At(Barrier::kAwaitingJob))), HasSubstr("no barrier"));
  EXPECT_THAT(Message(m.Enter(5, At(Barrier::kPre))), HasSubstr("no worker 5"));
  // Duplicate.
  ASSERT_TRUE(m.Enter(0, At(Barrier::kPre)).ok());
  EXPECT_THAT(Message(m.Enter(0, At(Barrier::kPre))),
              HasSubstr("entered PRE of superstep 0 before leaving PRE of superstep 0"));
  // A refused call changes nothing.
  EXPECT_EQ(m.missing(), std::vector<uint32_t>{1});
  // Releases: not before everyone entered, and only with the events the table allows.
  EXPECT_THAT(Message(m.Release(Event::kRelease)), HasSubstr("before every worker entered"));
  ASSERT_TRUE(m.Enter(1, At(Barrier::kPre)).ok());
  EXPECT_FALSE(m.Release(Event::kReleaseStop).ok());  // a stop only at POST_KEEP_RUNNING
  EXPECT_FALSE(m.Release(Event::kAssign).ok());
  EXPECT_FALSE(m.Release(Event::kAbort).ok());
  ASSERT_TRUE(m.Release(Event::kRelease).ok());
  EXPECT_EQ(m.position(), (Position{Barrier::kPost, 0}));
  // The end phases do not check the superstep (it is the last one's).
  MasterProtocol end(1);
  ASSERT_TRUE(end.Assign().ok());
  Barrier2(end, {Barrier::kPre, 0});
  Barrier2(end, {Barrier::kPost, 0});
  Barrier2(end, {Barrier::kPostKeepRunning, 0}, Event::kReleaseStop);
  EXPECT_TRUE(end.Enter(0, At(Barrier::kExecutedGraph, 99)).ok());
}

TEST(MasterProtocolTest, RelayBatchesOnlyInsideTheirWindow) {
  MasterProtocol m(3);
  ASSERT_TRUE(m.Assign().ok());
  // Before PRE(0)'s release.
  EXPECT_THAT(Message(m.CheckRelay(0, 0, 0, 1)),
              HasSubstr("relay batch of superstep 0 while the job is at PRE of superstep 0"));
  Barrier2(m, {Barrier::kPre, 0});
  EXPECT_TRUE(m.CheckRelay(0, 0, 0, 1).ok());
  EXPECT_TRUE(m.CheckRelay(2, 0, 2, 0).ok());
  // Another superstep, a spoofed sender, to itself, to nobody.
  EXPECT_FALSE(m.CheckRelay(0, 1, 0, 1).ok());
  EXPECT_THAT(Message(m.CheckRelay(0, 0, 1, 2)), HasSubstr("as partition 1"));
  EXPECT_THAT(Message(m.CheckRelay(0, 0, 0, 0)), HasSubstr("not another worker's"));
  EXPECT_THAT(Message(m.CheckRelay(0, 0, 0, 3)), HasSubstr("partition 3"));
  // After the sender's own POST entry.
  ASSERT_TRUE(m.Enter(0, At(Barrier::kPost)).ok());
  EXPECT_THAT(Message(m.CheckRelay(0, 0, 0, 1)), HasSubstr("after its own entry"));
  EXPECT_TRUE(m.CheckRelay(1, 0, 1, 0).ok());
  ASSERT_TRUE(m.Enter(1, At(Barrier::kPost)).ok());
  ASSERT_TRUE(m.Enter(2, At(Barrier::kPost)).ok());
  ASSERT_TRUE(m.Release(Event::kRelease).ok());
  EXPECT_FALSE(m.CheckRelay(1, 0, 1, 0).ok());  // POST_KEEP_RUNNING
}

// Drives a master protocol of two workers to `target` (reached with every worker's entry made
// and the barrier released up to it).
MasterProtocol MasterAt(Barrier target) {
  MasterProtocol m(2);
  if (target == Barrier::kAwaitingJob) return m;
  EXPECT_TRUE(m.Assign().ok());
  const Barrier order[] = {Barrier::kPre,
                           Barrier::kPost,
                           Barrier::kPostKeepRunning,
                           Barrier::kExecutedGraph,
                           Barrier::kPersistedResults,
                           Barrier::kCompletedJob,
                           Barrier::kDone};
  for (Barrier b : order) {
    if (b == target) return m;
    const Event release = b != Barrier::kPostKeepRunning   ? Event::kRelease
                          : target == Barrier::kCheckpoint ? Event::kReleaseCheckpoint
                                                           : Event::kReleaseStop;
    Barrier2(m, {b, 0}, release);
    if (target == Barrier::kCheckpoint && b == Barrier::kPostKeepRunning) return m;
  }
  return m;
}

TEST(MasterProtocolTest, AbortInEveryState) {
  for (Barrier b : kAllBarriers) {
    if (b == Barrier::kAborted) continue;
    SCOPED_TRACE(Name(b));
    MasterProtocol m = MasterAt(b);
    ASSERT_EQ(m.position().barrier, b);
    m.Abort();
    EXPECT_EQ(m.position().barrier, b == Barrier::kDone ? Barrier::kDone : Barrier::kAborted);
    // Nothing moves an aborted job on.
    EXPECT_FALSE(m.Enter(0, At(Barrier::kPre)).ok());
    EXPECT_FALSE(m.CheckRelay(0, 0, 0, 1).ok());
    EXPECT_FALSE(m.Release(Event::kRelease).ok());
    EXPECT_FALSE(m.HangUpIsFailure());
  }
}

// --- a worker's side

// The worker enters `at` and the master releases it.
void Pass(WorkerProtocol& w, Position at, bool stop = false) {
  ASSERT_TRUE(w.Enter(At(at.barrier, at.superstep)).ok()) << Describe(at);
  EXPECT_TRUE(w.entered());
  Step release = At(at.barrier, at.superstep);
  release.stop = stop;
  ASSERT_TRUE(w.OnRelease(release).ok()) << Describe(at);
  EXPECT_FALSE(w.entered());
}

TEST(WorkerProtocolTest, AWholeJobInTableOrder) {
  WorkerProtocol w;
  EXPECT_EQ(w.position().barrier, Barrier::kAwaitingJob);
  ASSERT_TRUE(w.Assign(1, 2).ok());
  for (uint64_t s = 0; s < 2; ++s) {
    Pass(w, {Barrier::kPre, s});
    Pass(w, {Barrier::kPost, s});
    Pass(w, {Barrier::kPostKeepRunning, s}, s == 1);
  }
  Pass(w, {Barrier::kExecutedGraph, 1});
  Pass(w, {Barrier::kPersistedResults, 1});
  Pass(w, {Barrier::kCompletedJob, 1});
  EXPECT_EQ(w.position().barrier, Barrier::kDone);
}

TEST(WorkerProtocolTest, BadAssignments) {
  WorkerProtocol w;
  EXPECT_THAT(Message(w.Assign(2, 2)), HasSubstr("worker 2 of 2"));
  EXPECT_FALSE(w.Assign(0, 0).ok());
  ASSERT_TRUE(w.Assign(0, 1).ok());
  EXPECT_THAT(Message(w.Assign(0, 1)), HasSubstr("second job"));
}

TEST(WorkerProtocolTest, DuplicateOutOfOrderAndUnknownSteps) {
  WorkerProtocol w;
  EXPECT_FALSE(w.Enter(At(Barrier::kPre)).ok());  // no job yet
  ASSERT_TRUE(w.Assign(0, 2).ok());
  EXPECT_FALSE(w.Enter(At(Barrier::kPost)).ok());
  EXPECT_FALSE(w.Enter(At(Barrier::kPre, 1)).ok());
  EXPECT_FALSE(w.Enter(At(Barrier::kDone)).ok());
  // A release before this worker entered.
  EXPECT_THAT(Message(w.OnRelease(At(Barrier::kPre))),
              HasSubstr("has not entered PRE of superstep 0"));
  ASSERT_TRUE(w.Enter(At(Barrier::kPre)).ok());
  EXPECT_THAT(Message(w.Enter(At(Barrier::kPre))), HasSubstr("still waiting for its release"));
  // A release for a barrier or superstep it is not in, an unknown one, a stop at PRE.
  EXPECT_THAT(Message(w.OnRelease(At(Barrier::kPost))),
              HasSubstr("released POST of superstep 0 while this worker waits for the release of "
                        "PRE of superstep 0"));
  EXPECT_FALSE(w.OnRelease(At(Barrier::kPre, 4)).ok());
  EXPECT_FALSE(w.OnRelease(At(Barrier::kAwaitingJob)).ok());
  Step stop = At(Barrier::kPre);
  stop.stop = true;
  EXPECT_THAT(Message(w.OnRelease(stop)), HasSubstr("decided to stop at PRE"));
  // None of that moved the worker: the right release still works, once.
  ASSERT_TRUE(w.OnRelease(At(Barrier::kPre)).ok());
  EXPECT_FALSE(w.OnRelease(At(Barrier::kPre)).ok());
}

TEST(WorkerProtocolTest, RelayBatchesOnlyInsideTheirWindow) {
  WorkerProtocol w;
  ASSERT_TRUE(w.Assign(1, 3).ok());
  // Before PRE(0)'s release, the worker is not in superstep 0 yet.
  EXPECT_THAT(Message(w.CheckRelay(0, 0, 1)), HasSubstr("arrived at PRE of superstep 0"));
  ASSERT_TRUE(w.Enter(At(Barrier::kPre)).ok());
  EXPECT_FALSE(w.CheckRelay(0, 0, 1).ok());
  ASSERT_TRUE(w.OnRelease(At(Barrier::kPre)).ok());
  EXPECT_TRUE(w.CheckRelay(0, 0, 1).ok());
  EXPECT_TRUE(w.CheckRelay(0, 2, 1).ok());
  // Entered POST(0): batches of superstep 0 may still arrive until its release.
  ASSERT_TRUE(w.Enter(At(Barrier::kPost)).ok());
  EXPECT_TRUE(w.CheckRelay(0, 0, 1).ok());
  // Not for this worker, from itself, from nobody, of another superstep.
  EXPECT_THAT(Message(w.CheckRelay(0, 0, 2)), HasSubstr("to partition 2 reached worker 1"));
  EXPECT_FALSE(w.CheckRelay(0, 1, 1).ok());
  EXPECT_FALSE(w.CheckRelay(0, 3, 1).ok());
  EXPECT_THAT(Message(w.CheckRelay(1, 0, 1)), HasSubstr("superstep 1 arrived at POST"));
  ASSERT_TRUE(w.OnRelease(At(Barrier::kPost)).ok());
  EXPECT_FALSE(w.CheckRelay(0, 0, 1).ok());  // after POST(0)'s release: too late
}

TEST(WorkerProtocolTest, DirectBatchesMayOvertakeTheRelease) {
  WorkerProtocol w;
  ASSERT_TRUE(w.Assign(1, 3).ok());
  // A peer released from PRE(0) sends before this worker has read the same release, but never
  // before this worker entered PRE(0) (the master releases only once all have).
  EXPECT_FALSE(w.CheckRelay(0, 0, 1, true).ok());
  ASSERT_TRUE(w.Enter(At(Barrier::kPre)).ok());
  EXPECT_TRUE(w.CheckRelay(0, 0, 1, true).ok());
  EXPECT_FALSE(w.CheckRelay(0, 0, 1, false).ok());
  EXPECT_FALSE(w.CheckRelay(1, 0, 1, true).ok());
  ASSERT_TRUE(w.OnRelease(At(Barrier::kPre)).ok());
  EXPECT_TRUE(w.CheckRelay(0, 0, 1, true).ok());
  ASSERT_TRUE(w.Enter(At(Barrier::kPost)).ok());
  EXPECT_TRUE(w.CheckRelay(0, 2, 1, true).ok());
  ASSERT_TRUE(w.OnRelease(At(Barrier::kPost)).ok());
  EXPECT_FALSE(w.CheckRelay(0, 0, 1, true).ok());
}

TEST(WorkerProtocolTest, ACheckpointBetweenTwoSupersteps) {
  WorkerProtocol w;
  ASSERT_TRUE(w.Assign(1, 2).ok());
  Pass(w, {Barrier::kPre, 0});
  Pass(w, {Barrier::kPost, 0});
  ASSERT_TRUE(w.Enter(At(Barrier::kPostKeepRunning, 0)).ok());
  Step both = At(Barrier::kPostKeepRunning, 0);
  both.stop = both.checkpoint = true;
  EXPECT_THAT(Message(w.OnRelease(both)), HasSubstr("both to stop and to checkpoint"));
  Step release = At(Barrier::kPostKeepRunning, 0);
  release.checkpoint = true;
  ASSERT_TRUE(w.OnRelease(release).ok());
  EXPECT_EQ(w.position(), (Position{Barrier::kCheckpoint, 1}));
  EXPECT_FALSE(w.CheckRelay(1, 0, 1, true).ok());
  ASSERT_TRUE(w.Enter(At(Barrier::kCheckpoint, 1)).ok());
  // A checkpoint decision anywhere but at POST_KEEP_RUNNING is a violation.
  release = At(Barrier::kCheckpoint, 1);
  release.checkpoint = true;
  EXPECT_THAT(Message(w.OnRelease(release)), HasSubstr("decided to checkpoint at CHECKPOINT"));
  ASSERT_TRUE(w.OnRelease(At(Barrier::kCheckpoint, 1)).ok());
  EXPECT_EQ(w.position(), (Position{Barrier::kPre, 1}));
}

TEST(WorkerProtocolTest, AbortInEveryState) {
  const Barrier order[] = {Barrier::kAwaitingJob,   Barrier::kPre,
                           Barrier::kPost,          Barrier::kPostKeepRunning,
                           Barrier::kExecutedGraph, Barrier::kPersistedResults,
                           Barrier::kCompletedJob,  Barrier::kDone};
  for (Barrier target : order) {
    for (bool entered : {false, true}) {
      SCOPED_TRACE(std::string(Name(target)) + (entered ? ", entered" : ""));
      WorkerProtocol w;
      if (target != Barrier::kAwaitingJob) {
        ASSERT_TRUE(w.Assign(0, 2).ok());
      }
      for (Barrier b : order) {
        if (b == target || b == Barrier::kAwaitingJob) {
          if (b == target) break;
          continue;
        }
        Pass(w, {b, 0}, b == Barrier::kPostKeepRunning);
      }
      ASSERT_EQ(w.position().barrier, target);
      if (entered && IsBarrier(target)) {
        ASSERT_TRUE(w.Enter(At(target)).ok());
      }
      w.Abort();
      EXPECT_EQ(w.position().barrier,
                target == Barrier::kDone ? Barrier::kDone : Barrier::kAborted);
      EXPECT_FALSE(w.entered());
      EXPECT_FALSE(w.Enter(At(Barrier::kPre)).ok());
      EXPECT_FALSE(w.OnRelease(At(target)).ok());
      EXPECT_FALSE(w.CheckRelay(0, 1, 0).ok());
    }
  }
}

}  // namespace
}  // namespace lockstep::dbsp::protocol
