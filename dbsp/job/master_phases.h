#pragma once

// The master's action at each barrier of the transition table (protocol/protocol.h;
// docs/design.md §5.3), one method per barrier: each waits for every worker's entry
// (MasterJob::WaitAll), does the barrier's work and releases it (MasterJob::ReleaseAll). The
// supersteps' actions run as the callbacks of the master's executor over its empty graph
// (ExecutorFactory), the end phases' in RunEndPhases in the table's order. A worker's
// counterpart is WorkerPhases: a new barrier is a row of the table and a method in each.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job/master_job.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/dbsp/job_spec.h"
#include "lockstep/runner/job_runner.h"

namespace lockstep::dbsp::job {

class MasterPhases {
 public:
  using Clock = std::chrono::steady_clock;

  // What the end phases gathered from the workers' entries.
  struct Ended {
    uint64_t vertices = 0;                     // EXECUTED_GRAPH: the workers' vertex counts, summed
    std::vector<runner::OutputSummary> parts;  // PERSISTED_RESULTS: what each worker wrote
    double persist_seconds = 0;                // from every vertex counted to every part written
  };
  // What the end phases do with the results: the attempt's (docs/design.md §6.2).
  struct Commit {
    // PERSISTED_RESULTS: checks worker w's part against what its entry says it holds (null: no
    // check here, as for a sink that checks what it publishes).
    std::function<absl::Status(uint32_t worker, const runner::OutputSummary& part)> verify_part;
    // COMPLETED_JOB, once every worker has entered: publishes the job, the commit point.
    std::function<absl::Status(const Ended& ended)> publish;
  };

  // `progress` hears of each superstep once its POST_KEEP_RUNNING is released; `checkpoints` says
  // when the workers write a checkpoint and where; `log_prefix` starts the lines logged.
  MasterPhases(MasterJob& job, std::function<void(const MasterProgress&)> progress,
               CheckpointPlan checkpoints = {}, std::string log_prefix = "");
  MasterPhases(const MasterPhases&) = delete;
  MasterPhases& operator=(const MasterPhases&) = delete;

  // Wraps the program's callbacks (on the master's empty graph) with the superstep barriers'
  // actions below. The executor it builds calls into this object, which must outlive it.
  bsp::ExecutorFactory ExecutorFactory(bsp::ExecutorOptions options);

  // --- the supersteps: the executor's callbacks (the engine is bound)
  // PRE(s), then the program's pre_step.
  absl::Status Pre(uint64_t superstep);
  // POST(s): merges every worker's aggregator deltas and releases the global values and counts,
  // then runs the program's post_step with the global counts.
  absl::Status Post(const bsp::StepStats& own);
  // POST_KEEP_RUNNING(s): decides with the program's rule over the global counts, and whether a
  // checkpoint is due; releases the decision, reports the superstep's progress, and takes the
  // checkpoint (Checkpoint) when one is due.
  absl::StatusOr<bool> KeepRunning(const bsp::StepStats& own);
  // CHECKPOINT(next): notes what every worker encoded, with the aggregators as they are now; the
  // manifest follows once every file is durable (MasterJob::CheckpointTaken).
  absl::Status Checkpoint(uint64_t next);

  // --- after the supersteps, in the table's order
  // EXECUTED_GRAPH: counts the workers' vertices.
  absl::Status Executed();
  // PERSISTED_RESULTS: every part must hold what its worker said it wrote, and all of them the
  // vertices counted, before anything is published.
  absl::Status Persisted(const Commit& commit);
  // COMPLETED_JOB: publishes (commit.publish), then releases; a worker that fails or hangs up
  // from here on cannot undo a complete, published result.
  absl::Status Completed(const Commit& commit);
  // Every phase after the supersteps, as the job's position says.
  absl::StatusOr<Ended> RunEndPhases(const Commit& commit);

 private:
  MasterJob& job_;
  const std::function<void(const MasterProgress&)> progress_;
  const CheckpointPlan checkpoints_;
  const std::string log_prefix_;
  // Bound by ExecutorFactory.
  bsp::StepEngine* engine_ = nullptr;
  bsp::Callbacks user_;
  // The superstep under way, for its progress line.
  Clock::time_point step_start_;
  uint64_t batches_before_ = 0, bytes_before_ = 0;
  std::vector<double> worker_seconds_;  // each worker's time to POST
  std::vector<std::string> trace_;      // the workers' trace lines
  Clock::time_point checkpointed_ = Clock::now();
  // The end phases'.
  Ended ended_;
  Clock::time_point persist_start_;
};

// What the master logs of a worker's trace line (--trace-vertex): at most this many bytes of it.
inline constexpr size_t kMaxTraceLineBytes = 1024;
// The lines of worker w's POST entry that the master logs: those about a vertex of `ids` (the
// traced IDs its range holds), one per ID at most, sanitised, cut, and each followed by
// " | worker w"; any other line is dropped.
std::vector<std::string> TracedLines(const std::vector<std::string>& ids, uint32_t w,
                                     const std::vector<std::string>& lines);

}  // namespace lockstep::dbsp::job
