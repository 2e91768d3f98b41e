#pragma once

// The data plane between the workers of a job (docs/design.md §5.7): every worker serves the
// PeerExchange service, and sends its batches to the other workers as calls of one batch, answered
// once the receiver holds them. The master is not on this path.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/dbsp/security.h"
#include "lockstep/v1/jobqueue.grpc.pb.h"
#include "transport/log_limit.h"

namespace lockstep::dbsp::transport {

// The metadata key of a worker's JobStream call that says where its peers reach it.
inline constexpr char kPeerAddressKey[] = "lockstep-peer-address";

// Where the master tells a worker's peers to reach it: `advertised` (HOST:PORT) as it is, or, if it
// is ":PORT", that port on the host the worker's stream comes from (`stream_peer`, gRPC's form
// "ipv4:10.0.0.3:5123" or "ipv6:[::1]:5123"). Empty if neither says.
std::string PeerAddressFor(std::string_view advertised, std::string_view stream_peer);

// Receives the batches a worker's peer server takes for the job registered under their key.
class PeerBatchHandler {
 public:
  virtual ~PeerBatchHandler() = default;
  // On a gRPC thread; must not block for long. A non-OK status refuses the batch: the sender's
  // job fails with it.
  virtual grpc::Status OnPeerBatch(v1::PeerBatch& batch, const std::string& peer) = 0;
};

// A worker's peer endpoint: a gRPC server of PeerExchange on the callback API. Batches go to the
// job registered under their key; a batch with any other key is refused (FAILED_PRECONDITION:
// a sender whose job has not started here yet tries again) and logged.
class PeerServer {
 public:
  // Listens on `address` (HOST:PORT; port 0 picks a free one), secured by `security`: a call
  // without its token is refused.
  static absl::StatusOr<std::unique_ptr<PeerServer>> Start(
      const std::string& address, std::shared_ptr<const Security> security = Security::Plain());
  ~PeerServer();

  int port() const { return port_; }
  // The running job (one at a time).
  void Register(const std::string& key, PeerBatchHandler* handler);
  // No job; returns once no call into the old handler is running.
  void Unregister();

 private:
  class Service;
  class Receiver;
  PeerServer();
  // Hands a batch to the registered job, or refuses it.
  grpc::Status Dispatch(v1::PeerBatch& batch, const std::string& peer);
  // Logs a call refused for want of the join token.
  void Refuse(const std::string& peer);

  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<const Security> security_;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable idle_;
  std::string key_;
  PeerBatchHandler* handler_ = nullptr;
  int calls_in_handler_ = 0;
  std::string last_refused_key_;  // logs a foreign job's key once
  LogLimit refusals_;             // calls without the token
};

// Channels to other workers, by address, kept across jobs (a job's peers are often the last
// job's).
class PeerChannels {
 public:
  explicit PeerChannels(std::shared_ptr<const Security> security = Security::Plain())
      : security_(std::move(security)) {}
  std::shared_ptr<grpc::Channel> Get(const std::string& address);
  const Security& security() const { return *security_; }
  // Drops the channels to addresses not in `keep`.
  void Retain(const std::vector<std::string>& keep);

 private:
  const std::shared_ptr<const Security> security_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_;
};

// A worker's sending side of one job: asynchronous calls to the other workers, at most
// `inflight_bytes` of batches unanswered (Send blocks beyond that: back-pressure by bytes), each
// call bounded by `timeout` (0: none). A receiver that does not know the job yet is asked again
// until `timeout`. The first failed call fails every later Send and Drain, naming the peer.
class PeerLinks {
 public:
  PeerLinks(PeerChannels& channels, std::vector<std::string> addresses, uint32_t self,
            std::string job_key, size_t inflight_bytes, std::chrono::milliseconds timeout);
  ~PeerLinks();  // cancels what is in flight and waits for it

