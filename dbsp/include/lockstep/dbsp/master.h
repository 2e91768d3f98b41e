#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/catalogue/app.h"
#include "lockstep/dbsp/job_spec.h"
#include "lockstep/dbsp/security.h"

namespace lockstep::dbsp {

namespace transport {
class MasterServer;
}  // namespace transport

// Asks the master at `address` (its workers' port, with the workers' credentials).
absl::StatusOr<JobStatus> QueryStatus(const std::string& address, std::chrono::milliseconds timeout,
                                      const Security& security = *Security::Plain());

// The master: a gRPC server whose connected workers wait in a pool, and the coordinator of one job
// at a time over workers reserved from that pool. It holds no vertices.
class Master {
 public:
  // Listens on `address` (HOST:PORT; port 0 picks a free one).
  // Serves workers on `address`, its connections secured by `security`.
  static absl::StatusOr<std::unique_ptr<Master>> Start(
      const std::string& address, std::shared_ptr<const Security> security = Security::Plain());
  ~Master();

  int port() const;
  // Workers connected now, in the pool or in a job.
  uint32_t connected_workers() const;
  // Runs one job to completion or abort. Whatever happens, the reserved workers are released
  // (told why if the job failed) and the master can run the next job. `cancel` aborts the job.
  absl::StatusOr<JobResult> RunJob(const JobSpec& spec, const std::atomic<bool>& cancel);
  // Tells every connected worker the master is going away and stops serving.
  void Shutdown();

 private:
  explicit Master(std::unique_ptr<transport::MasterServer> server);
  std::unique_ptr<transport::MasterServer> server_;
};

}  // namespace lockstep::dbsp
