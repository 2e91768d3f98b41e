#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/catalogue/app.h"
#include "lockstep/dbsp/worker_options.h"

namespace lockstep::dbsp {

// A worker: dials the master (with backoff), waits in its pool, runs any app of `apps` named in
// the job it is given, and goes back to the pool. Returns when `stop` is set; a job running then
// is reported to the master as failed.
absl::Status ServeWorker(const catalogue::AppRegistry& apps, const WorkerOptions& options,
                         const std::atomic<bool>& stop);

}  // namespace lockstep::dbsp
