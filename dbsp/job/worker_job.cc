#include "job/worker_job.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/text.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp::job {

using protocol::Barrier;
using protocol::Step;

namespace {

// A failure report carries at most this much of the reason; the master escapes it.
constexpr size_t kReportBytes = 16 * 1024;
constexpr size_t kShownBytes = 1024;

}  // namespace

WorkerJob::WorkerJob(transport::MasterStream& link, const transport::Assignment& assignment)
    : link_(link),
      index_(assignment.details.place.worker_index),
      peer_timeout_(assignment.peer_timeout),
      max_batch_bytes_(assignment.max_batch_bytes),
      count_(assignment.details.place.worker_count),
      app_(assignment.details.work.app),
      job_id_(assignment.details.work.job_id),
      checkpoint_dir_(assignment.details.resume.checkpoint_dir) {
  const absl::Status st =
      protocol_.Assign(assignment.details.place.worker_index, assignment.details.place.worker_count,
                       assignment.details.resume.superstep);
  if (!st.ok()) FailLocked(st, false);  // nobody else sees the job yet
}

protocol::Position WorkerJob::position() const {
  std::lock_guard<std::mutex> lock(mu_);
  return protocol_.position();
}

void WorkerJob::FailLocked(absl::Status reason, bool by_master) {
  if (status_.ok()) {
    status_ = std::move(reason);
    failed_by_master_ = by_master;
  }
  protocol_.Abort();
  if (executor_ != nullptr) executor_->Cancel();
  if (links_ != nullptr) links_->Cancel(status_);
  if (collective_ != nullptr) collective_->Fail(status_);
  changed_.notify_all();
}

void WorkerJob::Fail(absl::Status reason) {
  std::lock_guard<std::mutex> lock(mu_);
  FailLocked(std::move(reason), false);
}

bool WorkerJob::retrying() const {
  std::lock_guard<std::mutex> lock(mu_);
  return retrying_;
}

absl::Status WorkerJob::FailureOr(const absl::Status& fallback) const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_.ok() ? fallback : status_;
}

void WorkerJob::OnPayload(v1::MasterPayload& payload) {
  switch (payload.payload_case()) {
    case v1::MasterPayload::kStep: {
      auto release = transport::FromWire(payload.step());
      std::lock_guard<std::mutex> lock(mu_);
      if (!status_.ok()) return;
      absl::Status st = release.status();
      if (st.ok()) st = protocol_.OnRelease(*release);
      if (!st.ok()) return FailLocked(st, false);
      released_ = std::move(*release);
      changed_.notify_all();
      return;
    }
    case v1::MasterPayload::kRelay: {
      if (auto st = AcceptRelay(*payload.mutable_relay(), false); !st.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        FailLocked(st, false);
      }
      return;
    }
    case v1::MasterPayload::kAbort: {
      std::lock_guard<std::mutex> lock(mu_);
      // Also after this worker failed first (a peer it could not reach): the master says whether
      // the job goes on without it.
      retrying_ = payload.abort().retrying();
      FailLocked(absl::AbortedError(
                     absl::StrCat("job aborted by the master: ",
                                  bsp::SanitizeForLog(payload.abort().reason(), kShownBytes))),
                 true);
      return;
    }
    case v1::MasterPayload::kJobDetails: {
      std::lock_guard<std::mutex> lock(mu_);
      FailLocked(absl::FailedPreconditionError("the master assigned a second job on one stream"),
                 false);
      return;
    }
    default: {
      std::lock_guard<std::mutex> lock(mu_);
      FailLocked(absl::FailedPreconditionError("unexpected payload from the master"), false);
    }
  }
}

absl::Status WorkerJob::AcceptRelay(v1::RelayBatch& wire, bool direct) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok() || engine_ended_) return absl::OkStatus();  // over here: a late batch is moot
    if (direct != relay_direct_) {
      return absl::FailedPreconditionError(
          absl::StrCat("a relay batch came ", direct ? "from a peer" : "through the master", " in ",
                       relay_direct_ ? "direct" : "master", " relay mode"));
    }
    if (auto st = protocol_.CheckRelay(wire.superstep(), wire.from_partition(), wire.to_partition(),
                                       direct);
        !st.ok()) {
      return st;
    }
  }
  absl::StatusOr<bsp::RelayBatch> batch;
  {
    PhaseTime::Scope timed(decode_);
    batch = transport::FromWire(std::move(wire));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.ok() || engine_ended_) return absl::OkStatus();
  if (!batch.ok()) return batch.status();
  if (engine_ == nullptr) {
    return absl::FailedPreconditionError("a relay batch arrived before the job started");
  }
  PhaseTime::Scope timed(accept_);
  return engine_->AcceptRelayed(std::move(*batch));
}

