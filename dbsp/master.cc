#include "lockstep/dbsp/master.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <condition_variable>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "absl/strings/str_cat.h"
#include "health_service.h"
#include "lockstep/dbsp/coordinator.h"
#include "lockstep/dbsp/grpc_options.h"
#include "lockstep/dbsp/health.h"
#include "lockstep/dbsp/output_dir.h"
#include "lockstep/dbsp/phase_time.h"
#include "lockstep/dbsp/queue.h"
#include "lockstep/dbsp/wire.h"
#include "lockstep/v1/jobqueue.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp {
namespace {

using Clock = std::chrono::steady_clock;

// How long a closed stream waits for its worker to hang up before cutting it off.
constexpr auto kHangUpGrace = std::chrono::seconds(5);

// The master's end of one worker's stream. The gRPC handler thread is its single writer (it drains
// the bounded outbox); a reader thread feeds the payloads to the job's coordinator.
class WorkerSession {
 public:
  explicit WorkerSession(std::string peer) : peer_(std::move(peer)) {}

  const std::string& peer() const { return peer_; }
  // Time this session's handler spent writing to its stream (all jobs so far).
  const PhaseTime& writes() const { return writes_; }

  // Any thread. Blocks while the outbox is full (back-pressure); dropped once the session closed.
  void Send(v1::MasterPayload payload) { outbox_.Push(std::move(payload)); }

  // Joins a job as worker `index`; from now on its payloads go to `coordinator`.
  void Attach(JobCoordinator* coordinator, uint32_t index) {
    std::lock_guard<std::mutex> lock(mu_);
    coordinator_ = coordinator;
    index_ = index;
    if (disconnected_) {
      coordinator->Abort(
          absl::UnavailableError(absl::StrCat("worker ", index, " (", peer_, ") disconnected")));
    }
  }

  // Ends the stream: OK for a completed job, otherwise the reason goes to the worker first.
  void Close(const absl::Status& reason) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return;
      closed_ = true;
      coordinator_ = nullptr;
      final_ = reason.ok() ? grpc::Status::OK
                           : grpc::Status(grpc::StatusCode::ABORTED, std::string(reason.message()));
    }
    if (!reason.ok()) {
      outbox_.Clear();  // pending relays are moot; the reason goes out first
      v1::MasterPayload abort;
      abort.mutable_abort()->set_reason(std::string(reason.message()));
      outbox_.Push(std::move(abort));
    }
    outbox_.Close();
  }

  void OnPayload(v1::WorkerPayload payload) {
    JobCoordinator* coordinator;
    uint32_t index;
    {
      std::lock_guard<std::mutex> lock(mu_);
      coordinator = coordinator_;
      index = index_;
    }
    if (coordinator == nullptr) {
      spdlog::warn("worker {} sent a payload outside a job; ignored", peer_);
      return;
    }
    (void)coordinator->OnPayload(index, std::move(payload));
  }

  void OnDisconnect() {
    JobCoordinator* coordinator;
    {
      std::lock_guard<std::mutex> lock(mu_);
      disconnected_ = true;
      coordinator = coordinator_;
      reader_done_.notify_all();
    }
    if (coordinator != nullptr) {
      coordinator->Abort(
          absl::UnavailableError(absl::StrCat("worker ", index_, " (", peer_, ") disconnected")));
    }
    outbox_.Close();
  }

  bool disconnected() const {
    std::lock_guard<std::mutex> lock(mu_);
    return disconnected_;
  }

  // Waits until the worker has hung up (its reader saw the end of the stream) or `deadline`.
  bool WaitDisconnected(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    return reader_done_.wait_until(lock, deadline, [&] { return disconnected_; });
  }

  // The handler: runs on a gRPC thread for the life of the stream.
  grpc::Status Serve(grpc::ServerContext* ctx,
                     grpc::ServerReaderWriter<v1::MasterPayload, v1::WorkerPayload>* stream) {
    std::thread reader([this, stream] {
      v1::WorkerPayload payload;
      while (stream->Read(&payload)) {
        OnPayload(std::move(payload));
        payload.Clear();
      }
      OnDisconnect();
    });
    while (auto payload = outbox_.Pop()) {
      PhaseTime::Scope timed(writes_);  // serialisation and the gRPC write
      if (!stream->Write(*payload)) break;
    }
    outbox_.Close();
    outbox_.Clear();
    {
      // The worker hangs up once it has read the end of its job; a dead one is cut off.
      std::unique_lock<std::mutex> lock(mu_);
      if (!reader_done_.wait_for(lock, kHangUpGrace, [&] { return disconnected_; })) {
        ctx->TryCancel();
      }
    }
    reader.join();
    std::lock_guard<std::mutex> lock(mu_);
    return final_;
  }

 private:
  const std::string peer_;
  BoundedQueue<v1::MasterPayload> outbox_{256};
  mutable std::mutex mu_;
  std::condition_variable reader_done_;
  JobCoordinator* coordinator_ = nullptr;
  uint32_t index_ = 0;
  bool disconnected_ = false;
  bool closed_ = false;
  grpc::Status final_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "master is shutting down");
  PhaseTime writes_;
};

