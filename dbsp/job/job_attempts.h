#pragma once

// A job on the master across its attempts (docs/design.md §7.5, §7.7): its checkpoint directory
// with the master's lease on it and the job's record, the checkpoint each attempt resumes from,
// the restarts so far, and the results' staging. One attempt runs at a time (MasterAttempt,
// master_attempt.h); this object says what the next one is given and, from how the last one
// ended, whether there is a next one. Whatever way the job ends, its checkpoint directory goes
// with this object, unless the master is stopping and leaves the job to the next master.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job/checkpoint_choice.h"
#include "job/job_record.h"
#include "job/master_job.h"
#include "job/output_dir.h"
#include "job/result_staging.h"
#include "lockstep/dbsp/job_spec.h"
#include "lockstep/runner/job_runner.h"
#include "nlohmann/json.hpp"

namespace lockstep::dbsp::job {

using AttemptClock = std::chrono::steady_clock;

// What an attempt is given.
struct AttemptPlan {
  // The job's details as this attempt runs them: details.resume is its own.
  runner::JobDetails details;
  PoolOptions pool;
  CheckpointPlan checkpoints;
  bool last_attempt = false;  // no attempt follows one that loses a worker
};

// What an attempt says of itself once it has ended.
struct AttemptOutcome {
  absl::Status status;
  uint32_t workers = 0;
  bool published = false;
  bool retrying = false;            // it lost a worker, and the next attempt may go on
  bool checkpoint_refused = false;  // it failed restoring its checkpoint: the next passes it over
  AttemptClock::time_point failed_at;
  std::optional<AttemptClock::time_point> first_step_at;
  // Once published:
  uint64_t vertices = 0;
  uint64_t supersteps = 0;
  double seconds = 0;  // the job's, from its start
  std::string output;  // where the results are
};

class JobAttempts {
 public:
  // Opens the job of `spec` with `details` (its ID and creation time set), started at `started`:
  // its checkpoint directory, lease and record when it checkpoints, the first attempt's staging,
  // and, when resuming, the checkpoint it goes on from. `cancel` is the master's stop (SIGTERM).
  static absl::StatusOr<std::unique_ptr<JobAttempts>> Open(const JobSpec& spec,
                                                           runner::JobDetails details,
                                                           AttemptClock::time_point started,
                                                           const std::atomic<bool>& cancel,
                                                           std::string log_prefix);
  ~JobAttempts();
  JobAttempts(const JobAttempts&) = delete;
  JobAttempts& operator=(const JobAttempts&) = delete;

  const std::string& log_prefix() const { return log_prefix_; }
  AttemptClock::time_point started() const { return started_; }

  // The next attempt; an error (the lease lost, the record unwritable) ends the job (End).
  absl::StatusOr<AttemptPlan> Next();

  // --- while an attempt runs
  // Its workers are reserved: the record says how many.
  void RecordWorkers(uint32_t n);
  // Whether the lease on the job's checkpoint directory is lost: another master may drive the
  // job, and this one must publish nothing.
  bool lease_lost() const { return master_lease_ != nullptr && master_lease_->lost(); }
  ResultStaging& staging() { return staging_; }
  // Notes what is known of the restart that led to the attempt under way once it has ended or is
  // publishing (its workers and the time from the failure to its first superstep); returns the
  // restarts so far, as _SUCCESS lists them.
  const nlohmann::json& NoteRestart(uint32_t workers,
                                    std::optional<AttemptClock::time_point> first_step_at);

  // --- once it has ended
  // It published: the job's record goes at once, so that no later master resumes the job.
  JobResult Published(const AttemptOutcome& outcome);
  // It failed: OK when another attempt follows (its staging made and its checkpoint chosen); else
  // the job's error, and the job has ended (End).
  absl::Status Failed(const AttemptOutcome& outcome);
  // Ends the job for `reason`: drops what is staged, leaves the job's directory to the next master
  // if this one is stopping, logs the reason and returns it.
  absl::Status End(absl::Status reason);

 private:
  JobAttempts(const JobSpec& spec, runner::JobDetails details, AttemptClock::time_point started,
              const std::atomic<bool>& cancel, std::string log_prefix);
  // The checkpoint directory, its lease and the record (a job that checkpoints).
  absl::Status OpenRecord(bool resuming);
  // Resuming another master's job: where it goes on from.
  void Resume();
  void RemoveCheckpointDir();

  const JobSpec& spec_;
  runner::JobDetails details_;
  const std::atomic<bool>& cancel_;
  const std::string job_id_, log_prefix_;
  const AttemptClock::time_point started_;
  const std::string checkpoint_root_;  // empty: the job takes no checkpoints
  // Declared first, destroyed last: the lease is held until the directory is gone.
  std::unique_ptr<Lease> master_lease_;
  std::string remove_dir_;  // the checkpoint directory this object removes when it goes
  std::optional<JobRecordFile> record_;
  ResultStaging staging_;
  CheckpointChoice choice_;
  ResumePoint resume_;    // the checkpoint the next attempt starts from
  uint32_t attempt_ = 0;  // the next attempt's number
  uint32_t workers_before_ = 0;
  uint32_t restarts_used_ = 0;  // restarts after a lost worker (not the master's), --max-restarts
  nlohmann::json restarts_ = nlohmann::json::array();  // each restart so far (_SUCCESS)
  std::vector<std::string> reasons_;                   // each failed attempt's
  AttemptClock::time_point recovery_from_ = started_;  // when the attempt before failed
};

}  // namespace lockstep::dbsp::job