void WorkerJob::AttachPeers(transport::PeerLinks* links, PeerCollective* collective,
                            bool relay_direct) {
  std::lock_guard<std::mutex> lock(mu_);
  links_ = links;
  collective_ = collective;
  relay_direct_ = relay_direct;
  if (!status_.ok()) {
    if (links_ != nullptr) links_->Cancel(status_);
    if (collective_ != nullptr) collective_->Fail(status_);
  }
}

grpc::Status WorkerJob::OnPeerBatch(v1::PeerBatch& batch, const std::string& peer) {
  absl::Status st;
  if (batch.to() != index_) {
    st = absl::InvalidArgumentError(
        absl::StrCat("a batch for worker ", batch.to(), " reached worker ", index_));
  } else if (batch.has_relay()) {
    if (batch.relay().from_partition() != batch.from()) {
      st = absl::InvalidArgumentError(absl::StrCat("worker ", batch.from(),
                                                   " sent a relay batch as partition ",
                                                   batch.relay().from_partition()));
    } else {
      st = AcceptRelay(*batch.mutable_relay(), true);
    }
  } else if (batch.has_chunk()) {
    PeerCollective* collective;
    {
      std::lock_guard<std::mutex> lock(mu_);
      collective = collective_;
    }
    st = collective == nullptr
             ? absl::FailedPreconditionError("an exchange piece arrived before the job started")
             : collective->OnChunk(batch.from(), *batch.mutable_chunk());
  } else {
    st = absl::InvalidArgumentError("an empty batch");
  }
  if (st.ok()) return grpc::Status::OK;
  const std::string reason =
      absl::StrCat("peer ", bsp::SanitizeForLog(peer, 128), " (worker ", batch.from(),
                   "): ", bsp::SanitizeForLog(std::string(st.message()), kShownBytes));
  {
    std::lock_guard<std::mutex> lock(mu_);
    // An error the job already had (it failed here first) is not this peer's doing.
    if (status_.ok()) FailLocked(absl::Status(st.code(), reason), false);
  }
  return grpc::Status(grpc::StatusCode::ABORTED, reason);
}

void WorkerJob::OnHangUp(std::string_view why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (protocol_.position().barrier == Barrier::kDone) return;
  FailLocked(absl::UnavailableError(std::string(why)), true);
}

absl::StatusOr<Step> WorkerJob::Enter(Step entry) {
  const protocol::Position at = entry.position();
  if (auto st = checkpoint_files_.status(); !st.ok()) Fail(st);
  entry.checkpoint_written = checkpoint_files_.written();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return status_;
    if (auto st = protocol_.Enter(entry); !st.ok()) {
      FailLocked(absl::InternalError(st.message()), false);
      return status_;
    }
    released_.reset();
  }
  PhaseTime::Scope timed(barrier_);
  // The superstep's split: this barrier's wall time and the run delay in it.
  struct SplitScope {
    WorkerJob& job;
    int kind;  // PRE 0, POST 1, POST_KEEP_RUNNING 2; -1: after the supersteps
    PhaseTime::Clock::time_point start = PhaseTime::Clock::now();
    double queue = job.RunDelaySeconds();
    ~SplitScope() {
      if (kind < 0) return;
      const double now_queue = job.RunDelaySeconds();
      job.split_.barrier[kind] +=
          std::chrono::duration<double>(PhaseTime::Clock::now() - start).count();
      job.split_.barrier_queue += now_queue - queue;
      if (kind == 0) job.split_.queue_at_work = now_queue;
    }
  } split{*this, at.barrier == Barrier::kPre               ? 0
                 : at.barrier == Barrier::kPost            ? 1
                 : at.barrier == Barrier::kPostKeepRunning ? 2
                                                           : -1};
  v1::WorkerPayload payload;
  *payload.mutable_step() = transport::ToWire(entry);
  if (!link_.Send(std::move(payload))) return FailureOr(absl::AbortedError("job was aborted"));
  std::unique_lock<std::mutex> lock(mu_);
  auto ready = [&] { return !status_.ok() || released_.has_value(); };
  if (peer_timeout_.count() > 0 && protocol::IsPerSuperstep(at.barrier)) {
    // The master waits up to the peer timeout for the slowest worker; it is not alive if its
    // release takes twice that. After the supersteps the master's own work (checking every part,
    // publishing) has no such bound: keepalive alone tells whether it is there.
    if (!changed_.wait_for(lock, 2 * peer_timeout_, ready)) {
      FailLocked(absl::DeadlineExceededError(
                     absl::StrCat("the master did not release ", protocol::Describe(at), " within ",
                                  2 * peer_timeout_.count() / 1000.0, " s")),
                 false);
    }
  } else {
    changed_.wait(lock, ready);
  }
  if (!status_.ok()) return status_;
  Step release = std::move(*released_);
  released_.reset();
  return release;
}

