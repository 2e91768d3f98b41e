#pragma once

// One attempt of a job on the master (docs/design.md §5, §7.5): reserves workers from the pool,
// assigns each its range of the ID space and the data plane, runs the master's program over the
// barriers (MasterPhases) and, at the end phases, checks the parts and publishes through the
// job's staging. Whatever ends it, every reserved worker is released and told why. The job
// around it (its record, lease, restarts and staging) is JobAttempts'.

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job/job_attempts.h"
#include "job/master_job.h"
#include "job/master_phases.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/dbsp/job_spec.h"
#include "lockstep/partition/range.h"
#include "transport/master_server.h"

namespace lockstep::dbsp::job {

class MasterAttempt {
 public:
  MasterAttempt(transport::MasterServer& server, const JobSpec& spec, JobAttempts& job,
                AttemptPlan plan, const std::atomic<bool>& cancel)
      : server_(server), spec_(spec), job_(job), plan_(std::move(plan)), cancel_(cancel) {}

  // Runs the attempt to its end.
  AttemptOutcome Run();

 private:
  using Sessions = std::vector<std::shared_ptr<transport::WorkerSession>>;

  // Logs which attempt starts on how many workers, and from where.
  void LogStart() const;
  // The attempt over the reserved workers, whose streams `master` holds.
  absl::Status RunOn(MasterJob& master);
  // Each worker's assignment: its range of `split`, where its results go, and the data plane.
  absl::StatusOr<std::vector<v1::JobDetails>> Assignments(const partition::Range& split) const;
  // The master's aggregators from the checkpoint the attempt resumes from.
  absl::Status RestoreAggregators(MasterJob& master, bsp::Executor& executor) const;
  // Where the supersteps' time went on the master.
  void LogTimeSplit(const MasterJob& master) const;
  // COMPLETED_JOB: the job's record (_SUCCESS) and its publication.
  absl::Status Publish(const MasterPhases::Ended& ended);
  // Ends the attempt for `reason` (the first reason wins): every worker is told and released.
  absl::Status Fail(MasterJob& master, absl::Status reason);

  transport::MasterServer& server_;
  const JobSpec& spec_;
  JobAttempts& job_;
  AttemptPlan plan_;
  const std::atomic<bool>& cancel_;
  AttemptClock::time_point started_;
  Sessions workers_;
  std::vector<std::string> names_;
  std::vector<std::pair<double, uint64_t>> writes_before_;  // each stream's, before the supersteps
  double compute_seconds_ = 0;
  AttemptOutcome outcome_;
};

}  // namespace lockstep::dbsp::job