// Connected workers that are not in a job, in the order they connected.
class WorkerPool {
 public:
  void Add(std::shared_ptr<WorkerSession> s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) {
      s->Close(absl::UnavailableError("master is shutting down"));
      return;
    }
    idle_.push_back(std::move(s));
    changed_.notify_all();
  }
  void Remove(const std::shared_ptr<WorkerSession>& s) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.remove(s);
    changed_.notify_all();
  }
  // A worker that disconnects while idle leaves the pool.
  void Changed() {
    std::lock_guard<std::mutex> lock(mu_);
    changed_.notify_all();
  }

  absl::StatusOr<std::vector<std::shared_ptr<WorkerSession>>> Reserve(
      const PoolOptions& o, const std::atomic<bool>& cancel) {
    const uint32_t need = std::max<uint32_t>(1, o.min_workers);
    const auto start = Clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    auto live = [&] {
      idle_.remove_if([](const auto& s) { return s->disconnected(); });
      return static_cast<uint32_t>(idle_.size());
    };
    while (live() < need) {
      if (cancel.load() || shut_down_) return absl::CancelledError("master is shutting down");
      if (o.acquire_timeout.count() > 0 && Clock::now() - start >= o.acquire_timeout) {
        return absl::DeadlineExceededError(
            absl::StrCat("unable to reserve ", need, " worker", need == 1 ? "" : "s", " within ",
                         o.acquire_timeout.count(), " ms (", idle_.size(), " connected)"));
      }
      changed_.wait_for(lock, std::chrono::milliseconds(50));
    }
    if (o.last_call.count() > 0) {
      const auto deadline = Clock::now() + o.last_call;
      while (Clock::now() < deadline && (o.max_workers == 0 || live() < o.max_workers)) {
        if (cancel.load() || shut_down_) return absl::CancelledError("master is shutting down");
        changed_.wait_for(lock, std::chrono::milliseconds(50));
      }
      if (live() < need) return absl::UnavailableError("workers left during the last call");
    }
    std::vector<std::shared_ptr<WorkerSession>> taken;
    while (!idle_.empty() && (o.max_workers == 0 || taken.size() < o.max_workers)) {
      taken.push_back(std::move(idle_.front()));
      idle_.pop_front();
    }
    return taken;
  }

  void ShutDown() {
    std::list<std::shared_ptr<WorkerSession>> idle;
    {
      std::lock_guard<std::mutex> lock(mu_);
      shut_down_ = true;
      idle.swap(idle_);
      changed_.notify_all();
    }
    for (auto& s : idle) s->Close(absl::UnavailableError("master is shutting down"));
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::list<std::shared_ptr<WorkerSession>> idle_;
  bool shut_down_ = false;
};

class JobQueueService final : public v1::JobQueue::Service {
 public:
  explicit JobQueueService(WorkerPool& pool) : pool_(pool) {}

  grpc::Status JobStream(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::MasterPayload, v1::WorkerPayload>* stream) override {
    auto session = std::make_shared<WorkerSession>(ctx->peer());
    spdlog::info("worker {} connected", session->peer());
    pool_.Add(session);
    grpc::Status st = session->Serve(ctx, stream);
    pool_.Remove(session);
    spdlog::debug("worker {} stream ended: {}", session->peer(), st.error_message());
    return st;
  }

 private:
  WorkerPool& pool_;
};