absl::Status WorkerJob::Relay(bsp::RelayBatch batch) {
  if (relay_direct_) {
    const uint32_t to = batch.to_partition;
    v1::PeerBatch peer;
    {
      PhaseTime::Scope timed(encode_);
      *peer.mutable_relay() = transport::ToWire(std::move(batch));
    }
    PhaseTime::Scope timed(enqueue_);  // blocks while too much is unanswered (back-pressure)
    if (auto st = links_->Send(to, std::move(peer)); !st.ok()) {
      Fail(st);
      return FailureOr(st);
    }
    return absl::OkStatus();
  }
  v1::WorkerPayload payload;
  {
    PhaseTime::Scope timed(encode_);
    *payload.mutable_relay() = transport::ToWire(std::move(batch));
  }
  PhaseTime::Scope timed(enqueue_);  // blocks while the outbox is full (back-pressure)
  if (!link_.Send(std::move(payload))) return FailureOr(absl::AbortedError("job was aborted"));
  return absl::OkStatus();
}

absl::Status WorkerJob::DrainRelays() {
  if (!relay_direct_) return absl::OkStatus();
  PhaseTime::Scope timed(drain_);
  const auto start = PhaseTime::Clock::now();
  const double queue = RunDelaySeconds();
  absl::Status st = links_->Drain();
  split_.drain += std::chrono::duration<double>(PhaseTime::Clock::now() - start).count();
  split_.drain_queue += RunDelaySeconds() - queue;
  if (!st.ok()) {
    Fail(st);
    return FailureOr(st);
  }
  return absl::OkStatus();
}

std::pair<uint64_t, uint64_t> WorkerJob::TakeRelayedCounts() {
  if (!relay_direct_ || links_ == nullptr) return {0, 0};
  const uint64_t batches = links_->sent_batches(), bytes = links_->sent_bytes();
  const std::pair<uint64_t, uint64_t> since{batches - counted_batches_, bytes - counted_bytes_};
  counted_batches_ = batches;
  counted_bytes_ = bytes;
  return since;
}

void WorkerJob::SetEngine(bsp::StepEngine* engine) {
  std::lock_guard<std::mutex> lock(mu_);
  engine_ = engine;
}

void WorkerJob::DetachEngine() {
  std::lock_guard<std::mutex> lock(mu_);
  engine_ = nullptr;
  engine_ended_ = true;
}

void WorkerJob::SetExecutor(bsp::Executor* executor) {
  std::lock_guard<std::mutex> lock(mu_);
  executor_ = executor;
  if (!status_.ok() && executor_ != nullptr) executor_->Cancel();
}

absl::StatusOr<runner::OutputSummary> WorkerJob::WriteCheckpoint(bsp::StepEngine& engine,
                                                                 uint64_t next) {
  if (checkpoint_dir_.empty()) {
    return absl::FailedPreconditionError(
        "the master asked for a checkpoint, but the job has no checkpoint directory");
  }
  const auto start = PhaseTime::Clock::now();
  const bsp::CheckpointHeader header{app_, job_id_, next, index_, count_};
  // The index (the vertices' UUIDs and out-degrees) goes once, with the attempt's first checkpoint.
  std::string index;
  if (!checkpoint_index_made_) {
    index = engine.CheckpointIndex(header);
    if (index.size() < 4) return absl::UnimplementedError("this engine does not checkpoint");
    checkpoint_index_crc_ = bsp::CheckpointCrc(index);
    checkpoint_index_made_ = true;
  }
  bsp::CheckpointWriter writer(header, checkpoint_index_crc_, engine.num_local_vertices());
  if (auto st = engine.WriteCheckpoint(next, writer); !st.ok()) return st;
  std::string bytes = writer.Finish();
  const runner::OutputSummary summary{writer.records(), bytes.size(), writer.crc32c()};
  spdlog::debug("{}checkpoint before superstep {}: {} records, {} bytes encoded in {:.1f} ms",
                log_tag_, next, summary.vertices, summary.bytes + index.size(),
                std::chrono::duration<double, std::milli>(PhaseTime::Clock::now() - start).count());
  // Written in the background while the job goes on: the master lists the checkpoint once every
  // worker has said its file is durable (checkpoint_written in a later entry).
  const std::string dir = bsp::CheckpointStepDir(checkpoint_dir_, next);
  if (auto st = checkpoint_files_.Submit(
          next, dir, bsp::CheckpointFileName(dir, index_), std::move(bytes),
          bsp::CheckpointIndexName(checkpoint_dir_, index_), std::move(index), log_tag_);
      !st.ok()) {
    return st;
  }
  return summary;
}

