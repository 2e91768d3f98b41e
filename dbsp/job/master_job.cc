#include "job/master_job.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/text.h"
#include "lockstep/dbsp/settings.h"
#include "spdlog/spdlog.h"
#include "transport/wire.h"

namespace lockstep::dbsp::job {

using protocol::Barrier;
using protocol::Position;
using protocol::Step;

namespace {

// Bounds what a peer's reason may put into a log line or an abort (docs/design.md §7).
constexpr size_t kReasonBytes = 1024;

// Lists a checkpoint whose files are durable: checks that each is there with the size its worker
// reported (its CRC is checked when read), and its index too, writes the manifest and prunes the
// older checkpoints.
absl::Status WriteManifest(const CheckpointPlan& plan, const bsp::CheckpointManifest& manifest) {
  const uint64_t superstep = manifest.header.superstep;
  const std::string dir = bsp::CheckpointStepDir(plan.dir, superstep);
  uint64_t bytes = 0, records = 0, index_bytes = 0;
  for (uint32_t w = 0; w < manifest.files.size(); ++w) {
    const bsp::CheckpointPart& f = manifest.files[w];
    const std::string path = bsp::CheckpointFileName(dir, w);
    std::error_code ec;
    const std::string index = bsp::CheckpointIndexName(plan.dir, w);
    index_bytes += std::filesystem::file_size(index, ec);
    if (ec) {
      return absl::DataLossError(absl::StrCat("worker ", w, "'s checkpoint index ", index,
                                              " cannot be read: ", ec.message()));
    }
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (ec || size != f.bytes) {
      return absl::DataLossError(absl::StrCat("worker ", w, " wrote checkpoint file ", path, " of ",
                                              f.bytes, " bytes, but ",
                                              ec ? absl::StrCat("it cannot be read: ", ec.message())
                                                 : absl::StrCat("it holds ", size)));
    }
    bytes += f.bytes;
    records += f.records;
  }
  if (auto st = bsp::WriteCheckpointManifest(dir, manifest); !st.ok()) return st;
  if (auto st = bsp::PruneCheckpoints(plan.dir, plan.keep); !st.ok()) return st;
  // The earlier attempts' checkpoints are older than this one: they go too (a later attempt's,
  // which only a master that took the job over could make, stays).
  std::error_code ec;
  const std::filesystem::path mine(plan.dir);
  uint64_t my_attempt = 0;
  const std::string my_name = mine.filename().string();
  if (my_name.rfind("attempt-", 0) == 0 && absl::SimpleAtoi(my_name.substr(8), &my_attempt)) {
    for (const auto& entry : std::filesystem::directory_iterator(mine.parent_path(), ec)) {
      const std::string name = entry.path().filename().string();
      uint64_t attempt = 0;
      if (name.rfind("attempt-", 0) == 0 && absl::SimpleAtoi(name.substr(8), &attempt) &&
          attempt < my_attempt) {
        std::filesystem::remove_all(entry.path(), ec);
      }
    }
  }
  if (plan.on_complete) plan.on_complete(superstep);
  spdlog::info(
      "job {}: checkpoint before superstep {} is complete: {} bytes, {} records (the attempt's "
      "index: {} bytes)",
      plan.job_id, superstep, bytes, records, index_bytes);
  return absl::OkStatus();
}

std::string ShowDuration(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return absl::StrCat(d.count() / 1000, " s");
  return absl::StrCat(d.count(), " ms");
}

}  // namespace

MasterJob::MasterJob(std::vector<transport::WorkerStream*> streams, std::vector<std::string> names,
                     std::chrono::milliseconds peer_timeout)
    : streams_(std::move(streams)),
      names_(std::move(names)),
      peer_timeout_(peer_timeout),
      protocol_(static_cast<uint32_t>(streams_.size())),
      opened_at_(Clock::now()),
      entered_at_(streams_.size()),
      waited_at_(streams_.size()),
      waiting_for_(streams_.size()),
      waiting_(streams_.size(), false) {}

void MasterJob::FlushAll() {
  for (transport::WorkerStream* s : streams_) s->Flush();
}

void MasterJob::AbortLocked(absl::Status reason, bool lost, bool refused) {
  if (!status_.ok()) return;
  status_ = reason.ok() ? absl::AbortedError("job was aborted") : std::move(reason);
  lost_worker_ = lost;
  checkpoint_refused_ = refused;
  protocol_.Abort();
  v1::MasterPayload abort;
  abort.mutable_abort()->set_reason(std::string(status_.message()));
  // A checkpoint refused is passed over, whatever restarts are left (docs/design.md §7.6).
  abort.mutable_abort()->set_retrying((retry_allowed_ && lost_worker_) || checkpoint_refused_);
  for (transport::WorkerStream* s : streams_) s->Enqueue(abort, /*urgent=*/true);
  changed_.notify_all();
}

bool MasterJob::lost_worker() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lost_worker_;
}

