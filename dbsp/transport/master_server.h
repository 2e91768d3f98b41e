#pragma once

// The master's transport: a gRPC server on the callback (reactor) API, so that threads do not
// grow with the number of streams; one WorkerSession per worker stream, and the pool of connected
// workers that are not in a job.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/dbsp/job_spec.h"
#include "lockstep/dbsp/security.h"
#include "lockstep/v1/jobqueue.grpc.pb.h"
#include "obs/phase_time.h"
#include "transport/health_service.h"
#include "transport/streams.h"

namespace lockstep::dbsp::transport {

class WorkerPool;

// One worker's stream on the master. Reads are re-armed from OnReadDone and handed to the
// current handler (the pool while the worker is idle, then its job); writes drain an outbox, one
// at a time, chained from OnWriteDone. A stream carries one job: Close() finishes the RPC once
// the outbox is drained and the worker has hung up (or at once with ForceClose()).
class WorkerSession final : public grpc::ServerBidiReactor<v1::WorkerPayload, v1::MasterPayload>,
                            public WorkerStream,
                            public std::enable_shared_from_this<WorkerSession> {
 public:
  // `peer_address`: where the worker's peers reach it (empty if it did not say).
  WorkerSession(std::string peer, std::string peer_address, WorkerPool& pool);

  // Starts reading and joins the pool; the session keeps itself alive until OnDone. `ticket` is
  // released with the session (its admission, MasterServer).
  void Start(std::shared_ptr<void> ticket = nullptr);

  const std::string& peer() const override { return peer_; }
  const std::string& peer_address() const { return peer_address_; }
  void Enqueue(v1::MasterPayload payload, bool urgent = false) override;
  void Flush() override;

  // From now on payloads and the hang-up go to `handler` as worker `index`. If the worker has
  // hung up already, the handler hears of it at once.
  void Attach(WorkerStreamHandler* handler, uint32_t index);
  // Back to no handler; returns once no call into the old handler is running.
  void Detach();
  // Ends the RPC with `status` once the outbox is drained and the worker has hung up.
  void Close(const grpc::Status& status);
  // Ends it now (the worker did not hang up in time); what is still queued is dropped.
  void ForceClose();
  bool hung_up() const;
  // Waits until the worker has hung up, or `deadline`.
  bool WaitHungUp(std::chrono::steady_clock::time_point deadline);
  // Time spent with a write in flight (all jobs so far).
  const PhaseTime& writes() const { return writes_; }

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Under mu_: whether to call Finish now (and marks it called).
  bool ShouldFinishLocked();
  void HangUp(std::string_view why);
  // Calls `call(handler, index)` on the current handler, if any, outside mu_.
  template <class F>
  void CallHandler(F call);
  void Finish();

  const std::string peer_;
  const std::string peer_address_;
  WorkerPool& pool_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<v1::MasterPayload> outbox_;  // front() is in flight while writing_
  bool writing_ = false;
  bool closing_ = false;
  bool forced_ = false;
  bool finish_called_ = false;
  bool hung_up_ = false;
  bool done_ = false;
  grpc::Status final_;
  WorkerStreamHandler* handler_ = nullptr;
  uint32_t index_ = 0;
  int calls_in_handler_ = 0;
  v1::WorkerPayload in_;
  std::chrono::steady_clock::time_point write_started_;
  PhaseTime writes_;
  std::shared_ptr<WorkerSession> self_;  // released in OnDone
  std::shared_ptr<void> ticket_;
};

// Connected workers that are not in a job, in the order they connected. While idle, a session's
// handler is the pool: a hang-up removes it, and a payload (a worker speaks only in a job) closes
// it as a protocol violation.
class WorkerPool final : public WorkerStreamHandler {
 public:
  void Add(std::shared_ptr<WorkerSession> session);
  // Takes workers out of the pool for a job, by the options; cancelled by `cancel` or ShutDown.
  absl::StatusOr<std::vector<std::shared_ptr<WorkerSession>>> Reserve(
      const PoolOptions& options, const std::atomic<bool>& cancel);
  // Closes every idle session and refuses new ones.
  void ShutDown();
  // Connected workers waiting for a job.
  size_t idle() const;

  void OnPayload(uint32_t worker, v1::WorkerPayload& payload) override;
  void OnHangUp(uint32_t worker, std::string_view why) override;

 private:
  std::shared_ptr<WorkerSession> TakeLocked(uint32_t id);

  mutable std::mutex mu_;
  std::condition_variable changed_;
  // Idle sessions by the id the pool gave them (their "worker" index while idle).
  std::list<std::pair<uint32_t, std::shared_ptr<WorkerSession>>> idle_;
  uint32_t next_id_ = 0;
  bool shut_down_ = false;
};

// The master's gRPC server: the job queue service, the pool, and the health service.
// Where the running job is, for the Status call (`lockstep status`).
class StatusBoard {
 public:
  // A job starts: at most `bound` supersteps (0: no bound known).
  void Begin(const std::string& job_id, const std::string& app, uint64_t bound);
  void Step(const MasterProgress& p);
  void End();
  v1::StatusReply Reply(uint32_t connected) const;

 private:
  mutable std::mutex mu_;
  bool running_ = false;
  std::string job_id_, app_;
  uint64_t bound_ = 0, superstep_ = 0, active_ = 0, steps_ = 0;
  double step_seconds_ = 0;
  std::chrono::steady_clock::time_point started_{};
  std::vector<std::string> names_;
  std::vector<double> seconds_;
};

class MasterServer {
 public:
  // Listens on `address`, secured by `security`: a worker without its token is refused before it
  // enters the pool.
  static absl::StatusOr<std::unique_ptr<MasterServer>> Start(
      const std::string& address, std::shared_ptr<const Security> security = Security::Plain());
  ~MasterServer();

  int port() const { return port_; }
  // Workers connected now (in the pool or in a job).
  uint32_t connected() const;
  WorkerPool& pool() { return pool_; }
  StatusBoard& status() { return status_; }
  HealthService& health() { return health_; }
  // Closes the pool and stops serving (streams still open are cancelled after a short grace).
  void Shutdown();

 private:
  class Service;
  class Admissions;
  explicit MasterServer(std::shared_ptr<const Security> security);

  WorkerPool pool_;
  StatusBoard status_;
  std::shared_ptr<const Security> security_;
  std::unique_ptr<Service> service_;
  HealthService health_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace lockstep::dbsp::transport
