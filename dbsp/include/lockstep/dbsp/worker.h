#pragma once

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "lockstep/bsp/app.h"

namespace lockstep::dbsp {

struct WorkerOptions {
  std::string master;  // HOST:PORT
  // Stop after this many jobs (0: serve until stopped); for tests.
  uint64_t max_jobs = 0;
};

// A worker: dials the master (with backoff), waits in its pool, runs any app of `apps` named in
// the job it is given, and goes back to the pool. Returns when `stop` is set; a job running then
// is reported to the master as failed.
absl::Status ServeWorker(const bsp::AppRegistry& apps, const WorkerOptions& options,
                         const std::atomic<bool>& stop);

}  // namespace lockstep::dbsp