bool MasterJob::checkpoint_refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoint_refused_;
}

void MasterJob::Abort(absl::Status reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    AbortLocked(std::move(reason));
  }
  FlushAll();
}

void MasterJob::AbortLost(absl::Status reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    AbortLocked(std::move(reason), /*lost=*/true);
  }
  FlushAll();
}

void MasterJob::AbortCheckpointRefused(absl::Status reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    AbortLocked(std::move(reason), /*lost=*/false, /*refused=*/true);
  }
  FlushAll();
}

void MasterJob::Violation(uint32_t worker, const std::string& what) {
  Abort(absl::FailedPreconditionError(absl::StrCat(names_[worker], ": ", what)));
}

void MasterJob::OnPayload(uint32_t worker, v1::WorkerPayload& payload) {
  switch (payload.payload_case()) {
    case v1::WorkerPayload::kStep:
      return OnStep(worker, payload.step());
    case v1::WorkerPayload::kRelay:
      return OnRelay(worker, payload);
    case v1::WorkerPayload::kWaiting:
      return OnWaiting(worker, payload.waiting());
    case v1::WorkerPayload::kFailure:
      return OnFailure(worker, payload.failure());
    default:
      return Violation(worker, "sent an empty or unknown payload");
  }
}

void MasterJob::OnStep(uint32_t worker, const v1::Step& wire) {
  auto step = transport::FromWire(wire);
  if (!step.ok()) return Violation(worker, std::string(step.status().message()));
  absl::Status refused;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return;
    refused = protocol_.Enter(worker, std::move(*step));
    waiting_[worker] = false;
    entered_at_[worker] = Clock::now();
    // Every entry wakes the job thread: the last one to come may be a straggler.
    if (refused.ok()) changed_.notify_all();
  }
  if (!refused.ok()) Violation(worker, std::string(refused.message()));
}

void MasterJob::OnRelay(uint32_t worker, v1::WorkerPayload& payload) {
  PhaseTime::Scope timed(forwarding_);
  const v1::RelayBatch& relay = payload.relay();
  if (relay_direct_) {
    return Violation(worker, "sent a relay batch to the master in direct relay mode");
  }
  if (relay.ids().size() % 16 != 0) {
    return Violation(worker, "sent a relay batch whose IDs are not 16 bytes each");
  }
  const uint32_t to = relay.to_partition();
  absl::Status refused;
  {
    // Under the lock: queued on its destination's stream after that worker's release of PRE(s)
    // and before its release of POST(s), which the ordering invariant needs.
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return;
    refused = protocol_.CheckRelay(worker, relay.superstep(), relay.from_partition(), to);
    if (refused.ok()) {
      ++relayed_batches_;
      relayed_bytes_ += relay.ids().size() + relay.payload().size();
      v1::MasterPayload forward;
      *forward.mutable_relay() = std::move(*payload.mutable_relay());
      streams_[to]->Enqueue(std::move(forward));
    }
  }
  if (!refused.ok()) return Violation(worker, std::string(refused.message()));
  streams_[to]->Flush();
}

void MasterJob::OnWaiting(uint32_t worker, const v1::Waiting& waiting) {
  std::lock_guard<std::mutex> lock(mu_);
  // No peers: the wait it told of is over.
  waiting_for_[worker].clear();
  for (uint32_t p : waiting.peers()) {
    if (p < streams_.size()) waiting_for_[worker].push_back(p);
  }
  waiting_[worker] = !waiting_for_[worker].empty();
  waited_at_[worker] = Clock::now();
  changed_.notify_all();  // the workers it waits for may be stragglers
}

