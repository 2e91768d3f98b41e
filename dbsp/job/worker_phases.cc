#include "job/worker_phases.h"

#include <chrono>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/text.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp::job {

using protocol::Barrier;
using protocol::Step;

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Step EntryAt(Barrier barrier, uint64_t superstep) {
  Step entry;
  entry.barrier = barrier;
  entry.superstep = superstep;
  return entry;
}

}  // namespace

bsp::ExecutorFactory WorkerPhases::ExecutorFactory(bsp::ExecutorOptions options) {
  return [this, options](bsp::StepEngine& engine,
                         bsp::Callbacks user) -> absl::StatusOr<std::unique_ptr<bsp::Executor>> {
    engine.SetRelayer(&job_);
    engine.SetMaxBatchBytes(job_.max_batch_bytes());
    job_.SetEngine(&engine);
    engine.aggregators().set_count_outside_compute(false);
    engine_ = &engine;
    user_ = std::move(user);
    bsp::Callbacks wrapped;
    wrapped.pre_step = [this](uint64_t s) { return Pre(s); };
    wrapped.post_step = [this](const bsp::StepStats& local) { return Post(local); };
    wrapped.keep_running = [this](const bsp::StepStats& local) { return KeepRunning(local); };
    return std::make_unique<bsp::Executor>(engine, std::move(wrapped), options);
  };
}

absl::Status WorkerPhases::Pre(uint64_t superstep) {
  // What the load's exchanges sent is not a superstep's relay.
  if (superstep == 0) job_.TakeRelayedCounts();
  job_.BeginStep();
  auto release = job_.Enter(EntryAt(Barrier::kPre, superstep));
  if (!release.ok()) return release.status();
  return user_.pre_step ? user_.pre_step(superstep) : absl::OkStatus();
}

absl::Status WorkerPhases::Post(const bsp::StepStats& local) {
  if (auto st = job_.DrainRelays(); !st.ok()) return st;
  Step entry = protocol::StepWithCounts(Barrier::kPost, local);
  std::tie(entry.relayed_batches, entry.relayed_bytes) = job_.TakeRelayedCounts();
  entry.trace = engine_->TakeTrace();
  if (Metrics* m = job_.metrics()) m->bytes_sent += entry.relayed_bytes;
  engine_->aggregators().ForEach(
      [&](const bsp::AggregatorBase& agg) { agg.EncodeDelta(entry.aggregators[agg.name()]); });
  auto release = job_.Enter(std::move(entry));
  if (!release.ok()) return release.status();
  for (const auto& [name, bytes] : release->aggregators) {
    bsp::AggregatorBase* agg = engine_->aggregators().Find(name);
    if (agg == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat("the master sent a value for aggregator \"",
                                                        bsp::SanitizeForLog(name, 64),
                                                        "\", which this program lacks"));
    }
    if (auto st = agg->SetEncodedValue(bytes); !st.ok()) return st;
  }
  return user_.post_step ? user_.post_step(protocol::CountsOf(*release)) : absl::OkStatus();
}

absl::StatusOr<bool> WorkerPhases::KeepRunning(const bsp::StepStats& local) {
  auto release = job_.Enter(protocol::StepWithCounts(Barrier::kPostKeepRunning, local));
  if (!release.ok()) return release.status();
  if (release->checkpoint) {
    if (auto st = Checkpoint(local.superstep + 1); !st.ok()) return st;
  }
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("{}{}", job_.log_tag(), job_.StepSplit(local.superstep));
  }
  // Run the user's callback for its side effects; the master's decision is binding, so a
  // callback that is not deterministic cannot split the job.
  if (user_.keep_running) {
    auto mine = user_.keep_running(protocol::CountsOf(*release));
    if (!mine.ok()) return mine.status();
  }
  return !release->stop;
}

absl::Status WorkerPhases::Checkpoint(uint64_t next) {
  // Every message of the superstep before `next` is here (the ordering invariant) and the
  // aggregators are global: the state before the next superstep.
  Step entry = EntryAt(Barrier::kCheckpoint, next);
  const auto started = std::chrono::steady_clock::now();
  auto written = job_.WriteCheckpoint(*engine_, next);
  if (!written.ok()) return written.status();
  if (Metrics* m = job_.metrics()) {
    ++m->checkpoints;
    m->AddPhase(JobPhase::kCheckpoint, SecondsSince(started));
  }
  entry.part = *written;
  return job_.Enter(std::move(entry)).status();
}

