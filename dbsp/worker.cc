#include "lockstep/dbsp/worker.h"

#include "job/serve_loop.h"

namespace lockstep::dbsp {

absl::Status ServeWorker(const catalogue::AppRegistry& apps, const WorkerOptions& options,
                         const std::atomic<bool>& stop) {
  job::ServeLoop loop(apps, options, stop);
  return loop.Run();
}

}  // namespace lockstep::dbsp
