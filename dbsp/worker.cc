#include "lockstep/dbsp/worker.h"

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lockstep/dbsp/factories.h"
#include "lockstep/dbsp/grpc_options.h"
#include "lockstep/dbsp/health.h"
#include "lockstep/dbsp/phase_time.h"
#include "lockstep/dbsp/queue.h"
#include "lockstep/dbsp/wire.h"
#include "lockstep/v1/jobqueue.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp {
namespace {

using Stream = grpc::ClientReaderWriter<v1::WorkerPayload, v1::MasterPayload>;

// One job on one stream: the worker's barrier client, relayer and the stream's reader and writer.
class WorkerJob final : public BarrierClient, public bsp::Relayer {
 public:
  explicit WorkerJob(Stream* stream) : stream_(stream) {}

  // --- BarrierClient (job thread)
  absl::StatusOr<v1::Step> Enter(v1::Step entry) override {
    const v1::Step::Type type = entry.type();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!status_.ok()) return status_;
      waiting_ = type;
      released_.reset();
    }
    PhaseTime::Scope timed(barrier_);
    v1::WorkerPayload payload;
    *payload.mutable_step() = std::move(entry);
    if (!outbox_.Push(std::move(payload))) return FailureOr(absl::AbortedError("job was aborted"));
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return !status_.ok() || released_.has_value(); });
    if (!status_.ok()) return status_;
    waiting_ = v1::Step::INVALID;
    return std::move(*released_);
  }

  // --- Relayer (job thread, from the engine's superstep)
  absl::Status Relay(bsp::RelayBatch batch) override {
    v1::WorkerPayload payload;
    {
      PhaseTime::Scope timed(encode_);
      *payload.mutable_relay() = ToWire(std::move(batch));
    }
    PhaseTime::Scope timed(enqueue_);  // blocks while the outbox is full (back-pressure)
    if (!outbox_.Push(std::move(payload))) return FailureOr(absl::AbortedError("job was aborted"));
    return absl::OkStatus();
  }

  // The run is over (job thread): the barrier waits from here on are the job's end, not its run.
  void EndRun(double run_seconds) {
    run_seconds_ = run_seconds;
    run_barrier_seconds_ = barrier_.seconds();
    run_barrier_count_ = barrier_.count();
  }

  // A superstep's local figures (job thread, from the executor's progress callback).
  void AddStep(const bsp::StepStats& s) {
    steps_seconds_ += s.seconds;
    engine_encode_seconds_ += s.relay_encode_seconds;
    engine_decode_seconds_ += s.relay_decode_seconds;
  }

  // Where the job's time went, for the log at its end (after the reader and writer joined). The
  // job thread's run is its supersteps plus the barrier waits (wire encoding and the outbox wait
  // are inside the supersteps' relay encode); the writer and reader threads run alongside.
  std::string TimeSplit() const {
    auto f = [](const PhaseTime& p) {
      return absl::StrFormat("%.3f s (%d)", p.seconds(), p.count());
    };
    return absl::StrCat("time split: run ", absl::StrFormat("%.3f s", run_seconds_),
                        " = supersteps ", absl::StrFormat("%.3f s", steps_seconds_),
                        " (relay encode ", absl::StrFormat("%.3f s", engine_encode_seconds_),
                        ", of which wire encode ", f(encode_), " and outbox wait ", f(enqueue_),
                        "; relay decode ", absl::StrFormat("%.3f s", engine_decode_seconds_),
                        ") + barrier waits ",
                        absl::StrFormat("%.3f s (%d)", run_barrier_seconds_, run_barrier_count_),
                        "; writer thread: stream writes ", f(write_),
                        "; reader thread: wire decode ", f(decode_), ", hand-over ", f(accept_));
  }

  void SetEngine(bsp::StepEngine* engine) {
    std::lock_guard<std::mutex> lock(mu_);
    engine_ = engine;
  }
  // Before the engine goes away: relay batches that still arrive are dropped.
  void DetachEngine() {
    std::lock_guard<std::mutex> lock(mu_);
    engine_ = nullptr;
    engine_ended_ = true;
  }

  // --- reader thread
  void ReadLoop() {
    v1::MasterPayload payload;
    while (stream_->Read(&payload)) {
      switch (payload.payload_case()) {
        case v1::MasterPayload::kStep: {
          std::lock_guard<std::mutex> lock(mu_);
          if (payload.step().type() != waiting_) {
            FailLocked(absl::FailedPreconditionError(absl::StrCat(
                           "the master released ", v1::Step::Type_Name(payload.step().type()),
                           " while this worker waits for ", v1::Step::Type_Name(waiting_))),
                       false);
          } else {
            released_ = std::move(*payload.mutable_step());
            changed_.notify_all();
          }
          break;
        }
        case v1::MasterPayload::kRelay: {
          absl::StatusOr<bsp::RelayBatch> batch;
          {
            PhaseTime::Scope timed(decode_);
            batch = FromWire(std::move(*payload.mutable_relay()));
          }
          std::lock_guard<std::mutex> lock(mu_);
          if (engine_ended_) break;  // the job is over here; a peer's late batch is moot
          absl::Status st = batch.status();
          if (st.ok() && engine_ == nullptr) {
            st = absl::FailedPreconditionError("a relay batch arrived before the job started");
          }
          if (st.ok()) {
            PhaseTime::Scope timed(accept_);
            st = engine_->AcceptRelayed(std::move(*batch));
          }
          if (!st.ok()) FailLocked(st, false);
          break;
        }
        case v1::MasterPayload::kAbort: {
          std::lock_guard<std::mutex> lock(mu_);
          FailLocked(absl::AbortedError(
                         absl::StrCat("job aborted by the master: ", payload.abort().reason())),
                     true);
          break;
        }
        default: {
          std::lock_guard<std::mutex> lock(mu_);
          FailLocked(absl::FailedPreconditionError("unexpected payload from the master"), false);
        }
      }
      payload.Clear();
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!completed_) {
      FailLocked(absl::UnavailableError("the master closed the stream"), true);
    }
    changed_.notify_all();
  }

  // --- writer thread: the stream's single writer.
  void WriteLoop() {
    while (auto payload = outbox_.Pop()) {
      PhaseTime::Scope timed(write_);  // serialisation and the gRPC write
      if (!stream_->Write(*payload)) break;
    }
    outbox_.Close();
    stream_->WritesDone();
  }

  // Fails the job locally (compute error, SIGTERM, ...): the master is told why, unless it was
  // the master that aborted.
  void Fail(absl::Status reason) {
    std::lock_guard<std::mutex> lock(mu_);
    FailLocked(std::move(reason), false);
  }
  absl::Status FailureOr(const absl::Status& fallback) {
    std::lock_guard<std::mutex> lock(mu_);
    return status_.ok() ? fallback : status_;
  }
  void SetCompleted() {
    std::lock_guard<std::mutex> lock(mu_);
    completed_ = true;
  }
  void SetExecutor(bsp::Executor* executor) {
    std::lock_guard<std::mutex> lock(mu_);
    executor_ = executor;
    if (!status_.ok() && executor_ != nullptr) executor_->Cancel();
  }
  // Queues a failure report for the master if the failure is ours (the first local reason, e.g.
  // SIGTERM rather than the cancellation it caused), then ends the stream's writes.
  void Finish(const absl::Status& local_error) {
    std::optional<std::string> report;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!local_error.ok()) {
        if (status_.ok()) {
          status_ = local_error;
          failed_by_master_ = false;
        }
        if (!failed_by_master_) report = std::string(status_.message());
      }
    }
    if (report) {
      v1::WorkerPayload failure;
      failure.mutable_failure()->set_reason(*report);
      outbox_.Push(std::move(failure));
    }
    outbox_.Close();
  }

 private:
  void FailLocked(absl::Status reason, bool by_master) {
    if (status_.ok()) {
      status_ = std::move(reason);
      failed_by_master_ = by_master;
    }
    if (executor_ != nullptr) executor_->Cancel();
    changed_.notify_all();
  }

  Stream* stream_;
  BoundedQueue<v1::WorkerPayload> outbox_{256};
  std::mutex mu_;
  std::condition_variable changed_;
  absl::Status status_;
  bool failed_by_master_ = false;
  bool completed_ = false;
  v1::Step::Type waiting_ = v1::Step::INVALID;
  std::optional<v1::Step> released_;
  bsp::StepEngine* engine_ = nullptr;
  bool engine_ended_ = false;
  bsp::Executor* executor_ = nullptr;
  // Job thread: barrier_, encode_, enqueue_; writer thread: write_; reader thread: decode_,
  // accept_.
  PhaseTime barrier_, encode_, enqueue_, write_, decode_, accept_;
  double steps_seconds_ = 0, engine_encode_seconds_ = 0, engine_decode_seconds_ = 0;
  double run_seconds_ = 0, run_barrier_seconds_ = 0;
  uint64_t run_barrier_count_ = 0;
};

