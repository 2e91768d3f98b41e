#pragma once

// How a worker process serves (ServeWorker, worker.h): its master, security, paths, ports and the
// hooks the command line hands it. Apart from worker.h so that the serve loop, which ServeWorker
// runs, does not include it back.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/dbsp/metrics.h"
#include "lockstep/dbsp/security.h"
#include "lockstep/runner/job.h"

namespace lockstep::dbsp {

struct WorkerOptions {
  std::string master;  // HOST:PORT
  // How every connection is secured: to the master, to and from the other workers, health.
  std::shared_ptr<const Security> security = Security::Plain();
  // The directories every path a job names must lie in (its graph, output, checkpoints, saved
  // parts), symbolic links resolved; empty: any path (docs/design.md §11). A database URI is not a
  // path.
  std::vector<std::string> data_roots;
  // Where the worker's figures go, for /metrics (docs/design.md §12); null: nowhere.
  Metrics* metrics = nullptr;
  // Where the worker serves the other workers of its jobs (HOST:PORT; port 0 picks a free one),
  // and the address it asks them to use: HOST:PORT, or empty for the host its connection to the
  // master comes from with the port it listens on (docs/design.md §5.7).
  std::string peer_listen = "[::]:0";
  std::string advertise;
  // Stop after this many jobs (0: serve until stopped); for tests.
  uint64_t max_jobs = 0;
  // HOST:PORT of the health service for probes (empty: none; port 0: any free port). Its
  // readiness service, kWorkerHealthService, is SERVING while the worker is connected.
  std::string health_address;
  // Called with the health service's port once it listens.
  std::function<void(int port)> health_started;
  // Called (from another thread, once) with what ServeWorker is about to return when releasing its
  // gRPC objects after the last job takes longer than `teardown_limit`: gRPC 1.51 waits forever for
  // a thread of its pool that failed to start, as under an address-space limit. A process's main
  // passes one that exits with the status's code; without one the wait goes on.
  std::function<void(const absl::Status& result)> on_stuck_teardown;
  std::chrono::milliseconds teardown_limit{5000};
  // Makes the text source of a job's graph that is not a file (a database, docs/design.md §10)
  // from its path and options; an error fails the job. Without one such a graph cannot be read.
  std::function<absl::Status(bsp::GraphSource& graph)> attach_graph;
  // Ships the results file a worker wrote to a job's sink that is not a file (a database table:
  // JobWork::output_options); an error fails the job. Without one such a job fails.
  std::function<absl::Status(const runner::JobDetails& details, const std::string& results)>
      ship_results;
  // The local paths a job's database URI (graph or output) has its client use, as (what, path),
  // or an error for one that cannot be confined: --data-root confines them as it does a job's
  // paths. Without one a database URI is taken as naming none.
  std::function<absl::StatusOr<std::vector<std::pair<std::string, std::string>>>(
      const std::string& uri)>
      uri_paths;
};

}  // namespace lockstep::dbsp
