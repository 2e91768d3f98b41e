#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/dbsp/phase_time.h"
#include "lockstep/v1/jobqueue.pb.h"

namespace lockstep::dbsp {

// The master's side of one job as a state machine over the workers' payloads (DESIGN.md §4).
// It knows nothing of sockets: payloads come in through OnPayload, go out through `send`, so its
// transitions are unit-tested with fake payloads.
//
// Each worker must enter the barriers in protocol order: PRE(s), POST(s), POST_KEEP_RUNNING(s),
// then PRE(s+1) or, once the master decides to stop, EXECUTED_GRAPH, PERSISTED_RESULTS and
// COMPLETED_JOB. A duplicate or out-of-order entry, an unknown step type, a relay to a partition
// that does not exist (or to the sender itself), or a failure report aborts the job with a reason
// naming the worker. Relay batches are forwarded the moment they are read, so they are queued on
// their destination's stream before their sender's next barrier entry is counted: every message
// of superstep s reaches its worker before any worker leaves POST of s.
class JobCoordinator {
 public:
  using Send = std::function<void(uint32_t worker, v1::MasterPayload payload)>;

  // `names[i]` names worker i in errors (its index and peer address).
  JobCoordinator(std::vector<std::string> names, Send send);

  uint32_t num_workers() const { return static_cast<uint32_t>(names_.size()); }

  // A payload read from worker `worker`'s stream. Returns the abort reason if it broke the
  // protocol (the job is then aborted already).
  absl::Status OnPayload(uint32_t worker, v1::WorkerPayload payload);

  // Blocks until every worker has entered barrier `type` of `superstep`, or the job is aborted;
  // returns the entries in worker order.
  absl::StatusOr<std::vector<v1::Step>> WaitAll(v1::Step::Type type, uint64_t superstep);
  // Leaves the barrier: sends `release` to every worker and opens the next barrier.
  void ReleaseAll(const v1::Step& release);

  // Aborts the job (first reason wins) and wakes every waiter.
  void Abort(absl::Status reason);
  absl::Status status() const;

  // Relayed batches and bytes forwarded so far (progress and metrics).
  uint64_t relayed_batches() const;
  uint64_t relayed_bytes() const;

  // Time spent so far waiting in WaitAll (the first barrier, PRE of superstep 0, apart: it waits
  // for the workers to load), and forwarding relay batches (checks and the hand-over to the
  // destination's outbox, which blocks while that is full).
  const PhaseTime& start_wait() const { return start_wait_; }
  const PhaseTime& barrier_waits() const { return barrier_waits_; }
  const PhaseTime& forwarding() const { return forwarding_; }

 private:
  struct Expected {
    v1::Step::Type type;
    uint64_t superstep;
  };
  absl::Status Violation(uint32_t worker, const std::string& what);

  const std::vector<std::string> names_;
  const Send send_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  absl::Status status_;
  // The barrier every worker must enter next; `entered_[w]` once worker w has.
  Expected open_{v1::Step::PRE, 0};
  std::vector<bool> entered_;
  std::vector<v1::Step> entries_;
  uint32_t count_ = 0;
  uint64_t relayed_batches_ = 0;
  uint64_t relayed_bytes_ = 0;
  PhaseTime start_wait_;
  PhaseTime barrier_waits_;
  PhaseTime forwarding_;
};

}  // namespace lockstep::dbsp
