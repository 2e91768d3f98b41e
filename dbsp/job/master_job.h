#pragma once

// The master's side of one job (docs/design.md §5): the protocol's state behind one lock, the
// workers' streams, the waits for barriers bounded by --peer-timeout (WaitAll) and their releases
// (ReleaseAll), which the master's barrier actions go through (MasterPhases, master_phases.h),
// relay forwarding, stragglers, and the checkpoints' manifests.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/dbsp/job_spec.h"
#include "obs/phase_time.h"
#include "protocol/protocol.h"
#include "transport/streams.h"

namespace lockstep::dbsp::job {

// A job's checkpoints (docs/design.md §7.6): every `every` supersteps (0: none) the workers write
// their files into `dir`, the job's checkpoint directory, and the master the manifest; the newest
// `keep` stay.
struct CheckpointPlan {
  std::string dir;
  uint64_t every = 0;
  uint32_t keep = 2;
  std::string app;
  std::string job_id;
  // Also a checkpoint once this long has passed since the last one (or the attempt's start); 0:
  // by supersteps only.
  std::chrono::milliseconds interval{0};
  // Told each checkpoint's superstep once it is complete (on the manifest writer's thread).
  std::function<void(uint64_t)> on_complete;
};

class MasterJob final : public transport::WorkerStreamHandler {
 public:
  using Clock = std::chrono::steady_clock;

  // `streams[i]` is worker i's, `names[i]` names it in errors ("worker 1 (ipv4:...)").
  // `peer_timeout` bounds each wait for a barrier (zero: no bound).
  MasterJob(std::vector<transport::WorkerStream*> streams, std::vector<std::string> names,
            std::chrono::milliseconds peer_timeout);
  ~MasterJob() override;  // waits for a manifest being written

  uint32_t num_workers() const { return static_cast<uint32_t>(streams_.size()); }
  // In direct mode (the default) workers send supersteps' messages to each other, and a batch sent
  // to the master is a protocol violation. Set before Assign.
  void SetRelayDirect(bool direct) { relay_direct_ = direct; }
  // Whether another attempt may follow this one (docs/design.md §7.5): a worker lost (its stream
  // broke, a peer could not reach it, it is leaving on SIGTERM, it was silent past the peer
  // timeout) then ends only the attempt, and the abort tells the workers the job goes on (they
  // return to the pool without counting it). Set before Assign.
  void SetRetryAllowed(bool allowed) { retry_allowed_ = allowed; }
  // Whether the job's first failure was a lost worker.
  bool lost_worker() const;
  // Whether it was a worker that could not restore the attempt's checkpoint (its Failure says so):
  // the next attempt goes on from an older one, and the workers were told the job goes on.
  bool checkpoint_refused() const;
  // Stragglers (docs/design.md §7.5): a worker that has not entered a barrier (after the first)
  // `timeout` after the other workers all have (zero: three times the median of the others' times
  // from the barrier's opening, at least 1 s) straggles. It is reported (TakeStragglers, the log);
  // with `replace`, in a superstep's barrier of an attempt that another may follow, it is also
  // lost: the attempt ends and the next one goes on without it. Set before Assign.
  void SetStragglers(std::chrono::milliseconds timeout, bool replace) {
    straggler_timeout_ = timeout;
    replace_stragglers_ = replace;
  }
  // The stragglers reported since the last call ("worker 1 (ipv4:...) +2.1 s at POST(5)").
  std::vector<std::string> TakeStragglers();

  // --- the transport's threads
  void OnPayload(uint32_t worker, v1::WorkerPayload& payload) override;
  void OnHangUp(uint32_t worker, std::string_view why) override;

  // --- the job's thread
  // Sends worker i its job details; the job is then at PRE(0).
  absl::Status Assign(std::vector<v1::JobDetails> details);
  protocol::Position position() const;
  // Blocks until every worker has entered the barrier at `at`, the job is aborted, or a worker
  // has not entered within the peer timeout (which aborts the job naming it). Returns the
  // entries in worker order.
  absl::StatusOr<std::vector<protocol::Step>> WaitAll(protocol::Position at);
  // Checkpoints (docs/design.md §7.6): a checkpoint taken (the workers' CHECKPOINT entries, the
  // aggregators as they were then) is listed, with its manifest, once every worker has said in a
  // barrier entry that its file is durable; WaitAll checks at every barrier.
  void SetCheckpointPlan(CheckpointPlan plan) { checkpoints_ = std::move(plan); }
  // The traced IDs (--trace-vertex) each worker's range holds: the only vertices whose lines the
  // master takes from it, one line each per superstep.
  void SetTraced(std::vector<std::vector<std::string>> by_worker) {
    traced_ = std::move(by_worker);
  }
  // The traced IDs worker w's range holds.
  const std::vector<std::string>& traced(uint32_t w) const {
    static const std::vector<std::string> kNone;
    return w < traced_.size() ? traced_[w] : kNone;
  }
  void CheckpointTaken(uint64_t superstep, const std::vector<protocol::Step>& entries,
                       std::vector<std::pair<std::string, std::string>> aggregators);
  // Waits for the manifest being written, if any (the destructor does too); the first error of
  // one.
  absl::Status WaitForManifest();
  // Leaves the open barrier: sends `release` to every worker (with the stop decision at
  // POST_KEEP_RUNNING) and opens the next one.
  absl::Status ReleaseAll(const protocol::Step& release);
  // Aborts the job (the first reason wins), tells every worker why, and wakes every wait.
  void Abort(absl::Status reason);
  // Aborts it because the attempt's checkpoint cannot be restored (checkpoint_refused()).
  void AbortCheckpointRefused(absl::Status reason);
  absl::Status status() const;
  // The workers that had not entered a barrier when the peer timeout ended the job.
  std::vector<uint32_t> late() const;

