#pragma once

// The distributed protocol as pure code over plain structs (docs/design.md §5): one transition
// table that both roles follow, the master's side (MasterProtocol) and a worker's side
// (WorkerProtocol). Nothing here knows of sockets, threads or protobuf: the job layer feeds these
// classes what it reads and asks them what may happen next, and the unit tests drive them with
// fake steps. Neither class is thread-safe; the job layer holds one lock around each.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/runner/job_runner.h"

namespace lockstep::dbsp::protocol {

// Where a job is: the barrier every process enters next. PRE, POST and POST_KEEP_RUNNING repeat
// once per superstep; the rest happen once. DONE and ABORTED are final.
enum class Barrier : uint8_t {
  kAwaitingJob,
  kPre,
  kPost,
  kPostKeepRunning,
  kExecutedGraph,
  kPersistedResults,
  kCompletedJob,
  kDone,
  kAborted,
  // Between POST_KEEP_RUNNING(s - 1) and PRE(s) when the master asks for a checkpoint; its
  // superstep is s, the one the checkpoint resumes at (docs/design.md §7.6).
  kCheckpoint,
};
inline constexpr Barrier kAllBarriers[] = {Barrier::kAwaitingJob,   Barrier::kPre,
                                           Barrier::kPost,          Barrier::kPostKeepRunning,
                                           Barrier::kExecutedGraph, Barrier::kPersistedResults,
                                           Barrier::kCompletedJob,  Barrier::kDone,
                                           Barrier::kAborted,       Barrier::kCheckpoint};

// What moves a job from one barrier to the next: the job's assignment, the master's release of the
// barrier (with its decision at POST_KEEP_RUNNING: stop, go on, or go on after a checkpoint), or
// an abort.
enum class Event : uint8_t { kAssign, kRelease, kReleaseStop, kAbort, kReleaseCheckpoint };
inline constexpr Event kAllEvents[] = {Event::kAssign, Event::kRelease, Event::kReleaseStop,
                                       Event::kAbort, Event::kReleaseCheckpoint};

struct Position {
  Barrier barrier = Barrier::kAwaitingJob;
  uint64_t superstep = 0;  // meaningful for the per-superstep barriers only
  bool operator==(const Position&) const = default;
};

struct Transition {
  Barrier from;
  Event event;
  Barrier to;
  bool next_superstep;  // the superstep count goes up by one
};

// The table. Abort leads from every state that is not final to kAborted (not listed row by row).
// A new phase (CHECKPOINT, RECOVERING) is a new barrier and its rows here.
inline constexpr Transition kTransitions[] = {
    {Barrier::kAwaitingJob, Event::kAssign, Barrier::kPre, false},
    {Barrier::kPre, Event::kRelease, Barrier::kPost, false},
    {Barrier::kPost, Event::kRelease, Barrier::kPostKeepRunning, false},
    {Barrier::kPostKeepRunning, Event::kRelease, Barrier::kPre, true},
    {Barrier::kPostKeepRunning, Event::kReleaseStop, Barrier::kExecutedGraph, false},
    {Barrier::kPostKeepRunning, Event::kReleaseCheckpoint, Barrier::kCheckpoint, true},
    {Barrier::kCheckpoint, Event::kRelease, Barrier::kPre, false},
    {Barrier::kExecutedGraph, Event::kRelease, Barrier::kPersistedResults, false},
    {Barrier::kPersistedResults, Event::kRelease, Barrier::kCompletedJob, false},
    {Barrier::kCompletedJob, Event::kRelease, Barrier::kDone, false},
};

bool IsFinal(Barrier b);
// PRE, POST, POST_KEEP_RUNNING and CHECKPOINT: entries and releases name their superstep.
bool IsPerSuperstep(Barrier b);
// A barrier a worker enters (not kAwaitingJob or a final state).
bool IsBarrier(Barrier b);
// The next position, or nullopt if `event` may not happen at `from`.
std::optional<Position> Next(Position from, Event event);

const char* Name(Barrier b);
const char* Name(Event e);
// "POST of superstep 3", "EXECUTED_GRAPH".
std::string Describe(Position p);

// One barrier entry (worker → master) or release (master → every worker).
struct Step {
  Barrier barrier = Barrier::kAwaitingJob;
  uint64_t superstep = 0;
  // POST: entering, the worker's aggregator deltas; leaving, the merged global values. Encoded
  // with the aggregators' codecs.
  std::map<std::string, std::string> aggregators;
  // POST and POST_KEEP_RUNNING: entering, the worker's counts; leaving, the global sums.
  uint64_t active = 0;
  uint64_t messages = 0;
  uint64_t unhalted = 0;
  // Leaving POST_KEEP_RUNNING: the master's decision, which every worker follows: stop, or go on
  // after writing a checkpoint (then CHECKPOINT of the next superstep).
  bool stop = false;
  bool checkpoint = false;
  // Entering any barrier: the newest checkpoint (its superstep) whose file the worker has made
  // durable; 0: none.
  uint64_t checkpoint_written = 0;
  // Entering EXECUTED_GRAPH: the worker's number of vertices.
  uint64_t vertices = 0;
  // Entering PERSISTED_RESULTS: what the worker wrote to its part; entering CHECKPOINT, to its
  // checkpoint file (records, bytes, CRC-32C).
  runner::OutputSummary part;
  // Entering POST in direct relay mode: the batches and bytes the worker sent its peers in the
  // superstep (the master's progress line shows their sums).
  uint64_t relayed_batches = 0;
  uint64_t relayed_bytes = 0;
  // Entering POST: the worker's trace lines of the superstep (--trace-vertex).
  std::vector<std::string> trace;