absl::Status WorkerJob::FlushCheckpoints() {
  absl::Status st = checkpoint_files_.Wait();
  if (!st.ok()) Fail(st);
  return st;
}

void WorkerJob::Finish(const absl::Status& local_error) {
  std::optional<std::string> report;
  uint32_t unreachable = 0;
  bool leaving = false;
  bool refused = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!local_error.ok()) {
      if (status_.ok()) {
        status_ = local_error;
        failed_by_master_ = false;
      }
      if (!failed_by_master_) report = std::string(status_.message().substr(0, kReportBytes));
      // Only the worker's shutdown (SIGTERM) fails a job here with Cancelled.
      leaving = absl::IsCancelled(status_);
      // The job failed because a peer could not be reached: say which, for the master to blame.
      if (links_ != nullptr && links_->unreachable() && status_ == links_->status()) {
        unreachable = *links_->unreachable() + 1;
      }
      // The checkpoint it was to restore from could not be used, unless a peer was lost (an
      // exchange of the restore that failed is not the checkpoint's fault).
      refused = bsp::IsCheckpointRefused(status_) &&
                !(links_ != nullptr && links_->unreachable().has_value());
    }
  }
  if (report) {
    v1::WorkerPayload failure;
    failure.mutable_failure()->set_reason(*report);
    failure.mutable_failure()->set_unreachable_peer(unreachable);
    failure.mutable_failure()->set_leaving(leaving);
    failure.mutable_failure()->set_checkpoint_refused(refused);
    (void)link_.Send(std::move(failure));
  }
}

void WorkerJob::AddStep(const bsp::StepStats& s) {
  last_step_ = s;
  split_.step_queue = RunDelaySeconds() - split_.queue_at_work;
  steps_seconds_ += s.seconds;
  engine_encode_seconds_ += s.relay_encode_seconds;
  engine_decode_seconds_ += s.relay_decode_seconds;
}

void WorkerJob::EndRun(double run_seconds) {
  run_seconds_ = run_seconds;
  run_barrier_seconds_ = barrier_.seconds();
  run_barrier_count_ = barrier_.count();
}

std::string WorkerJob::TimeSplit() const {
  auto f = [](const PhaseTime& p) {
    return absl::StrFormat("%.3f s (%d)", p.seconds(), p.count());
  };
  return absl::StrCat("time split: run ", absl::StrFormat("%.3f s", run_seconds_), " = supersteps ",
                      absl::StrFormat("%.3f s", steps_seconds_), " (relay encode ",
                      absl::StrFormat("%.3f s", engine_encode_seconds_), ", of which wire encode ",
                      f(encode_), " and outbox wait ", f(enqueue_), "; relay decode ",
                      absl::StrFormat("%.3f s", engine_decode_seconds_), ") + drain wait ",
                      f(drain_), " + barrier waits ",
                      absl::StrFormat("%.3f s (%d)", run_barrier_seconds_, run_barrier_count_),
                      "; alongside: wire decode ", f(decode_), ", hand-over ", f(accept_));
}

void WorkerJob::BeginStep() {
  // The run delay is read only for the debug line (a pread at each end of a phase).
  if (run_delay_ == nullptr && spdlog::should_log(spdlog::level::debug)) {
    run_delay_ = std::make_unique<RunDelay>();
  }
  split_ = StepSplitTimes{};
  split_.start = PhaseTime::Clock::now();
  split_.outbox_before = enqueue_.seconds();
  split_.queue_at_work = RunDelaySeconds();
}

std::string WorkerJob::StepSplit(uint64_t superstep) const {
  const StepSplitTimes& t = split_;
  const bsp::StepStats& s = last_step_;
  const double period = std::chrono::duration<double>(PhaseTime::Clock::now() - t.start).count();
  const double barriers = t.barrier[0] + t.barrier[1] + t.barrier[2];
  return absl::StrFormat(
      "superstep %d split | step %.2f ms (relay decode %.2f, relay encode %.2f, of which outbox "
      "wait %.2f) | drain %.2f ms | barriers %.2f ms (%.2f, %.2f, %.2f) | waiting for a core "
      "%.2f ms (step %.2f, drain %.2f, barriers %.2f) | period %.2f ms",
      superstep, s.seconds * 1e3, s.relay_decode_seconds * 1e3, s.relay_encode_seconds * 1e3,
      (enqueue_.seconds() - t.outbox_before) * 1e3, t.drain * 1e3, barriers * 1e3,
      t.barrier[0] * 1e3, t.barrier[1] * 1e3, t.barrier[2] * 1e3,
      (t.step_queue + t.drain_queue + t.barrier_queue) * 1e3, t.step_queue * 1e3,
      t.drain_queue * 1e3, t.barrier_queue * 1e3, period * 1e3);
}

}  // namespace lockstep::dbsp::job
