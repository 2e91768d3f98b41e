#pragma once

// A worker's serve loop (ServeWorker, lockstep/dbsp/worker.h; docs/design.md §5.1): dials the
// master with backoff, waits in its pool, runs the job it is given with the job's data plane
// (WorkerJob, WorkerPhases), reports, and goes back to the pool, until stopped or its jobs are
// done. A watcher thread keeps the health service's readiness, turns a stop into the running
// job's failure, and bounds the teardown of the gRPC objects (WorkerOptions::teardown_limit).

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "job/peer_collective.h"
#include "job/worker_job.h"
#include "lockstep/catalogue/app.h"
#include "lockstep/dbsp/health.h"
#include "lockstep/dbsp/worker_options.h"
#include "lockstep/v1/jobqueue.grpc.pb.h"
#include "transport/master_link.h"
#include "transport/peer.h"
#include "transport/wire.h"

namespace lockstep::dbsp::job {

class ServeLoop {
 public:
  ServeLoop(const catalogue::AppRegistry& apps, const WorkerOptions& options,
            const std::atomic<bool>& stop)
      : apps_(apps), options_(options), stop_(stop), peer_channels_(options.security) {}
  // However the loop is left (an exception too), the gRPC objects go first, under the watcher's
  // deadline, and then the watcher.
  ~ServeLoop();
  ServeLoop(const ServeLoop&) = delete;
  ServeLoop& operator=(const ServeLoop&) = delete;

  // Serves until stopped or past WorkerOptions::max_jobs; what ServeWorker returns.
  absl::Status Run();

 private:
  // How one job on one stream ended.
  struct JobEnd {
    absl::Status status;
    bool retried = false;  // the master goes on with the job in a new attempt
    std::string split;     // the job's time split, for the log
    std::string tag;       // "job ID worker W: ", starting its log lines
  };
  // The job's data plane, which outlives the job's handler.
  struct DataPlane {
    DataPlane(transport::PeerChannels& channels, const transport::Assignment& a);
    transport::PeerLinks links;
    PeerCollective collective;
  };
  enum class Phase { kServing, kTearingDown, kDone };

  // The health service, the peer server and the channel to the master.
  absl::Status StartServices();
  // One stream: waits for a job and serves it; false once stopped.
  bool ServeStream();
  // The job that came first on `link`.
  JobEnd ServeJob(transport::MasterLink& link, const v1::JobDetails& details);
  // Joins `job` to the data plane and the master's stream for waits.
  void WirePeers(WorkerJob& job, transport::MasterLink& link, const transport::Assignment& a,
                 DataPlane& plane);
  // Runs the app the job names through `job`; this worker's own error.
  absl::Status RunApp(const transport::Assignment& a, WorkerJob& job, const std::string& tag);
  void SetRunning(WorkerJob* job);
  // The watcher thread's loop.
  void Watch();
  void Teardown();

  const catalogue::AppRegistry& apps_;
  const WorkerOptions& options_;
  const std::atomic<bool>& stop_;
  std::vector<std::filesystem::path> roots_;
  // The gRPC objects, made once the watcher runs: however they end, they end under its deadline.
  std::unique_ptr<HealthServer> health_;  // written under mu_
  std::unique_ptr<transport::PeerServer> peer_server_;
  transport::PeerChannels peer_channels_;
  std::shared_ptr<grpc::Channel> channel_;  // written under mu_
  std::unique_ptr<v1::JobQueue::Stub> stub_;
  std::string advertised_;
  std::chrono::milliseconds backoff_{100};
  uint64_t jobs_ = 0;
  bool warned_ = false;
  // The watcher's, under mu_.
  std::mutex mu_;
  WorkerJob* running_ = nullptr;
  Phase phase_ = Phase::kServing;
  std::chrono::steady_clock::time_point teardown_deadline_;
  absl::Status result_;
  std::thread watcher_;
};

}  // namespace lockstep::dbsp::job