// Runs the job of `details` through `job`; returns the local error (OK on success).
absl::Status RunJob(const catalogue::AppRegistry& apps, const bsp::JobDetails& details,
                    WorkerJob& job, const std::string& tag) {
  const catalogue::AppInfo* app = apps.Find(details.app);
  if (app == nullptr) {
    return absl::NotFoundError(absl::StrCat("this worker has no app named '", details.app, "'"));
  }
  std::unique_ptr<bsp::JobRunner> runner = app->make_runner(nullptr);
  // The engine dies in the runner's AbortJob or with the runner; from then on the reader thread
  // must not hand it relay batches that are still in flight from the other workers.
  struct Detach {
    WorkerJob& job;
    ~Detach() { job.DetachEngine(); }
  } detach{job};
  bsp::ExecutorOptions options;
  options.progress = [tag, &job](const bsp::StepStats& s) {
    job.AddStep(s);
    spdlog::debug("{}superstep {} | active {} | messages {} | {:.1f} ms", tag, s.superstep,
                  s.active, s.messages, s.seconds * 1e3);
  };
  auto factory = WorkerExecutorFactory(
      job,
      [&job](bsp::StepEngine& engine) {
        engine.SetRelayer(&job);
        job.SetEngine(&engine);
      },
      options);
  auto executor = runner->StartJob(details, factory);
  if (!executor.ok()) {
    return absl::Status(
        executor.status().code(),
        absl::StrCat("unable to start the job: ", std::string(executor.status().message())));
  }
  job.SetExecutor(executor->get());
  auto abort = [&](absl::Status st) {
    job.DetachEngine();
    runner->AbortJob(details);
    job.SetExecutor(nullptr);
    return st;
  };
  const auto run_start = std::chrono::steady_clock::now();
  if (auto st = (*executor)->RunToCompletion(); !st.ok()) return abort(st);
  job.EndRun(std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count());
  v1::Step step;
  step.set_type(v1::Step::EXECUTED_GRAPH);
  step.set_superstep((*executor)->supersteps() - 1);
  step.set_vertices((*executor)->engine().num_local_vertices());
  if (auto r = job.Enter(step); !r.ok()) return abort(r.status());
  if (auto st = runner->CompleteJob(details); !st.ok()) return abort(st);
  step.set_type(v1::Step::PERSISTED_RESULTS);
  if (auto r = job.Enter(step); !r.ok()) return abort(r.status());
  step.set_type(v1::Step::COMPLETED_JOB);
  if (auto r = job.Enter(step); !r.ok()) return abort(r.status());
  job.SetCompleted();
  job.SetExecutor(nullptr);
  return absl::OkStatus();
}

}  // namespace

