#pragma once

// Which checkpoint a job's next attempt resumes from (docs/design.md §7.6, §7.7): the newest
// complete one of any attempt that has not been refused. A master resuming a job another master
// left reads each candidate whole before it takes it; a checkpoint that fails that check, or that
// the workers could not restore, is passed over for the one before it, down to the start. Nothing
// is removed here: a checkpoint passed over goes with the job's directory, or when a later attempt
// completes one of its own.

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace lockstep::dbsp::job {

struct ResumePoint {
  std::string dir;         // the checkpoint's directory; empty: none, the job starts over
  uint64_t superstep = 0;  // the superstep it resumes at (0: the start)
};

// The complete checkpoints (a readable manifest) of the job in `job_dir`, among its attempts'
// directories (JOB_DIR/attempt-A/superstep-S), newest first (a later attempt's first at a tie).
std::vector<ResumePoint> CompleteCheckpoints(const std::string& job_dir);

class CheckpointChoice {
 public:
  // The job in `job_dir`, of app `app` and ID `job_id` (what its files must be of); `log_prefix`
  // starts the lines logged.
  CheckpointChoice(std::string job_dir, std::string app, std::string job_id, std::string log_prefix)
      : job_dir_(std::move(job_dir)),
        app_(std::move(app)),
        job_id_(std::move(job_id)),
        log_prefix_(std::move(log_prefix)) {}

  // The newest complete checkpoint not refused. With `verify`, each candidate is first read whole
  // (bsp::VerifyCheckpoint); one that fails is refused, logged, and the next one is tried.
  ResumePoint Choose(bool verify);
  // `dir` could not be restored (`why`): never chosen again by this object.
  void Refuse(const std::string& dir, const absl::Status& why);

 private:
  const std::string job_dir_, app_, job_id_, log_prefix_;
  std::set<std::string> refused_;
};

}  // namespace lockstep::dbsp::job
