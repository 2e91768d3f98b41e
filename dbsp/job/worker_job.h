#pragma once

// A worker's side of one job (docs/design.md §5): the protocol's state behind one lock, the
// barrier client (Enter) that the worker's barrier actions go through (WorkerPhases,
// worker_phases.h), the relayer for the engine's outgoing batches, and the receiving end of the
// master's stream.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job/checkpoint_files.h"
#include "job/peer_collective.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/relayer.h"
#include "lockstep/dbsp/metrics.h"
#include "lockstep/runner/job_runner.h"
#include "obs/phase_time.h"
#include "protocol/protocol.h"
#include "transport/peer.h"
#include "transport/streams.h"
#include "transport/wire.h"

namespace lockstep::dbsp::job {

class WorkerJob final : public transport::MasterStreamHandler,
                        public transport::PeerBatchHandler,
                        public bsp::Relayer {
 public:
  // `assignment` came with the first payload of `link`.
  WorkerJob(transport::MasterStream& link, const transport::Assignment& assignment);

  // The data plane (before the job runs): batches to the other workers go through `links`, the
  // load's exchanges through `collective`; with `relay_direct` so do the supersteps' messages.
  void AttachPeers(transport::PeerLinks* links, PeerCollective* collective, bool relay_direct);

  // --- the transport's threads
  void OnPayload(v1::MasterPayload& payload) override;
  void OnHangUp(std::string_view why) override;
  grpc::Status OnPeerBatch(v1::PeerBatch& batch, const std::string& peer) override;

  // --- the job's thread
  protocol::Position position() const;
  // Enters the open barrier and waits for its release (bounded by twice the peer timeout).
  absl::StatusOr<protocol::Step> Enter(protocol::Step entry);
  absl::Status Relay(bsp::RelayBatch batch) override;
  // Direct mode: waits until the other workers hold every batch this one sent (before it enters
  // POST(s): the ordering invariant, docs/design.md §5.5).
  absl::Status DrainRelays();
  // Direct mode: the batches and bytes sent to peers since the last call (for the POST entry).
  std::pair<uint64_t, uint64_t> TakeRelayedCounts();
  void SetEngine(bsp::StepEngine* engine);
  // The job's bound on a batch to one peer (0: none).
  uint64_t max_batch_bytes() const { return max_batch_bytes_; }
  // Before the engine goes away: relay batches that still arrive are dropped.
  void DetachEngine();
  void SetExecutor(bsp::Executor* executor);
  // At the master's request, between supersteps: encodes this worker's file of the checkpoint
  // before superstep `next` (docs/design.md §7.6) and writes it into the job's checkpoint
  // directory in the background; says what it holds (records, bytes, CRC-32C) for its CHECKPOINT
  // entry. Every later entry says which checkpoint is durable.
  absl::StatusOr<runner::OutputSummary> WriteCheckpoint(bsp::StepEngine& engine, uint64_t next);
  // Waits until the checkpoint files are written; fails the job if one could not be.
  absl::Status FlushCheckpoints();

  // Any thread: fails the job here (a local error, SIGTERM); the master is told in Finish.
  void Fail(absl::Status reason);
  // The job's failure if it has one (the master's reason when the master aborted), else
  // `fallback`.
  absl::Status FailureOr(const absl::Status& fallback) const;
  // Whether the master aborted the job to go on with it in a new attempt (also when this worker
  // failed first: it hears the master's abort while its stream ends).
  bool retrying() const;
  // The job is over here: queues a failure report for the master if the failure is this
  // worker's own (the first local reason, not the cancellation it caused).
  void Finish(const absl::Status& local_error);

  // Timing, for the log at the job's end.
  void AddStep(const bsp::StepStats& s);
  void EndRun(double run_seconds);
  std::string TimeSplit() const;
  // One superstep's split, for its debug line (the cost model's terms, docs/design.md §5.8):
  // each phase's wall time and how long the job thread waited for a core in it, a clock pair
  // and a schedstat read at the ends of each phase. BeginStep before the superstep's first
  // barrier, StepSplit after its last; the job thread only.
  void BeginStep();
  std::string StepSplit(uint64_t superstep) const;
  void set_log_tag(std::string tag) { log_tag_ = std::move(tag); }
  const std::string& log_tag() const { return log_tag_; }
  // Where the job's figures go (docs/design.md §12); null: nowhere.
  void set_metrics(Metrics* metrics) { metrics_ = metrics; }
  Metrics* metrics() const { return metrics_; }

 private:
  void FailLocked(absl::Status reason, bool by_master);
  // Checks and hands a relayed batch to the engine (from the master's stream or a peer).
  absl::Status AcceptRelay(v1::RelayBatch& wire, bool direct);

  transport::MasterStream& link_;
  const uint32_t index_;
  const std::chrono::milliseconds peer_timeout_;
  const uint64_t max_batch_bytes_;
  const uint32_t count_;
  const std::string app_, job_id_, checkpoint_dir_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  protocol::WorkerProtocol protocol_;
  absl::Status status_;
  bool failed_by_master_ = false;
  bool retrying_ = false;
  std::optional<protocol::Step> released_;
  bsp::StepEngine* engine_ = nullptr;
  bool engine_ended_ = false;
  bsp::Executor* executor_ = nullptr;
  transport::PeerLinks* links_ = nullptr;
  PeerCollective* collective_ = nullptr;
  bool relay_direct_ = false;
  uint64_t counted_batches_ = 0, counted_bytes_ = 0;  // job thread
  // Job thread: barrier_, encode_, enqueue_ (sends blocked by back-pressure), drain_ (waiting for
  // the peers' answers before POST); transport threads: decode_, accept_.
  PhaseTime barrier_, encode_, enqueue_, drain_, decode_, accept_;
  // The superstep under way (job thread).
  struct StepSplitTimes {
    PhaseTime::Clock::time_point start;
    double barrier[3] = {0, 0, 0};  // PRE, POST, POST_KEEP_RUNNING
    double drain = 0;
    double outbox_before = 0;  // enqueue_ when the superstep began
    // The job thread's run delay: in the barriers, in the superstep's own work (from PRE's
    // release to the progress callback), in the drain; where it stood when the work began.
    double barrier_queue = 0, step_queue = 0, drain_queue = 0;
    double queue_at_work = 0;
  } split_;
  std::unique_ptr<RunDelay> run_delay_;  // the job thread's, opened by BeginStep
  double RunDelaySeconds() const { return run_delay_ != nullptr ? run_delay_->seconds() : 0; }
  bsp::StepStats last_step_;
  std::string log_tag_;
  Metrics* metrics_ = nullptr;
  double steps_seconds_ = 0, engine_encode_seconds_ = 0, engine_decode_seconds_ = 0;
  double run_seconds_ = 0, run_barrier_seconds_ = 0;
  uint64_t run_barrier_count_ = 0;
  uint32_t checkpoint_index_crc_ = 0;  // of the index, written with the first checkpoint
  bool checkpoint_index_made_ = false;
  CheckpointFiles checkpoint_files_;  // last: its write ends before the rest goes
};

}  // namespace lockstep::dbsp::job
