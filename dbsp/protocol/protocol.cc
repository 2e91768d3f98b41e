#include "protocol/protocol.h"

#include "absl/strings/str_cat.h"

namespace lockstep::dbsp::protocol {

bool IsFinal(Barrier b) { return b == Barrier::kDone || b == Barrier::kAborted; }

bool IsPerSuperstep(Barrier b) {
  return b == Barrier::kPre || b == Barrier::kPost || b == Barrier::kPostKeepRunning ||
         b == Barrier::kCheckpoint;
}

bool IsBarrier(Barrier b) { return b != Barrier::kAwaitingJob && !IsFinal(b); }

std::optional<Position> Next(Position from, Event event) {
  if (event == Event::kAbort) {
    if (IsFinal(from.barrier)) return std::nullopt;
    return Position{Barrier::kAborted, from.superstep};
  }
  for (const Transition& t : kTransitions) {
    if (t.from == from.barrier && t.event == event) {
      return Position{t.to, from.superstep + (t.next_superstep ? 1 : 0)};
    }
  }
  return std::nullopt;
}

const char* Name(Barrier b) {
  switch (b) {
    case Barrier::kAwaitingJob:
      return "AWAITING_JOB";
    case Barrier::kPre:
      return "PRE";
    case Barrier::kPost:
      return "POST";
    case Barrier::kPostKeepRunning:
      return "POST_KEEP_RUNNING";
    case Barrier::kExecutedGraph:
      return "EXECUTED_GRAPH";
    case Barrier::kPersistedResults:
      return "PERSISTED_RESULTS";
    case Barrier::kCompletedJob:
      return "COMPLETED_JOB";
    case Barrier::kDone:
      return "DONE";
    case Barrier::kAborted:
      return "ABORTED";
    case Barrier::kCheckpoint:
      return "CHECKPOINT";
  }
  return "UNKNOWN";
}

const char* Name(Event e) {
  switch (e) {
    case Event::kAssign:
      return "ASSIGN";
    case Event::kRelease:
      return "RELEASE";
    case Event::kReleaseStop:
      return "RELEASE_STOP";
    case Event::kAbort:
      return "ABORT";
    case Event::kReleaseCheckpoint:
      return "RELEASE_CHECKPOINT";
  }
  return "UNKNOWN";
}

std::string Describe(Position p) {
  if (IsPerSuperstep(p.barrier))
    return absl::StrCat(Name(p.barrier), " of superstep ", p.superstep);
  return std::string(Name(p.barrier));
}

namespace {

absl::Status Refuse(std::string what) { return absl::FailedPreconditionError(std::move(what)); }

// Whether `entry` names the barrier at `at` (the superstep counts only where a barrier has one).
bool Names(const Step& entry, Position at) {
  return entry.barrier == at.barrier &&
         (!IsPerSuperstep(at.barrier) || entry.superstep == at.superstep);
}

std::string Shown(const Step& s) {
  return IsBarrier(s.barrier) ? Describe(s.position())
                              : absl::StrCat("a step that is no barrier (", Name(s.barrier), ")");
}

}  // namespace

Step StepWithCounts(Barrier barrier, const bsp::StepStats& counts) {
  Step step;
  step.barrier = barrier;
  step.superstep = counts.superstep;
  step.active = counts.active;
  step.messages = counts.messages;
  step.unhalted = counts.unhalted;
  return step;
}

bsp::StepStats CountsOf(const Step& step) {
  bsp::StepStats s;
  s.superstep = step.superstep;
  s.active = step.active;
  s.messages = step.messages;
  s.unhalted = step.unhalted;
  return s;
}

Event ReleaseEvent(const Step& release) {
  return release.stop         ? Event::kReleaseStop
         : release.checkpoint ? Event::kReleaseCheckpoint
                              : Event::kRelease;
}

// --- MasterProtocol

MasterProtocol::MasterProtocol(uint32_t workers) : entered_(workers, false), entries_(workers) {}

absl::Status MasterProtocol::Assign(uint64_t superstep) {
  auto next = Next(at_, Event::kAssign);
  if (!next) return Refuse(absl::StrCat("the job is assigned again at ", Describe(at_)));
  at_ = *next;
  at_.superstep = superstep;
  return absl::OkStatus();
}

absl::Status MasterProtocol::Enter(uint32_t worker, Step entry) {
  if (worker >= entered_.size()) return Refuse(absl::StrCat("no worker ", worker, " in this job"));
  if (!IsBarrier(at_.barrier)) {
    return Refuse(absl::StrCat("entered ", Shown(entry), " but the job is at ", Describe(at_)));
  }
  if (!IsBarrier(entry.barrier)) return Refuse(absl::StrCat("entered ", Shown(entry)));
  if (entered_[worker]) {
    return Refuse(absl::StrCat("entered ", Shown(entry), " before leaving ", Describe(at_)));
  }
  if (!Names(entry, at_)) {
    return Refuse(absl::StrCat("entered ", Shown(entry), " but the job is at ", Describe(at_)));
  }
  entered_[worker] = true;
  entries_[worker] = std::move(entry);
  ++count_;
  return absl::OkStatus();
}

absl::Status MasterProtocol::CheckRelay(uint32_t worker, uint64_t superstep, uint32_t from,
                                        uint32_t to) const {
  const uint32_t n = workers();
  if (from != worker) return Refuse(absl::StrCat("sent a relay batch as partition ", from));
  if (to >= n || to == worker) {
    return Refuse(absl::StrCat("sent a relay batch to partition ", to,
                               ", which is not another worker's (", n, " workers)"));
  }
  if (at_.barrier != Barrier::kPost || superstep != at_.superstep || entered_[worker]) {
    return Refuse(absl::StrCat("sent a relay batch of superstep ", superstep,
                               " while the job is at ", Describe(at_),
                               entered_[worker] ? " (after its own entry)" : ""));
  }
  return absl::OkStatus();
}

std::vector<uint32_t> MasterProtocol::missing() const {
  std::vector<uint32_t> out;
  for (uint32_t w = 0; w < entered_.size(); ++w) {
    if (!entered_[w]) out.push_back(w);
  }
  return out;
}

absl::Status MasterProtocol::Release(Event event) {
  if (!complete()) {
    return Refuse(
        absl::StrCat("the master releases ", Describe(at_), " before every worker entered"));
  }
  auto next = Next(at_, event);
  if (!next || event == Event::kAbort || event == Event::kAssign) {
    return Refuse(absl::StrCat("the master may not ", Name(event), " at ", Describe(at_)));
  }
  at_ = *next;
  std::fill(entered_.begin(), entered_.end(), false);
  count_ = 0;
  return absl::OkStatus();
}

void MasterProtocol::Abort() {
  if (auto next = Next(at_, Event::kAbort)) at_ = *next;
}

// --- WorkerProtocol

absl::Status WorkerProtocol::Assign(uint32_t worker_index, uint32_t worker_count,
                                    uint64_t superstep) {
  if (worker_count == 0 || worker_index >= worker_count) {
    return Refuse(absl::StrCat("the job names this worker ", worker_index, " of ", worker_count));
  }
  auto next = Next(at_, Event::kAssign);
  if (!next) return Refuse(absl::StrCat("a second job assignment at ", Describe(at_)));
  at_ = *next;
  at_.superstep = superstep;
  index_ = worker_index;
  count_ = worker_count;
  return absl::OkStatus();
}

absl::Status WorkerProtocol::Enter(const Step& entry) {
  if (!IsBarrier(at_.barrier) || entered_ || !Names(entry, at_)) {
    return Refuse(absl::StrCat("this worker enters ", Shown(entry), " at ", Describe(at_),
                               entered_ ? " (still waiting for its release)" : ""));
  }
  entered_ = true;
  return absl::OkStatus();
}

absl::Status WorkerProtocol::OnRelease(const Step& release) {
  if (!entered_ || !Names(release, at_)) {
    return Refuse(absl::StrCat("the master released ", Shown(release), " while this worker ",
                               entered_ ? "waits for the release of " : "has not entered ",
                               Describe(at_)));
  }
  if ((release.stop || release.checkpoint) && at_.barrier != Barrier::kPostKeepRunning) {
    return Refuse(absl::StrCat("the master decided to ", release.stop ? "stop" : "checkpoint",
                               " at ", Describe(at_)));
  }
  if (release.stop && release.checkpoint) {
    return Refuse(
        absl::StrCat("the master decided both to stop and to checkpoint at ", Describe(at_)));
  }
  auto next = Next(at_, ReleaseEvent(release));
  if (!next) return Refuse(absl::StrCat("no release of ", Describe(at_)));
  at_ = *next;
  entered_ = false;
  return absl::OkStatus();
}

absl::Status WorkerProtocol::CheckRelay(uint64_t superstep, uint32_t from, uint32_t to,
                                        bool direct) const {
  if (to != index_ || from >= count_ || from == index_) {
    return Refuse(absl::StrCat("a relay batch from partition ", from, " to partition ", to,
                               " reached worker ", index_, " of ", count_));
  }
  const bool early = direct && at_.barrier == Barrier::kPre && entered_;
  if ((at_.barrier != Barrier::kPost && !early) || superstep != at_.superstep) {
    return Refuse(
        absl::StrCat("a relay batch of superstep ", superstep, " arrived at ", Describe(at_)));
  }
  return absl::OkStatus();
}

void WorkerProtocol::Abort() {
  if (auto next = Next(at_, Event::kAbort)) at_ = *next;
  entered_ = false;
}

}  // namespace lockstep::dbsp::protocol
