#pragma once

// A worker's transport: its stream to the master on gRPC's callback API.

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

#include "lockstep/dbsp/security.h"
#include "lockstep/v1/jobqueue.grpc.pb.h"
#include "obs/phase_time.h"
#include "transport/streams.h"

namespace lockstep::dbsp::transport {

// One stream to the master, for one job: it waits in the master's pool for the job details (the
// first payload), then carries the job. Reads are re-armed from OnReadDone and handed to the
// handler; writes drain an outbox bounded in bytes. A hold keeps the RPC alive while the worker's
// own threads may still start operations; Release() ends that once writes are done.
class MasterLink final : public grpc::ClientBidiReactor<v1::WorkerPayload, v1::MasterPayload>,
                         public MasterStream {
 public:
  MasterLink(v1::JobQueue::Stub& stub, size_t outbox_bytes);
  ~MasterLink() override;

  // Opens the stream, saying where this worker's peers reach it (peer.h, kPeerAddressKey), with
  // the join token `security` holds.
  void Start(const std::string& peer_address, const Security& security = *Security::Plain());
  // The first payload; nullopt if the stream ended first or `stop` was set (then it is cancelled).
  std::optional<v1::MasterPayload> AwaitFirst(const std::atomic<bool>& stop);
  // Hands every further payload to `handler` (set once, before the job runs).
  void SetHandler(MasterStreamHandler* handler);

  bool Send(v1::WorkerPayload payload) override;
  // No more payloads: half-closes once the outbox is drained. Then waits up to `grace` for the
  // master to end the RPC, and cancels it if it does not. Returns the RPC's status.
  grpc::Status Finish(std::chrono::milliseconds grace);
  void Cancel() { context_.TryCancel(); }

  // Time spent with a write in flight.
  const PhaseTime& writes() const { return writes_; }

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnWritesDoneDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  void StartNextWriteLocked(const v1::WorkerPayload** next);

  v1::JobQueue::Stub& stub_;
  const size_t outbox_bytes_;
  grpc::ClientContext context_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::pair<v1::WorkerPayload, size_t>> outbox_;  // front() in flight while writing_
  size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool closing_ = false;      // Finish was called: half-close once drained
  bool writes_done_ = false;  // WritesDone was started
  bool broken_ = false;       // a write failed or the RPC ended
  bool read_ended_ = false;
  bool done_ = false;
  bool held_ = true;
  std::optional<v1::MasterPayload> first_;
  bool first_taken_ = false;
  MasterStreamHandler* handler_ = nullptr;
  grpc::Status status_;
  v1::MasterPayload in_;
  std::chrono::steady_clock::time_point write_started_;
  PhaseTime writes_;
};

}  // namespace lockstep::dbsp::transport