  // Direct mode: what the workers say they sent each other (their POST entries).
  void AddRelayed(uint64_t batches, uint64_t bytes);
  uint64_t relayed_batches() const;
  uint64_t relayed_bytes() const;
  // When each worker last entered a barrier, and the workers' names.
  std::vector<Clock::time_point> entered_at() const;
  const std::vector<std::string>& names() const { return names_; }
  // Time waiting in WaitAll (the first barrier apart: it waits for the workers to load), and
  // forwarding relay batches.
  const PhaseTime& start_wait() const { return start_wait_; }
  const PhaseTime& barrier_waits() const { return barrier_waits_; }
  const PhaseTime& forwarding() const { return forwarding_; }

 private:
  // OnPayload's, by the payload's kind.
  void OnStep(uint32_t worker, const v1::Step& wire);
  void OnRelay(uint32_t worker, v1::WorkerPayload& payload);
  void OnWaiting(uint32_t worker, const v1::Waiting& waiting);
  void OnFailure(uint32_t worker, const v1::Failure& failure);
  // One barrier's watch for stragglers (WaitAll's): they are reported once, when due.
  struct StragglerWatch {
    bool reported = false;
    std::vector<uint32_t> workers;  // those reported
    Clock::time_point since;        // when the others were all in or held up
  };
  struct StragglersDue {
    std::optional<Clock::time_point> at;  // when the workers out of the barrier straggle
    bool replaced = false;                // they were, and are replaced: the job is aborted
  };
  // Under mu_: reports the stragglers at `at` once they are due (and replaces them if asked to),
  // or says when they will be.
  StragglersDue CheckStragglersLocked(protocol::Position at, StragglerWatch& watch);
  // Under mu_: aborts naming the workers that have not entered `at` within the peer timeout.
  void AbortLateLocked(protocol::Position at);
  // Aborts for a worker lost (under no lock).
  void AbortLost(absl::Status reason);
  // Aborts naming worker `worker` (under no lock).
  void Violation(uint32_t worker, const std::string& what);
  // `lost`: the reason is a worker lost, which another attempt may get past; `refused`: a worker
  // could not restore the attempt's checkpoint.
  void AbortLocked(absl::Status reason, bool lost = false, bool refused = false);
  void FlushAll();
  // The job thread's: writes the manifest of the checkpoint taken once `entries` say every file
  // of it is durable, and prunes the older ones.
  absl::Status CompleteCheckpoint(const std::vector<protocol::Step>& entries);

  const std::vector<transport::WorkerStream*> streams_;
  const std::vector<std::string> names_;
  const std::chrono::milliseconds peer_timeout_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  protocol::MasterProtocol protocol_;
  absl::Status status_;
  Clock::time_point opened_at_;  // when the open barrier opened
  std::vector<uint32_t> late_;
  // Per worker: when it entered the open barrier (the last barrier it entered), and when it last
  // said it waits for other workers.
  std::vector<Clock::time_point> entered_at_;
  std::vector<Clock::time_point> waited_at_;
  std::vector<std::vector<uint32_t>> waiting_for_;  // the peers each said it waits for
  std::chrono::milliseconds straggler_timeout_{0};
  bool replace_stragglers_ = false;
  std::vector<std::string> stragglers_;  // under mu_: reported, not yet taken
  // The job thread's, under mu_: the straggler bound past the others' entry, for the open barrier
  // (the first barrier has none).
  std::optional<Clock::duration> StragglerBound(const std::vector<uint32_t>& missing) const;
  // Under mu_: the workers that hold the open barrier up (see SetStragglers).
  std::vector<uint32_t> StragglersLocked() const;
  // Under mu_: when worker w (not a straggler) was in the barrier or said it was held up.
  Clock::time_point InOrHeldUpAt(uint32_t w) const {
    return waiting_[w] ? waited_at_[w] : entered_at_[w];
  }
  // Per worker: it said it waits for other workers in an exchange, since its last entry.
  std::vector<bool> waiting_;
  bool relay_direct_ = true;
  bool retry_allowed_ = false;
  bool lost_worker_ = false;         // under mu_
  bool checkpoint_refused_ = false;  // under mu_
  uint64_t relayed_batches_ = 0;
  uint64_t relayed_bytes_ = 0;
  bool waited_ = false;  // the job thread's: whether a barrier was waited for yet
  CheckpointPlan checkpoints_;
  std::vector<std::vector<std::string>> traced_;  // set before the job runs
  std::optional<bsp::CheckpointManifest> taken_;  // the job thread's
  std::thread manifest_writer_;
  absl::Status manifest_status_;  // under mu_
  PhaseTime start_wait_;
  PhaseTime barrier_waits_;
  PhaseTime forwarding_;
};

}  // namespace lockstep::dbsp::job