void MasterJob::OnFailure(uint32_t worker, const v1::Failure& failure) {
  const uint32_t peer = failure.unreachable_peer();
  if (peer > 0 && peer <= num_workers() && peer - 1 != worker) {
    // A worker could not reach a peer: the peer is the one that is gone, as if its own stream
    // had broken (which the master may learn only later, from keepalive).
    return AbortLost(absl::UnavailableError(absl::StrCat(
        names_[peer - 1], " disconnected: ", names_[worker],
        " could not reach it: ", bsp::SanitizeForLog(failure.reason(), kReasonBytes))));
  }
  if (failure.leaving()) {
    // A worker going away is lost, as if its stream had broken: a job may recover from it.
    return AbortLost(absl::UnavailableError(absl::StrCat(
        names_[worker], " is leaving: ", bsp::SanitizeForLog(failure.reason(), kReasonBytes))));
  }
  const std::string failed =
      absl::StrCat("failed: ", bsp::SanitizeForLog(failure.reason(), kReasonBytes));
  if (failure.checkpoint_refused()) {
    return AbortCheckpointRefused(absl::DataLossError(absl::StrCat(names_[worker], ": ", failed)));
  }
  Violation(worker, failed);
}

void MasterJob::OnHangUp(uint32_t worker, std::string_view why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok() || !protocol_.HangUpIsFailure()) return;
    AbortLocked(absl::UnavailableError(absl::StrCat(names_[worker], " ", std::string(why))),
                /*lost=*/true);
  }
  FlushAll();
}

absl::Status MasterJob::Assign(std::vector<v1::JobDetails> details) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return status_;
    if (auto st = protocol_.Assign(details.empty() ? 0 : details[0].resume_superstep()); !st.ok()) {
      AbortLocked(absl::InternalError(st.message()));
      return status_;
    }
    opened_at_ = Clock::now();
    for (uint32_t w = 0; w < streams_.size(); ++w) {
      v1::MasterPayload payload;
      *payload.mutable_job_details() = std::move(details[w]);
      streams_[w]->Enqueue(std::move(payload));
    }
  }
  FlushAll();
  return absl::OkStatus();
}

Position MasterJob::position() const {
  std::lock_guard<std::mutex> lock(mu_);
  return protocol_.position();
}

absl::StatusOr<std::vector<Step>> MasterJob::WaitAll(Position at) {
  // The first barrier (PRE of superstep 0, or of the superstep an attempt resumes at) also waits
  // for the workers to load their parts.
  const bool first = !waited_;
  waited_ = true;
  PhaseTime::Scope timed(first ? start_wait_ : barrier_waits_);
  std::unique_lock<std::mutex> lock(mu_);
  if (!status_.ok()) return status_;
  if (protocol_.position() != at) {
    return absl::InternalError(absl::StrCat("master waits for ", protocol::Describe(at),
                                            " but the job is at ",
                                            protocol::Describe(protocol_.position())));
  }
  auto ready = [&] { return !status_.ok() || protocol_.complete(); };
  const auto never = Clock::time_point::max();
  const Clock::time_point peer_deadline =
      peer_timeout_.count() > 0 ? opened_at_ + peer_timeout_ : never;
  // The first barrier waits for the load, which varies: no stragglers.
  StragglerWatch watch{.reported = first};
  bool aborted_here = false;
  while (!ready()) {
    Clock::time_point deadline = peer_deadline;
    if (!watch.reported) {
      const StragglersDue due = CheckStragglersLocked(at, watch);
      if (due.replaced) {
        aborted_here = true;
        break;
      }
      if (watch.reported) continue;
      if (due.at) deadline = std::min(deadline, *due.at);
    }
    if (deadline == never) {
      changed_.wait(lock);
    } else if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
               deadline == peer_deadline && !ready()) {
      AbortLateLocked(at);
      aborted_here = true;
      break;
    }
  }
  if (aborted_here) {  // the workers are told at once
    lock.unlock();
    FlushAll();
    return status();
  }
  if (!status_.ok()) return status_;
  for (uint32_t w : watch.workers) {
    const double late = std::chrono::duration<double>(Clock::now() - watch.since).count();
    stragglers_.push_back(absl::StrCat(names_[w], " +", absl::StrFormat("%.1f", late), " s at ",
                                       protocol::Describe(at)));
  }
  std::vector<Step> entries = protocol_.entries();
  lock.unlock();
  if (auto st = CompleteCheckpoint(entries); !st.ok()) {
    Abort(st);
    return status();
  }
  return entries;
}