  // Called once, on a gRPC thread, with the first failure of a call (not with a cancellation): the
  // job fails with it at once, whatever its thread is waiting for. The listener may call Cancel.
  // Setting another (or none) waits for a running call of the old one to end.
  void SetFailureListener(std::function<void(const absl::Status&)> listener);
  // Called (on the sending thread, under no lock) when a Send or Drain has waited `kWaitingAfter`
  // for answers, with the peers it waits for: the master then knows who holds this worker up
  // (a straggler, docs/design.md §7.5); and again with none when that wait is over. Set before the
  // first Send.
  static constexpr std::chrono::milliseconds kWaitingAfter{200};
  // A call that could not connect to its peer never left this process (gRPC fails a pick on a
  // channel with no connection before sending anything), so it is sent again, for this long
  // after its first such failure (and within the timeout): a blip on a live peer's connection
  // does not fail the job, and a peer that is gone fails it this long after the first try.
  static constexpr std::chrono::milliseconds kConnectGrace{1000};
  void SetWaitingListener(std::function<void(const std::vector<uint32_t>&)> listener) {
    on_waiting_ = std::move(listener);
  }

  uint32_t self() const { return self_; }
  uint32_t size() const { return static_cast<uint32_t>(addresses_.size()); }
  // Sends `batch` (its key, from and to are filled in) to worker `to`.
  absl::Status Send(uint32_t to, v1::PeerBatch batch);
  // Waits until every batch sent so far has been answered.
  absl::Status Drain();
  // The job is over: what is in flight is cancelled and Send and Drain fail with `reason`.
  void Cancel(absl::Status reason);
  // The peer whose call failed for want of a connection or an answer in time (not a refusal), if
  // that is why the links failed.
  std::optional<uint32_t> unreachable() const;
  // OK, or why the links failed (the first failed call, or the cancellation's reason).
  absl::Status status() const;
  // Bytes and batches sent so far.
  uint64_t sent_bytes() const;
  uint64_t sent_batches() const;

 private:
  struct Call;
  class Attempt;
  void Start(Call* call);
  void OnDone(Call* call, const grpc::Status& status);
  // Under mu_: ends or retries the call; true if it is the links' first failure.
  bool OnDoneLocked(Call* call, const grpc::Status& status);
  // Under mu_: the contexts of the calls in flight, to cancel once mu_ is released (a
  // cancellation may run a call's completion on the cancelling thread).
  std::vector<std::shared_ptr<grpc::ClientContext>> InFlightLocked() const;
  void RetryLoop();
  std::string Name(uint32_t worker) const;
  // Waits under `lock` until `done`; past kWaitingAfter, tells the waiting listener once whom.
  template <class Pred>
  void WaitReporting(std::unique_lock<std::mutex>& lock, Pred done);

  const Security& security_;  // the PeerChannels'
  const std::vector<std::string> addresses_;
  const uint32_t self_;
  const std::string key_;
  const size_t inflight_limit_;
  const std::chrono::milliseconds timeout_;
  std::vector<std::unique_ptr<v1::PeerExchange::Stub>> stubs_;
  mutable std::mutex mu_;
  // The senders' and Drain's waits: bytes or calls in flight changed, or the status.
  std::condition_variable changed_;
  // The retry thread's: a call queued for retry, or stopping_ (not every call's completion).
  std::condition_variable retry_changed_;
  size_t inflight_bytes_ = 0;
  size_t inflight_calls_ = 0;
  uint64_t sent_bytes_ = 0;
  uint64_t sent_batches_ = 0;
  absl::Status status_;
  std::optional<uint32_t> unreachable_;
  std::vector<Call*> calls_;   // in flight, for Cancel
  std::deque<Call*> retries_;  // refused as not yet known: asked again by the retry thread
  std::thread retry_thread_;
  std::mutex listener_mu_;  // held while the listener runs
  std::function<void(const absl::Status&)> on_failure_;
  std::function<void(const std::vector<uint32_t>&)> on_waiting_;
  bool stopping_ = false;
};

}  // namespace lockstep::dbsp::transport