std::string NewJobId() {
  static std::mutex mu;
  static boost::uuids::random_generator gen;
  std::lock_guard<std::mutex> lock(mu);
  return boost::uuids::to_string(gen());
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

class MasterServer {
 public:
  WorkerPool pool;
  JobQueueService service{pool};
  HealthService health;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

Master::Master(std::unique_ptr<MasterServer> server) : server_(std::move(server)) {}
Master::~Master() { Shutdown(); }

absl::StatusOr<std::unique_ptr<Master>> Master::Start(const std::string& address) {
  auto s = std::make_unique<MasterServer>();
  grpc::ServerBuilder builder;
  ConfigureServer(builder);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &s->port);
  builder.RegisterService(&s->service);
  builder.RegisterService(&s->health);
  s->server = builder.BuildAndStart();
  if (s->server == nullptr || s->port == 0) {
    return absl::UnavailableError(absl::StrCat("--listen: cannot listen on ", address));
  }
  s->health.Set(kMasterHealthService, true);
  return std::unique_ptr<Master>(new Master(std::move(s)));
}

int Master::port() const { return server_->port; }

void Master::Shutdown() {
  if (!server_ || !server_->server) return;
  server_->health.Set(kMasterHealthService, false);
  server_->pool.ShutDown();
  server_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->server.reset();
}

absl::StatusOr<JobResult> Master::RunJob(const JobSpec& spec, const std::atomic<bool>& cancel) {
  const auto started = Clock::now();
  // Bad input fails at once, not after the workers have been waited for: the output location,
  // and the app's parameters (the master's own empty-graph start checks them).
  if (auto st = CheckOutput(spec.details.output); !st.ok()) return st;
  const std::string job_id = NewJobId();
  {
    bsp::JobDetails probe = spec.details;
    probe.job_id = job_id;
    probe.coordinator = true;
    auto executor = spec.app->make_runner(nullptr)->StartJob(probe, bsp::LocalExecutorFactory());
    if (!executor.ok()) return executor.status();
  }
  auto reserved = server_->pool.Reserve(spec.pool, cancel);
  if (!reserved.ok()) return reserved.status();
  std::vector<std::shared_ptr<WorkerSession>>& workers = *reserved;
  const uint32_t n = static_cast<uint32_t>(workers.size());

  JobResult result;
  result.job_id = job_id;
  result.workers = n;
  bsp::JobDetails job = spec.details;
  job.job_id = result.job_id;
  job.created_at_unix_ms = NowUnixMs();
  job.worker_count = n;

  std::vector<std::string> names;
  for (uint32_t i = 0; i < n; ++i)
    names.push_back(absl::StrCat("worker ", i, " (", workers[i]->peer(), ")"));
  JobCoordinator coordinator(
      names, [&workers](uint32_t w, v1::MasterPayload p) { workers[w]->Send(std::move(p)); });
  auto log_prefix = absl::StrCat("job ", result.job_id, ": ");
  spdlog::info("{}{} on {} worker{}", log_prefix, job.app, n, n == 1 ? "" : "s");

  // Whatever ends the job, every reserved worker is released and told why.
  std::optional<JobOutput> output;
  auto fail = [&](absl::Status reason) -> absl::Status {
    coordinator.Abort(reason);
    const absl::Status final = coordinator.status();
    for (auto& w : workers) w->Close(final);
    if (output) {
      // A worker may still be writing its part (complete-job): removing the staging directory
      // under it would fail its write with a misleading reason or leave files behind. Each worker
      // hangs up once it has read the abort; one that does not is cut off after kHangUpGrace.
      const auto deadline = Clock::now() + kHangUpGrace + std::chrono::seconds(1);
      for (auto& w : workers) w->WaitDisconnected(deadline);
      DiscardOutput(*output);
    }
    spdlog::error("{}aborted: {}", log_prefix, std::string(final.message()));
    return final;
  };

  auto prepared = PrepareOutput(job.output, job.job_id);
  if (!prepared.ok()) return fail(prepared.status());
  output = *prepared;

  // A watcher turns cancellation (SIGTERM) into an abort that wakes every wait.
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      if (cancel.load()) {
        coordinator.Abort(absl::CancelledError("master is shutting down (job cancelled)"));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  struct Join {
    std::atomic<bool>& done;
    std::thread& t;
    ~Join() {
      done.store(true);
      t.join();
    }
  } join{done, watcher};

  auto split = partition::Range::Whole(n);
  if (!split.ok()) return fail(split.status());
  for (uint32_t i = 0; i < n; ++i) workers[i]->Attach(&coordinator, i);

  // The master runs the same program on an empty graph: callbacks and global aggregators.
  std::unique_ptr<bsp::JobRunner> runner = spec.app->make_runner(nullptr);
  bsp::JobDetails mine = job;
  mine.coordinator = true;
  auto executor =
      runner->StartJob(mine, MasterExecutorFactory(coordinator, spec.progress, spec.executor));
  if (!executor.ok()) {
    return fail(absl::Status(executor.status().code(),
                             absl::StrCat("unable to start the job on the master: ",
                                          std::string(executor.status().message()))));
  }
  for (uint32_t i = 0; i < n; ++i) {
    bsp::JobDetails d = job;
    d.worker_index = i;
    auto extents = split->Extents(i);
    d.range_first = extents->first;
    d.range_last = extents->second;
    d.output = output->staging + "/" + PartName(i);
    v1::MasterPayload payload;
    *payload.mutable_job_details() = ToWire(d);
    workers[i]->Send(std::move(payload));
  }

  std::vector<std::pair<double, uint64_t>> writes_before;
  for (auto& w : workers) writes_before.emplace_back(w->writes().seconds(), w->writes().count());
  const auto compute_start = Clock::now();
  if (auto st = (*executor)->RunToCompletion(); !st.ok()) {
    runner->AbortJob(mine);
    return fail(st);
  }
  const double compute_s = std::chrono::duration<double>(Clock::now() - compute_start).count();
  {
    // Where the supersteps' time went on the master (each worker logs its own split).
    double write_s = 0;
    uint64_t writes = 0;
    for (uint32_t i = 0; i < n; ++i) {
      write_s += workers[i]->writes().seconds() - writes_before[i].first;
      writes += workers[i]->writes().count() - writes_before[i].second;
    }
    spdlog::info(
        "{}time split: compute {:.3f} s = workers' start {:.3f} s + barrier waits {:.3f} s ({}) + "
        "the master's own supersteps; alongside: relay forward {:.3f} s ({} batches, {} bytes), "
        "stream writes {:.3f} s ({}, all workers)",
        log_prefix, compute_s, coordinator.start_wait().seconds(),
        coordinator.barrier_waits().seconds(), coordinator.barrier_waits().count(),
        coordinator.forwarding().seconds(), coordinator.relayed_batches(),
        coordinator.relayed_bytes(), write_s, writes);
  }
  result.supersteps = (*executor)->supersteps();
  auto barrier = [&](v1::Step::Type type) -> absl::StatusOr<std::vector<v1::Step>> {
    auto entries = coordinator.WaitAll(type, result.supersteps - 1);
    if (!entries.ok()) return entries.status();
    return entries;
  };
  auto executed = barrier(v1::Step::EXECUTED_GRAPH);
  if (!executed.ok()) return fail(executed.status());
  for (const v1::Step& e : *executed) result.vertices += e.vertices();
  v1::Step release;
  release.set_type(v1::Step::EXECUTED_GRAPH);
  coordinator.ReleaseAll(release);
  const auto persist_start = Clock::now();
  auto persisted = barrier(v1::Step::PERSISTED_RESULTS);
  if (!persisted.ok()) return fail(persisted.status());
  const double persist_s = std::chrono::duration<double>(Clock::now() - persist_start).count();
  release.set_type(v1::Step::PERSISTED_RESULTS);
  coordinator.ReleaseAll(release);
  auto completed = barrier(v1::Step::COMPLETED_JOB);
  if (!completed.ok()) return fail(completed.status());

  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  nlohmann::json success = {
      {"job_id", result.job_id},
      {"app", job.app},
      {"params", job.params},
      {"graph", job.graph.path},
      {"created_at_unix_ms", job.created_at_unix_ms},
      {"workers", n},
      {"vertices", result.vertices},
      {"supersteps", result.supersteps},
      {"timings_seconds",
       {{"total", result.seconds}, {"compute", compute_s}, {"persist", persist_s}}},
  };
  nlohmann::json parts = nlohmann::json::array();
  for (uint32_t i = 0; i < n; ++i) parts.push_back(PartName(i));
  success["parts"] = parts;
  if (auto st = PublishOutput(*output, success.dump(2) + "\n"); !st.ok()) return fail(st);
  result.output = output->final;
  output.reset();  // published: nothing to discard any more
  release.set_type(v1::Step::COMPLETED_JOB);
  coordinator.ReleaseAll(release);
  for (auto& w : workers) w->Close(absl::OkStatus());
  spdlog::info("{}completed: {} vertices, {} supersteps, {:.3f} s; published {}", log_prefix,
               result.vertices, result.supersteps, result.seconds, job.output);
  return result;
}

}  // namespace lockstep::dbsp