  Position position() const { return {barrier, superstep}; }
};

// A superstep's counts in a step and back: a worker's own in its POST and POST_KEEP_RUNNING
// entries, the global sums in their releases.
Step StepWithCounts(Barrier barrier, const bsp::StepStats& counts);
bsp::StepStats CountsOf(const Step& step);
// The event a release is: kReleaseStop, kReleaseCheckpoint or kRelease.
Event ReleaseEvent(const Step& release);

// The master's side of one job over `workers` workers. Created at AWAITING_JOB; Assign() once the
// job details are on their way; then per barrier: Enter() for each worker's entry, Release() once
// complete(). Any violation returns an error naming what went wrong (the caller adds which worker
// and aborts); the state is unchanged by a refused call.
class MasterProtocol {
 public:
  explicit MasterProtocol(uint32_t workers);

  uint32_t workers() const { return static_cast<uint32_t>(entered_.size()); }
  Position position() const { return at_; }

  // `superstep`: where the job starts, PRE of it (0, or the superstep a checkpoint resumes at).
  absl::Status Assign(uint64_t superstep = 0);
  // Worker `worker` enters a barrier: it must be the open one, entered once.
  absl::Status Enter(uint32_t worker, Step entry);
  // A relay batch of `superstep` from worker `worker` claiming partitions `from` → `to`. A batch of
  // superstep s travels while the job is at POST(s) and before its sender's POST(s) entry, to
  // another worker's partition.
  absl::Status CheckRelay(uint32_t worker, uint64_t superstep, uint32_t from, uint32_t to) const;
  // Whether every worker has entered the open barrier.
  bool complete() const { return count_ == entered_.size(); }
  // The workers that have not entered the open barrier yet, in order.
  std::vector<uint32_t> missing() const;
  // The entries of the open barrier in worker order (once complete()).
  const std::vector<Step>& entries() const { return entries_; }
  // Leaves the complete barrier: kRelease, or kReleaseStop or kReleaseCheckpoint at
  // POST_KEEP_RUNNING.
  absl::Status Release(Event event);
  void Abort();
  // A worker hanging up is a failure unless the job is over.
  bool HangUpIsFailure() const { return !IsFinal(at_.barrier); }

 private:
  Position at_;
  std::vector<bool> entered_;
  std::vector<Step> entries_;
  uint32_t count_ = 0;
};

// A worker's side of one job. AWAITING_JOB until Assign(); then per barrier: Enter() (the job
// thread enters the open barrier), OnRelease() (the master's release of that barrier, read from
// the stream). Relay batches are checked against the window of the superstep.
class WorkerProtocol {
 public:
  Position position() const { return at_; }
  // Whether this worker has entered the open barrier and waits for its release.
  bool entered() const { return entered_; }

  absl::Status Assign(uint32_t worker_index, uint32_t worker_count, uint64_t superstep = 0);
  absl::Status Enter(const Step& entry);
  // The master's release: it must be of the barrier this worker entered. Advances.
  absl::Status OnRelease(const Step& release);
  // A relay batch reaching this worker: for its own partition, from another worker's, of the
  // superstep it is in (after PRE(s)'s release and before POST(s)'s). A batch that comes
  // `direct`ly from its sender, not behind the master's release on one stream, may also arrive
  // once this worker has entered PRE(s) and before it has read that release.
  absl::Status CheckRelay(uint64_t superstep, uint32_t from, uint32_t to,
                          bool direct = false) const;
  void Abort();

 private:
  Position at_;
  bool entered_ = false;
  uint32_t index_ = 0;
  uint32_t count_ = 0;
};

}  // namespace lockstep::dbsp::protocol
