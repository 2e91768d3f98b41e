#include "lockstep/dbsp/coordinator.h"

#include "absl/strings/str_cat.h"

namespace lockstep::dbsp {
namespace {

std::string StepName(v1::Step::Type type, uint64_t superstep) {
  const std::string name =
      v1::Step::Type_IsValid(type) ? v1::Step::Type_Name(type) : absl::StrCat("type ", int(type));
  if (type == v1::Step::PRE || type == v1::Step::POST || type == v1::Step::POST_KEEP_RUNNING) {
    return absl::StrCat(name, " of superstep ", superstep);
  }
  return name;
}

}  // namespace

JobCoordinator::JobCoordinator(std::vector<std::string> names, Send send)
    : names_(std::move(names)),
      send_(std::move(send)),
      entered_(names_.size(), false),
      entries_(names_.size()) {}

absl::Status JobCoordinator::Violation(uint32_t worker, const std::string& what) {
  Abort(absl::FailedPreconditionError(absl::StrCat(names_[worker], ": ", what)));
  return status();  // the job's reason: an earlier abort's if there was one (first wins)
}

absl::Status JobCoordinator::OnPayload(uint32_t worker, v1::WorkerPayload payload) {
  switch (payload.payload_case()) {
    case v1::WorkerPayload::kStep: {
      const v1::Step& step = payload.step();
      std::unique_lock<std::mutex> lock(mu_);
      if (!status_.ok()) return status_;
      if (step.type() == v1::Step::INVALID || !v1::Step::Type_IsValid(step.type())) {
        lock.unlock();
        return Violation(worker, absl::StrCat("unsupported step type ", int(step.type())));
      }
      if (entered_[worker]) {
        lock.unlock();
        return Violation(worker,
                         absl::StrCat("entered ", StepName(step.type(), step.superstep()),
                                      " before leaving ", StepName(open_.type, open_.superstep)));
      }
      const bool counts_superstep = step.type() == v1::Step::PRE || step.type() == v1::Step::POST ||
                                    step.type() == v1::Step::POST_KEEP_RUNNING;
      if (step.type() != open_.type || (counts_superstep && step.superstep() != open_.superstep)) {
        lock.unlock();
        return Violation(
            worker, absl::StrCat("entered ", StepName(step.type(), step.superstep()),
                                 " but the job is at ", StepName(open_.type, open_.superstep)));
      }
      entered_[worker] = true;
      entries_[worker] = std::move(*payload.mutable_step());
      if (++count_ == names_.size()) changed_.notify_all();
      return absl::OkStatus();
    }
    case v1::WorkerPayload::kRelay: {
      PhaseTime::Scope timed(forwarding_);
      const v1::RelayBatch& relay = payload.relay();
      if (relay.from_partition() != worker) {
        return Violation(worker,
                         absl::StrCat("sent a relay batch as partition ", relay.from_partition()));
      }
      if (relay.to_partition() >= names_.size() || relay.to_partition() == worker) {
        return Violation(worker,
                         absl::StrCat("sent a relay batch to partition ", relay.to_partition(),
                                      ", which is not another "
                                      "worker's (",
                                      names_.size(), " workers)"));
      }
      if (relay.ids().size() % 16 != 0) {
        return Violation(worker, "sent a relay batch whose IDs are not 16 bytes each");
      }
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (!status_.ok()) return status_;
        // A batch of superstep s travels between the release of PRE(s) and its sender's POST(s)
        // entry; anything else would be delivered in the wrong superstep.
        if (open_.type != v1::Step::POST || relay.superstep() != open_.superstep ||
            entered_[worker]) {
          const std::string at = StepName(open_.type, open_.superstep);
          lock.unlock();
          return Violation(worker, absl::StrCat("sent a relay batch of superstep ",
                                                relay.superstep(), " while the job is at ", at,
                                                entered_[worker] ? " (after its own entry)" : ""));
        }
        ++relayed_batches_;
        relayed_bytes_ += relay.ids().size() + relay.payload().size();
      }
      const uint32_t to = relay.to_partition();
      v1::MasterPayload forward;
      *forward.mutable_relay() = std::move(*payload.mutable_relay());
      send_(to, std::move(forward));
      return absl::OkStatus();
    }
    case v1::WorkerPayload::kFailure:
      return Violation(worker, absl::StrCat("failed: ", payload.failure().reason()));
    default:
      return Violation(worker, "sent an empty or unknown payload");
  }
}

absl::StatusOr<std::vector<v1::Step>> JobCoordinator::WaitAll(v1::Step::Type type,
                                                              uint64_t superstep) {
  // The first barrier also waits for the workers to load their parts.
  PhaseTime::Scope timed(type == v1::Step::PRE && superstep == 0 ? start_wait_ : barrier_waits_);
  std::unique_lock<std::mutex> lock(mu_);
  if (type != open_.type || superstep != open_.superstep) {
    return absl::InternalError(absl::StrCat("master waits for ", StepName(type, superstep),
                                            " but the job is at ",
                                            StepName(open_.type, open_.superstep)));
  }
  changed_.wait(lock, [&] { return !status_.ok() || count_ == names_.size(); });
  if (!status_.ok()) return status_;
  return entries_;
}

void JobCoordinator::ReleaseAll(const v1::Step& release) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return;
    switch (open_.type) {
      case v1::Step::PRE:
        open_.type = v1::Step::POST;
        break;
      case v1::Step::POST:
        open_.type = v1::Step::POST_KEEP_RUNNING;
        break;
      case v1::Step::POST_KEEP_RUNNING:
        if (release.stop()) {
          open_.type = v1::Step::EXECUTED_GRAPH;
        } else {
          open_.type = v1::Step::PRE;
          ++open_.superstep;
        }
        break;
      case v1::Step::EXECUTED_GRAPH:
        open_.type = v1::Step::PERSISTED_RESULTS;
        break;
      case v1::Step::PERSISTED_RESULTS:
        open_.type = v1::Step::COMPLETED_JOB;
        break;
      default:
        open_.type = v1::Step::INVALID;  // nothing may follow COMPLETED_JOB
        break;
    }
    std::fill(entered_.begin(), entered_.end(), false);
    count_ = 0;
  }
  for (uint32_t w = 0; w < names_.size(); ++w) {
    v1::MasterPayload payload;
    *payload.mutable_step() = release;
    send_(w, std::move(payload));
  }
}

void JobCoordinator::Abort(absl::Status reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_.ok()) status_ = reason.ok() ? absl::AbortedError("job was aborted") : reason;
  changed_.notify_all();
}

absl::Status JobCoordinator::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

uint64_t JobCoordinator::relayed_batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return relayed_batches_;
}

uint64_t JobCoordinator::relayed_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return relayed_bytes_;
}

}  // namespace lockstep::dbsp