MasterJob::StragglersDue MasterJob::CheckStragglersLocked(Position at, StragglerWatch& watch) {
  // Stragglers: workers not in the barrier that are not held up by others (a worker waiting for
  // a straggler's answers is its victim, not one).
  const std::vector<uint32_t> missing = StragglersLocked();
  if (missing.empty() || missing.size() >= streams_.size()) return {};
  const std::optional<Clock::duration> bound = StragglerBound(missing);
  if (!bound) return {};
  Clock::time_point others_in = opened_at_;
  for (uint32_t w = 0; w < streams_.size(); ++w) {
    if (std::find(missing.begin(), missing.end(), w) == missing.end()) {
      others_in = std::max(others_in, InOrHeldUpAt(w));
    }
  }
  const Clock::time_point due = others_in + *bound;
  if (Clock::now() < due) return {.at = due};
  watch.reported = true;
  watch.workers = missing;
  watch.since = others_in;
  std::vector<std::string> named;
  for (uint32_t w : missing) named.push_back(names_[w]);
  const std::string what =
      absl::StrCat(absl::StrJoin(named, ", "), missing.size() == 1 ? " straggles" : " straggle",
                   " at ", protocol::Describe(at), ": out of it, or holding up those in it, ",
                   ShowDuration(std::chrono::duration_cast<std::chrono::milliseconds>(*bound)),
                   " after the other workers",
                   straggler_timeout_.count() > 0
                       ? absl::StrCat(" (", SettingName(Setting::kStragglerTimeout), ")")
                       : std::string(" (3 x the median of their times)"));
  // Replaced only where another attempt follows and only in the supersteps (the end phases'
  // writes vary too much to judge).
  if (replace_stragglers_ && retry_allowed_ && protocol::IsPerSuperstep(at.barrier)) {
    late_ = missing;  // cut off at once: a straggler is writing nothing
    AbortLocked(absl::UnavailableError(absl::StrCat(what, ": replaced (",
                                                    SettingName(Setting::kReplaceStragglers), ")")),
                /*lost=*/true);
    return {.replaced = true};
  }
  spdlog::warn("straggler: {}", what);
  return {};
}

void MasterJob::AbortLateLocked(Position at) {
  std::vector<std::string> late;
  late_ = protocol_.missing();
  // A late worker that waits for others in an exchange is held up, not the cause: name the ones
  // it waits for (unless every late worker says it waits).
  for (uint32_t w : late_) {
    if (!waiting_[w]) late.push_back(names_[w]);
  }
  if (late.empty()) {
    for (uint32_t w : late_) late.push_back(names_[w]);
  }
  AbortLocked(absl::DeadlineExceededError(absl::StrCat(
                  absl::StrJoin(late, ", "), late.size() == 1 ? " has" : " have", " not entered ",
                  protocol::Describe(at), " within ", ShowDuration(peer_timeout_), " (",
                  SettingName(Setting::kPeerTimeout), ")")),
              /*lost=*/true);
}

void MasterJob::CheckpointTaken(uint64_t superstep, const std::vector<Step>& entries,
                                std::vector<std::pair<std::string, std::string>> aggregators) {
  bsp::CheckpointManifest manifest;
  manifest.header = {checkpoints_.app, checkpoints_.job_id, superstep, 0, num_workers()};
  for (const Step& e : entries)
    manifest.files.push_back({e.part.vertices, e.part.bytes, e.part.crc32c});
  manifest.aggregators = std::move(aggregators);
  taken_ = std::move(manifest);
}