absl::Status ServeWorker(const catalogue::AppRegistry& apps, const WorkerOptions& options,
                         const std::atomic<bool>& stop) {
  std::unique_ptr<HealthServer> health;
  if (!options.health_address.empty()) {
    auto started = HealthServer::Start(options.health_address, kWorkerHealthService);
    if (!started.ok()) return started.status();
    health = std::move(*started);
    if (options.health_started) options.health_started(health->port());
  }
  auto channel = grpc::CreateCustomChannel(options.master, grpc::InsecureChannelCredentials(),
                                           ClientChannelArguments());
  auto stub = v1::JobQueue::NewStub(channel);
  std::chrono::milliseconds backoff(100);
  uint64_t jobs = 0;
  bool warned = false;

  // The context of a stream waiting for its job, so that a stop can cut that wait short.
  std::mutex mu;
  grpc::ClientContext* current = nullptr;
  WorkerJob* running = nullptr;
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      // Ready while connected to the master: waiting in its pool or in a job.
      if (health) health->Set(!stop.load() && channel->GetState(false) == GRPC_CHANNEL_READY);
      if (stop.load()) {
        std::lock_guard<std::mutex> lock(mu);
        if (running != nullptr) {
          running->Fail(absl::CancelledError("the worker is shutting down (SIGTERM)"));
        } else if (current != nullptr) {
          current->TryCancel();
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });

  absl::Status result;
  while (!stop.load() && (options.max_jobs == 0 || jobs < options.max_jobs)) {
    grpc::ClientContext ctx;
    {
      std::lock_guard<std::mutex> lock(mu);
      current = &ctx;
    }
    std::unique_ptr<Stream> stream = stub->JobStream(&ctx);
    v1::MasterPayload first;
    const bool got = stream->Read(&first);
    {
      // From here a stop fails the job instead (`running`), and the stream must stay up until the
      // failure has reached the master: cancelling it as well lost the reason under load.
      std::lock_guard<std::mutex> lock(mu);
      current = nullptr;
    }
    if (!got || !first.has_job_details()) {
      if (got) stream->WritesDone();
      grpc::Status st = stream->Finish();
      if (stop.load()) break;
      if (!warned || st.error_code() != grpc::StatusCode::UNAVAILABLE) {
        spdlog::warn("no job from master {}: {}; redialling", options.master,
                     st.error_message().empty() ? "unexpected payload" : st.error_message());
        warned = true;
      }
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
      continue;
    }
    backoff = std::chrono::milliseconds(100);
    warned = false;
    ++jobs;
    auto details = FromWire(first.job_details());
    const std::string tag = details.ok() ? absl::StrCat("job ", details->job_id, " worker ",
                                                        details->worker_index, ": ")
                                         : "job ?: ";
    WorkerJob job(stream.get());
    std::thread reader([&] { job.ReadLoop(); });
    std::thread writer([&] { job.WriteLoop(); });
    {
      std::lock_guard<std::mutex> lock(mu);
      running = &job;
    }
    spdlog::info("{}started ({} of {})", tag, details.ok() ? details->worker_index : 0,
                 details.ok() ? details->worker_count : 0);
    absl::Status st = details.ok() ? RunJob(apps, *details, job, tag) : details.status();
    {
      std::lock_guard<std::mutex> lock(mu);
      running = nullptr;
    }
    if (st.ok()) {
      job.Finish(absl::OkStatus());
    } else {
      // A job the master aborted shows the master's reason, not the cancellation it caused.
      const absl::Status shown = job.FailureOr(st);
      job.Finish(st);
      spdlog::error("{}failed: {}", tag, std::string(shown.message()));
    }
    writer.join();
    reader.join();
    grpc::Status final = stream->Finish();
    if (st.ok()) {
      spdlog::info("{}completed; {}", tag, job.TimeSplit());
    } else {
      result = st;
    }
  }
  done.store(true);
  watcher.join();
  return options.max_jobs > 0 ? result : absl::OkStatus();
}

}  // namespace lockstep::dbsp