absl::Status WorkerPhases::Executed(uint64_t vertices) {
  Step entry = EntryAt(Barrier::kExecutedGraph, job_.position().superstep);
  entry.vertices = vertices;
  return job_.Enter(std::move(entry)).status();
}

absl::Status WorkerPhases::Persisted(const Persist& persist) {
  auto written = persist();
  if (!written.ok()) return written.status();
  Step entry = EntryAt(Barrier::kPersistedResults, job_.position().superstep);
  entry.part = *written;
  return job_.Enter(std::move(entry)).status();
}

absl::Status WorkerPhases::Completed() {
  return job_.Enter(EntryAt(Barrier::kCompletedJob, job_.position().superstep)).status();
}

absl::Status WorkerPhases::RunEndPhases(uint64_t vertices, const Persist& persist) {
  // Every checkpoint file durable before the job's end, which removes the checkpoints.
  if (auto st = job_.FlushCheckpoints(); !st.ok()) return st;
  for (protocol::Position at = job_.position(); at.barrier != Barrier::kDone;
       at = job_.position()) {
    absl::Status st;
    switch (at.barrier) {
      case Barrier::kExecutedGraph:
        st = Executed(vertices);
        break;
      case Barrier::kPersistedResults:
        st = Persisted(persist);
        break;
      case Barrier::kCompletedJob:
        st = Completed();
        break;
      case Barrier::kAwaitingJob:
      case Barrier::kPre:
      case Barrier::kPost:
      case Barrier::kPostKeepRunning:
      case Barrier::kCheckpoint:
      case Barrier::kDone:
      case Barrier::kAborted:
        return job_.FailureOr(absl::InternalError(
            absl::StrCat("the job is at ", protocol::Describe(at), " after its supersteps")));
    }
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status WorkerPhases::Run(runner::JobRunner& runner, const runner::JobDetails& details,
                               const std::string& tag) {
  // The engine dies in the runner's AbortJob or with the runner; from then on the transport must
  // not hand it relay batches that are still in flight from the other workers.
  struct Detach {
    WorkerJob& job;
    ~Detach() { job.DetachEngine(); }
  } detach{job_};
  bsp::ExecutorOptions options;
  options.max_supersteps = details.work.max_supersteps;
  job_.set_log_tag(tag);
  options.progress = [tag, &job = job_](const bsp::StepStats& s) {
    job.AddStep(s);
    if (Metrics* m = job.metrics()) {
      m->superstep = s.superstep;
      m->active_vertices = s.active;
      m->messages += s.messages;
      m->AddPhase(JobPhase::kCompute, s.seconds);
    }
    spdlog::debug("{}superstep {} | active {} | messages {} | {:.1f} ms", tag, s.superstep,
                  s.active, s.messages, s.seconds * 1e3);
  };
  auto executor = runner.StartJob(details, ExecutorFactory(options));
  if (!executor.ok()) {
    const absl::Status st(
        executor.status().code(),
        absl::StrCat("unable to start the job: ", std::string(executor.status().message())));
    // A checkpoint refused stays marked as such: the master then passes it over.
    return bsp::IsCheckpointRefused(executor.status()) ? bsp::MarkCheckpointRefused(st) : st;
  }
  job_.SetExecutor(executor->get());
  auto abort = [&](absl::Status st) {
    (void)job_.FlushCheckpoints();  // no file written after the job is over here
    job_.DetachEngine();
    job_.SetExecutor(nullptr);
    runner.AbortJob(details);
    return st;
  };
  const auto run_start = std::chrono::steady_clock::now();
  if (auto st = (*executor)->RunToCompletion(); !st.ok()) return abort(st);
  job_.EndRun(SecondsSince(run_start));
  const Persist persist = [&] {
    const auto started = std::chrono::steady_clock::now();
    auto written = runner.CompleteJob(details);
    if (Metrics* m = job_.metrics()) m->AddPhase(JobPhase::kOutput, SecondsSince(started));
    return written;
  };
  if (auto st = RunEndPhases((*executor)->engine().num_local_vertices(), persist); !st.ok()) {
    return abort(st);
  }
  job_.SetExecutor(nullptr);
  return absl::OkStatus();
}

}  // namespace lockstep::dbsp::job
