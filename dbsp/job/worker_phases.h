#pragma once

// A worker's action at each barrier of the transition table (protocol/protocol.h; docs/design.md
// §5.3), one method per barrier: each builds the barrier's entry, enters it through the job
// (WorkerJob::Enter sends it and waits for the master's release) and applies the release. The
// supersteps' actions run as the executor's callbacks (ExecutorFactory), the end phases' in
// RunEndPhases in the table's order. The master's counterpart is MasterPhases: a new barrier is a
// row of the table and a method in each.

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job/worker_job.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/runner/job_runner.h"

namespace lockstep::dbsp::job {

class WorkerPhases {
 public:
  // Writes this worker's results (complete-job) and says what it wrote.
  using Persist = std::function<absl::StatusOr<runner::OutputSummary>()>;

  explicit WorkerPhases(WorkerJob& job) : job_(job) {}
  WorkerPhases(const WorkerPhases&) = delete;
  WorkerPhases& operator=(const WorkerPhases&) = delete;

  // Wraps the program's callbacks with the superstep barriers' actions below, and makes the job
  // the engine's relayer. The executor it builds calls into this object, which must outlive it.
  bsp::ExecutorFactory ExecutorFactory(bsp::ExecutorOptions options);

  // --- the supersteps: the executor's callbacks (the engine is bound)
  // PRE(s), then the program's pre_step.
  absl::Status Pre(uint64_t superstep);
  // POST(s), once every batch of s is at its receiver (direct mode): enters with the aggregator
  // deltas, the counts, what it relayed and its trace lines; takes over the master's global
  // aggregator values, then runs the program's post_step with the global counts.
  absl::Status Post(const bsp::StepStats& local);
  // POST_KEEP_RUNNING(s) with the counts: the master's decision binds (the program's own
  // keep_running runs for its side effects); a checkpoint first when the master asks for one.
  absl::StatusOr<bool> KeepRunning(const bsp::StepStats& local);
  // CHECKPOINT(next): encodes this worker's checkpoint file (written in the background) and
  // enters with what it holds.
  absl::Status Checkpoint(uint64_t next);

  // --- after the supersteps, in the table's order
  // EXECUTED_GRAPH with this worker's vertex count.
  absl::Status Executed(uint64_t vertices);
  // PERSISTED_RESULTS: writes the results (`persist`) and enters with what they hold.
  absl::Status Persisted(const Persist& persist);
  // COMPLETED_JOB: its release says the master published the job.
  absl::Status Completed();
  // Every phase after the supersteps, as the job's position says, once the checkpoints' files
  // are durable (the job's end removes the checkpoints).
  absl::Status RunEndPhases(uint64_t vertices, const Persist& persist);

  // Runs the job of `details` with `runner` through the job: load, supersteps, the end phases.
  // Returns this worker's own error (OK on success).
  absl::Status Run(runner::JobRunner& runner, const runner::JobDetails& details,
                   const std::string& tag);

 private:
  WorkerJob& job_;
  // Bound by ExecutorFactory.
  bsp::StepEngine* engine_ = nullptr;
  bsp::Callbacks user_;
};

}  // namespace lockstep::dbsp::job