absl::Status MasterJob::CompleteCheckpoint(const std::vector<Step>& entries) {
  if (!taken_) return absl::OkStatus();
  const uint64_t superstep = taken_->header.superstep;
  for (const Step& e : entries) {
    if (e.checkpoint_written < superstep) return absl::OkStatus();
  }
  // The manifest is written off the barrier's path, one at a time; an error fails the job at the
  // next checkpoint or the job's end (the destructor waits).
  if (auto st = WaitForManifest(); !st.ok()) return st;
  manifest_writer_ = std::thread([this, manifest = std::move(*taken_)] {
    absl::Status st = WriteManifest(checkpoints_, manifest);
    std::lock_guard<std::mutex> lock(mu_);
    if (!st.ok() && manifest_status_.ok()) manifest_status_ = st;
  });
  taken_.reset();
  return absl::OkStatus();
}

absl::Status MasterJob::WaitForManifest() {
  if (manifest_writer_.joinable()) manifest_writer_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return manifest_status_;
}

MasterJob::~MasterJob() { (void)WaitForManifest(); }

std::vector<uint32_t> MasterJob::StragglersLocked() const {
  // Out of the barrier and not held up by others, or waited for by a worker held up (in the
  // barrier itself, but not answering its peers).
  const std::vector<uint32_t> out = protocol_.missing();
  std::vector<bool> straggles(streams_.size(), false);
  for (uint32_t w : out) {
    if (!waiting_[w]) straggles[w] = true;
  }
  for (uint32_t w : out) {
    if (!waiting_[w]) continue;
    for (uint32_t p : waiting_for_[w]) {  // in range: checked as it came
      const bool held_up_too = waiting_[p] && std::find(out.begin(), out.end(), p) != out.end();
      if (p != w && !held_up_too) straggles[p] = true;
    }
  }
  std::vector<uint32_t> stragglers;
  for (uint32_t w = 0; w < streams_.size(); ++w) {
    if (straggles[w]) stragglers.push_back(w);
  }
  return stragglers;
}

std::optional<MasterJob::Clock::duration> MasterJob::StragglerBound(
    const std::vector<uint32_t>& missing) const {
  if (straggler_timeout_.count() > 0) return straggler_timeout_;
  // Three times the median of the others' times from the barrier's opening, at least 1 s.
  std::vector<Clock::duration> times;
  for (uint32_t w = 0; w < streams_.size(); ++w) {
    if (std::find(missing.begin(), missing.end(), w) == missing.end()) {
      times.push_back(InOrHeldUpAt(w) - opened_at_);
    }
  }
  if (times.empty()) return std::nullopt;
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return std::max<Clock::duration>(std::chrono::seconds(1), 3 * times[times.size() / 2]);
}

std::vector<std::string> MasterJob::TakeStragglers() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(stragglers_, {});
}

absl::Status MasterJob::ReleaseAll(const Step& release) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return status_;
    Step r = release;
    r.barrier = protocol_.position().barrier;
    r.superstep = protocol_.position().superstep;
    const protocol::Event event = protocol::ReleaseEvent(r);
    if (auto st = protocol_.Release(event); !st.ok()) {
      AbortLocked(absl::InternalError(st.message()));
    } else {
      opened_at_ = Clock::now();
      v1::MasterPayload payload;
      *payload.mutable_step() = transport::ToWire(r);
      for (transport::WorkerStream* s : streams_) s->Enqueue(payload);
    }
  }
  FlushAll();
  return status();
}

absl::Status MasterJob::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

std::vector<uint32_t> MasterJob::late() const {
  std::lock_guard<std::mutex> lock(mu_);
  return late_;
}

void MasterJob::AddRelayed(uint64_t batches, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  relayed_batches_ += batches;
  relayed_bytes_ += bytes;
}

uint64_t MasterJob::relayed_batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return relayed_batches_;
}

std::vector<MasterJob::Clock::time_point> MasterJob::entered_at() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entered_at_;
}

uint64_t MasterJob::relayed_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return relayed_bytes_;
}

}  // namespace lockstep::dbsp::job
