#include "job/master_attempt.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "job/job_ids.h"
#include "job/output_dir.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/text.h"
#include "lockstep/bsp/vertex_id.h"
#include "spdlog/spdlog.h"
#include "transport/peer.h"
#include "transport/wire.h"

namespace lockstep::dbsp::job {
namespace {

using Clock = AttemptClock;

// How long a finished stream waits for its worker to hang up before cutting it off.
constexpr auto kHangUpGrace = std::chrono::seconds(5);

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Ends every reserved worker's stream once the worker has hung up (it does once it has read the
// end of its job); one that has not within the grace is cut off.
void CloseStreams(std::vector<std::shared_ptr<transport::WorkerSession>>& workers,
                  const grpc::Status& status) {
  for (auto& w : workers) w->Close(status);
  const auto deadline = Clock::now() + kHangUpGrace;
  for (auto& w : workers) {
    if (!w->WaitHungUp(deadline)) w->ForceClose();
  }
  for (auto& w : workers) w->Detach();
}

// The traced vertices (--trace-vertex) by the worker whose range of `split` holds them, whose
// lines about them the master takes.
std::vector<std::vector<std::string>> TracedByWorker(const partition::Range& split, uint32_t n,
                                                     const std::vector<std::string>& ids) {
  std::vector<std::vector<std::string>> traced(n);
  for (const std::string& id : ids) {
    auto owner = split.PartitionFor(bsp::VertexIdFromExternal(id));
    if (!owner.ok() || *owner >= n) continue;
    std::vector<std::string>& mine = traced[*owner];
    if (std::find(mine.begin(), mine.end(), id) == mine.end()) mine.push_back(id);
  }
  return traced;
}

// Turns cancellation (the master's SIGTERM) into an abort of the attempt that wakes every wait,
// while it lives.
class CancelWatch {
 public:
  CancelWatch(const std::atomic<bool>& cancel, MasterJob& master)
      : thread_([this, &cancel, &master] {
          while (!done_.load()) {
            if (cancel.load()) {
              master.Abort(absl::CancelledError("master is shutting down (job cancelled)"));
              return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }) {}
  ~CancelWatch() {
    done_.store(true);
    thread_.join();
  }
  CancelWatch(const CancelWatch&) = delete;
  CancelWatch& operator=(const CancelWatch&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace

AttemptOutcome MasterAttempt::Run() {
  started_ = Clock::now();
  const PoolOptions& pool = plan_.pool;
  auto reserved = server_.pool().Reserve(
      {pool.min_workers, pool.max_workers, pool.acquire_timeout, pool.last_call}, cancel_);
  if (!reserved.ok()) {
    outcome_.status = reserved.status();
    return outcome_;
  }
  workers_ = *std::move(reserved);
  const uint32_t n = static_cast<uint32_t>(workers_.size());
  outcome_.workers = n;
  job_.RecordWorkers(n);
  plan_.details.place.worker_count = n;
  std::vector<transport::WorkerStream*> streams;
  for (uint32_t i = 0; i < n; ++i) {
    streams.push_back(workers_[i].get());
    names_.push_back(
        absl::StrCat("worker ", i, " (", bsp::SanitizeForLog(workers_[i]->peer(), 128), ")"));
  }
  MasterJob master(streams, names_, spec_.peer_timeout);
  // A worker lost (vanished, unreachable, silent) ends only this attempt when another may follow.
  master.SetRetryAllowed(!plan_.last_attempt);
  master.SetStragglers(spec_.straggler_timeout, spec_.replace_stragglers);
  LogStart();
  for (uint32_t i = 0; i < n; ++i) workers_[i]->Attach(&master, i);
  // Whatever leaves this function (an exception included), no stream may still point at `master`.
  struct Unbind {
    Sessions& workers;
    ~Unbind() {
      for (auto& w : workers) {
        if (!w->hung_up()) w->ForceClose();
        w->Detach();
      }
    }
  } unbind{workers_};
  const CancelWatch watch(cancel_, master);
  outcome_.status = RunOn(master);
  return outcome_;
}

void MasterAttempt::LogStart() const {
  const runner::JobDetails& d = plan_.details;
  const size_t n = workers_.size();
  if (d.resume.attempt == 0) {
    spdlog::info("{}{} on {} worker{}", job_.log_prefix(), d.work.app, n, n == 1 ? "" : "s");
    return;
  }
  spdlog::info("{}attempt {} on {} worker{}, from {}", job_.log_prefix(), d.resume.attempt + 1, n,
               n == 1 ? "" : "s",
               d.resume.restore_from.empty()
                   ? std::string("the start")
                   : absl::StrCat("the checkpoint at superstep ", d.resume.superstep));
}

absl::Status MasterAttempt::RunOn(MasterJob& master) {
  const uint32_t n = static_cast<uint32_t>(workers_.size());
  auto split = partition::Range::Whole(n);
  if (!split.ok()) return Fail(master, split.status());
  auto assignments = Assignments(*split);
  if (!assignments.ok()) return Fail(master, assignments.status());
  master.SetRelayDirect(spec_.relay_direct);
  master.SetTraced(TracedByWorker(*split, n, plan_.details.work.trace_vertices));
  auto progress = [this](const MasterProgress& p) {
    if (!outcome_.first_step_at) outcome_.first_step_at = Clock::now();
    server_.status().Step(p);
    if (!spec_.progress) return;
    MasterProgress line = p;
    line.attempt = plan_.details.resume.attempt + 1;
    line.job_id = plan_.details.work.job_id;
    spec_.progress(line);
  };
  MasterPhases phases(master, progress, plan_.checkpoints, job_.log_prefix());
  // The master runs the same program on an empty graph: callbacks and global aggregators.
  std::unique_ptr<runner::JobRunner> runner = spec_.app->make_runner(nullptr);
  runner::JobDetails mine = plan_.details;
  mine.place.coordinator = true;
  mine.resume.restore_from.clear();
  bsp::ExecutorOptions options;
  options.max_supersteps = plan_.details.work.max_supersteps;
  auto executor = runner->StartJob(mine, phases.ExecutorFactory(options));
  if (!executor.ok()) {
    return Fail(master, absl::Status(executor.status().code(),
                                     absl::StrCat("unable to start the job on the master: ",
                                                  std::string(executor.status().message()))));
  }
  if (!plan_.details.resume.restore_from.empty()) {
    if (auto st = RestoreAggregators(master, **executor); !st.ok()) return Fail(master, st);
  }
  if (auto st = master.Assign(*std::move(assignments)); !st.ok()) return Fail(master, st);
  for (auto& w : workers_) writes_before_.emplace_back(w->writes().seconds(), w->writes().count());
  const auto compute_start = Clock::now();
  if (auto st = (*executor)->RunToCompletion(); !st.ok()) {
    runner->AbortJob(mine);
    return Fail(master, st);
  }
  compute_seconds_ = SecondsSince(compute_start);
  LogTimeSplit(master);
  outcome_.supersteps = (*executor)->supersteps();
  const MasterPhases::Commit commit{
      job_.staging().PartCheck(),
      [this](const MasterPhases::Ended& ended) { return Publish(ended); }};
  if (auto ended = phases.RunEndPhases(commit); !ended.ok()) return Fail(master, ended.status());
  CloseStreams(workers_, grpc::Status::OK);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::JobDetails>> MasterAttempt::Assignments(
    const partition::Range& split) const {
  const uint32_t n = static_cast<uint32_t>(workers_.size());
  // The data plane: every worker must say where its peers reach it.
  std::vector<std::string> peer_addresses;
  for (uint32_t i = 0; i < n; ++i) {
    if (workers_[i]->peer_address().empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(names_[i], " did not say where the other workers reach it (",
                       transport::kPeerAddressKey, "): a worker of another version?"));
    }
    peer_addresses.push_back(workers_[i]->peer_address());
  }
  const std::string job_key = NewJobKey();
  std::vector<v1::JobDetails> assignments;
  for (uint32_t i = 0; i < n; ++i) {
    transport::Assignment a;
    a.details = job_.staging().ForWorker(i, plan_.details);
    a.details.place.worker_index = i;
    auto extents = split.Extents(i);
    a.details.place.range_first = extents->first;
    a.details.place.range_last = extents->second;
    a.peer_timeout = spec_.peer_timeout;
    a.peer_addresses = peer_addresses;
    a.job_key = job_key;
    a.relay_direct = spec_.relay_direct;
    a.max_batch_bytes =
        spec_.max_batch_bytes > 0 ? spec_.max_batch_bytes : transport::kDefaultMaxBatchBytes;
    assignments.push_back(transport::ToWire(a));
  }
  return assignments;
}

absl::Status MasterAttempt::RestoreAggregators(MasterJob& master, bsp::Executor& executor) const {
  // The master holds no vertices: its aggregators come from the manifest.
  const runner::JobDetails& d = plan_.details;
  auto manifest = bsp::ReadCheckpointManifest(d.resume.restore_from);
  if (!manifest.ok()) {
    master.AbortCheckpointRefused(manifest.status());
    return manifest.status();
  }
  for (const auto& [name, value] : manifest->aggregators) {
    bsp::AggregatorBase* agg = executor.engine().aggregators().Find(name);
    absl::Status st = agg == nullptr ? absl::DataLossError(absl::StrCat(
                                           "checkpoint ", d.resume.restore_from,
                                           " has aggregator '", name, "', which the program lacks"))
                                     : agg->SetEncodedValue(value);
    if (!st.ok()) return st;
  }
  executor.ResumeAt(d.resume.superstep);
  return absl::OkStatus();
}

void MasterAttempt::LogTimeSplit(const MasterJob& master) const {
  // Each worker logs its own split.
  double write_s = 0;
  uint64_t writes = 0;
  for (uint32_t i = 0; i < workers_.size(); ++i) {
    write_s += workers_[i]->writes().seconds() - writes_before_[i].first;
    writes += workers_[i]->writes().count() - writes_before_[i].second;
  }
  // In direct mode the batches and bytes are the peers' traffic as the workers report it: none
  // of it crossed the master.
  const std::string relayed =
      spec_.relay_direct
          ? absl::StrFormat("peer to peer (%d batches, %d bytes, none through the master)",
                            master.relayed_batches(), master.relayed_bytes())
          : absl::StrFormat("relay forward %.3f s (%d batches, %d bytes)",
                            master.forwarding().seconds(), master.relayed_batches(),
                            master.relayed_bytes());
  spdlog::info(
      "{}time split: compute {:.3f} s = workers' start {:.3f} s + barrier waits {:.3f} s ({}) + "
      "the master's own supersteps; alongside: {}, stream writes {:.3f} s ({}, all workers)",
      job_.log_prefix(), compute_seconds_, master.start_wait().seconds(),
      master.barrier_waits().seconds(), master.barrier_waits().count(), relayed, write_s, writes);
}

absl::Status MasterAttempt::Publish(const MasterPhases::Ended& ended) {
  if (job_.lease_lost()) {
    return absl::AlreadyExistsError(
        "the lease on the job's checkpoint directory was lost: another master may drive the job, "
        "so this one publishes nothing");
  }
  const runner::JobDetails& d = plan_.details;
  outcome_.seconds = SecondsSince(job_.started());
  nlohmann::json success = {
      {"job_id", d.work.job_id},
      {"app", d.work.app},
      {"params", d.work.params},
      {"graph", d.work.graph.path},
      {"created_at_unix_ms", d.work.created_at_unix_ms},
      {"workers", outcome_.workers},
      {"vertices", ended.vertices},
      {"supersteps", outcome_.supersteps},
      {"attempts", d.resume.attempt + 1},
      {"timings_seconds",
       {{"total", outcome_.seconds},
        {"attempt", SecondsSince(started_)},
        {"compute", compute_seconds_},
        {"persist", ended.persist_seconds}}},
  };
  const nlohmann::json& restarts = job_.NoteRestart(outcome_.workers, outcome_.first_step_at);
  if (!restarts.empty()) success["restarts"] = restarts;
  nlohmann::json listed = nlohmann::json::array();
  for (uint32_t i = 0; i < ended.parts.size(); ++i) {
    const runner::OutputSummary& part = ended.parts[i];
    listed.push_back({{"name", ResultFileName(i)},
                      {"vertices", part.vertices},
                      {"bytes", part.bytes},
                      {"crc32c", part.crc32c}});
  }
  success["parts"] = listed;
  auto published = job_.staging().Publish(success, ended.vertices);
  if (!published.ok()) return published.status();
  outcome_.output = *std::move(published);
  outcome_.vertices = ended.vertices;
  outcome_.published = true;
  return absl::OkStatus();
}

absl::Status MasterAttempt::Fail(MasterJob& master, absl::Status reason) {
  master.Abort(reason);
  const absl::Status final = master.status();
  outcome_.retrying = !plan_.last_attempt && master.lost_worker();
  outcome_.checkpoint_refused = master.checkpoint_refused();
  outcome_.failed_at = Clock::now();
  // Workers that did not enter a barrier in time are not writing anything: no grace for them.
  for (uint32_t w : master.late()) workers_[w]->ForceClose();
  // A worker may still be writing its part (complete-job) or checkpoint: each hangs up once it
  // has read the abort; one that does not is cut off after the grace.
  CloseStreams(workers_, grpc::Status(grpc::StatusCode::ABORTED, std::string(final.message())));
  return final;
}

}  // namespace lockstep::dbsp::job
