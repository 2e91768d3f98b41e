#pragma once

// The master's record of a job it drives with checkpoints (docs/design.md §7.7): in the job's
// checkpoint directory, CHECKPOINT_DIR/<job id>/JOB, a JSON document replaced atomically at each
// attempt and each complete checkpoint, beside the master's lease (LEASE). A master started later
// on the same checkpoint directory finds the job there and finishes it.

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace lockstep::dbsp::job {

struct JobRecord {
  std::string job_id;
  int64_t created_at_unix_ms = 0;
  // The job (what decides its answer and where it goes: app, parameters, graph, output, superstep
  // cap), compared with a command line's; and how it is run (pool, timeouts, checkpoints,
  // restarts, relay, the service's period).
  nlohmann::json job;
  nlohmann::json run;
  uint32_t attempt = 0;     // the attempt under way (0: the first)
  uint32_t workers = 0;     // its workers, once reserved
  uint64_t checkpoint = 0;  // the newest complete checkpoint's superstep (0: none yet)
  nlohmann::json restarts = nlohmann::json::array();  // as in _SUCCESS
};

// The record's file and the lease's in a job's checkpoint directory.
std::string JobRecordPath(const std::string& job_dir);
std::string JobLeasePath(const std::string& job_dir);

absl::StatusOr<JobRecord> ReadJobRecord(const std::string& job_dir);

// Writes a job's record, one writer at a time (the job's thread and its manifest writer).
class JobRecordFile {
 public:
  explicit JobRecordFile(std::string job_dir, JobRecord record)
      : dir_(std::move(job_dir)), record_(std::move(record)) {}
  // Changes the record with f and writes it (atomically: a temporary file, fsync, rename).
  template <class F>
  absl::Status Update(F&& f) {
    std::lock_guard<std::mutex> lock(mu_);
    f(record_);
    return WriteLocked();
  }
  JobRecord record() const {
    std::lock_guard<std::mutex> lock(mu_);
    return record_;
  }

 private:
  absl::Status WriteLocked();
  const std::string dir_;
  mutable std::mutex mu_;
  JobRecord record_;
};

// The job directories in `checkpoint_dir` that hold a record (unfinished jobs: a job's directory
// goes when it ends), in name order.
std::vector<std::string> UnfinishedJobDirs(const std::string& checkpoint_dir);

}  // namespace lockstep::dbsp::job
