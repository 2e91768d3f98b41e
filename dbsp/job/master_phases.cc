#include "job/master_phases.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp::job {

using protocol::Barrier;
using protocol::Step;

namespace {

double SecondsSince(MasterPhases::Clock::time_point start) {
  return std::chrono::duration<double>(MasterPhases::Clock::now() - start).count();
}

bsp::StepStats Sum(const std::vector<Step>& entries, uint64_t superstep) {
  bsp::StepStats g;
  g.superstep = superstep;
  for (const Step& e : entries) {
    g.active += e.active;
    g.messages += e.messages;
    g.unhalted += e.unhalted;
  }
  return g;
}

}  // namespace

MasterPhases::MasterPhases(MasterJob& job, std::function<void(const MasterProgress&)> progress,
                           CheckpointPlan checkpoints, std::string log_prefix)
    : job_(job),
      progress_(std::move(progress)),
      checkpoints_(std::move(checkpoints)),
      log_prefix_(std::move(log_prefix)) {}

bsp::ExecutorFactory MasterPhases::ExecutorFactory(bsp::ExecutorOptions options) {
  return [this, options](bsp::StepEngine& engine,
                         bsp::Callbacks user) -> absl::StatusOr<std::unique_ptr<bsp::Executor>> {
    job_.SetCheckpointPlan(checkpoints_);
    engine_ = &engine;
    user_ = std::move(user);
    bsp::Callbacks wrapped;
    wrapped.pre_step = [this](uint64_t s) { return Pre(s); };
    wrapped.post_step = [this](const bsp::StepStats& own) { return Post(own); };
    wrapped.keep_running = [this](const bsp::StepStats& own) { return KeepRunning(own); };
    return std::make_unique<bsp::Executor>(engine, std::move(wrapped), options);
  };
}

absl::Status MasterPhases::Pre(uint64_t superstep) {
  step_start_ = Clock::now();
  batches_before_ = job_.relayed_batches();
  bytes_before_ = job_.relayed_bytes();
  auto entries = job_.WaitAll({Barrier::kPre, superstep});
  if (!entries.ok()) return entries.status();
  if (auto st = job_.ReleaseAll(Step{}); !st.ok()) return st;
  return user_.pre_step ? user_.pre_step(superstep) : absl::OkStatus();
}

absl::Status MasterPhases::Post(const bsp::StepStats& own) {
  auto entries = job_.WaitAll({Barrier::kPost, own.superstep});
  if (!entries.ok()) return entries.status();
  const auto entered = job_.entered_at();
  worker_seconds_.assign(entered.size(), 0);
  for (size_t w = 0; w < entered.size(); ++w) {
    worker_seconds_[w] = std::chrono::duration<double>(entered[w] - step_start_).count();
  }
  trace_.clear();
  for (uint32_t w = 0; w < entries->size(); ++w) {
    const Step& entry = (*entries)[w];
    job_.AddRelayed(entry.relayed_batches, entry.relayed_bytes);
    for (std::string& line : TracedLines(job_.traced(w), w, entry.trace)) {
      trace_.push_back(std::move(line));
    }
    for (const auto& [name, bytes] : entry.aggregators) {
      bsp::AggregatorBase* agg = engine_->aggregators().Find(name);
      absl::Status st =
          agg == nullptr
              ? absl::FailedPreconditionError(absl::StrCat(
                    "worker ", w, " sent a value for aggregator \"", bsp::SanitizeForLog(name, 64),
                    "\", which the master's program lacks"))
              : agg->MergeEncodedDelta(bytes);
      if (!st.ok()) {
        job_.Abort(st);
        return st;
      }
    }
  }
  const bsp::StepStats global = Sum(*entries, own.superstep);
  Step release = protocol::StepWithCounts(Barrier::kPost, global);
  engine_->aggregators().ForEach(
      [&](const bsp::AggregatorBase& agg) { agg.EncodeValue(release.aggregators[agg.name()]); });
  if (auto st = job_.ReleaseAll(release); !st.ok()) return st;
  return user_.post_step ? user_.post_step(global) : absl::OkStatus();
}

absl::StatusOr<bool> MasterPhases::KeepRunning(const bsp::StepStats& own) {
  auto entries = job_.WaitAll({Barrier::kPostKeepRunning, own.superstep});
  if (!entries.ok()) return entries.status();
  const bsp::StepStats global = Sum(*entries, own.superstep);
  bool keep = bsp::DefaultKeepRunning(global);
  if (user_.keep_running) {
    auto decision = user_.keep_running(global);
    if (!decision.ok()) {
      job_.Abort(decision.status());
      return decision.status();
    }
    keep = *decision;
  }
  Step release = protocol::StepWithCounts(Barrier::kPostKeepRunning, global);
  release.stop = !keep;
  const auto now = Clock::now();
  release.checkpoint =
      keep && ((checkpoints_.every > 0 && (own.superstep + 1) % checkpoints_.every == 0) ||
               (checkpoints_.interval.count() > 0 && now - checkpointed_ >= checkpoints_.interval));
  if (release.checkpoint) checkpointed_ = now;
  if (auto st = job_.ReleaseAll(release); !st.ok()) return st;
  if (progress_) {
    MasterProgress p;
    p.global = global;
    p.relayed_batches = job_.relayed_batches() - batches_before_;
    p.relayed_bytes = job_.relayed_bytes() - bytes_before_;
    p.seconds = SecondsSince(step_start_);
    p.stragglers = job_.TakeStragglers();
    p.worker_seconds = worker_seconds_;
    p.worker_names = job_.names();
    p.trace = std::move(trace_);
    progress_(p);
  }
  if (release.checkpoint) {
    if (auto st = Checkpoint(own.superstep + 1); !st.ok()) {
      job_.Abort(st);
      return job_.status();
    }
  }
  return keep;
}

absl::Status MasterPhases::Checkpoint(uint64_t next) {
  // Every worker encodes its file and enters; the files are written while the job goes on, and
  // listed once durable.
  const auto start = Clock::now();
  auto entries = job_.WaitAll({Barrier::kCheckpoint, next});
  if (!entries.ok()) return entries.status();
  std::vector<std::pair<std::string, std::string>> aggregators;
  engine_->aggregators().ForEach([&](const bsp::AggregatorBase& agg) {
    std::string value;
    agg.EncodeValue(value);
    aggregators.emplace_back(agg.name(), std::move(value));
  });
  uint64_t bytes = 0;
  for (const Step& e : *entries) bytes += e.part.bytes;
  job_.CheckpointTaken(next, *entries, std::move(aggregators));
  spdlog::info("checkpoint before superstep {} taken: {} bytes in {} files, {:.1f} ms", next, bytes,
               entries->size(), SecondsSince(start) * 1e3);
  return job_.ReleaseAll(Step{});
}

absl::Status MasterPhases::Executed() {
  auto entries = job_.WaitAll(job_.position());
  if (!entries.ok()) return entries.status();
  ended_.vertices = 0;
  for (const Step& e : *entries) ended_.vertices += e.vertices;
  persist_start_ = Clock::now();
  return job_.ReleaseAll(Step{});
}

absl::Status MasterPhases::Persisted(const Commit& commit) {
  auto entries = job_.WaitAll(job_.position());
  if (!entries.ok()) return entries.status();
  ended_.persist_seconds = SecondsSince(persist_start_);
  uint64_t written = 0;
  ended_.parts.clear();
  for (uint32_t w = 0; w < entries->size(); ++w) {
    const runner::OutputSummary& part = (*entries)[w].part;
    if (commit.verify_part) {
      if (auto st = commit.verify_part(w, part); !st.ok()) {
        return absl::DataLossError(absl::StrCat(job_.names()[w], ": ", st.message()));
      }
    }
    written += part.vertices;
    ended_.parts.push_back(part);
  }
  if (written != ended_.vertices) {
    return absl::DataLossError(
        absl::StrCat("the parts hold ", written, " vertices; the workers have ", ended_.vertices));
  }
  return job_.ReleaseAll(Step{});
}

absl::Status MasterPhases::Completed(const Commit& commit) {
  auto entries = job_.WaitAll(job_.position());
  if (!entries.ok()) return entries.status();
  if (auto st = commit.publish(ended_); !st.ok()) return st;
  // Publishing is the commit point: from here on the job has succeeded whatever the workers do.
  if (auto st = job_.ReleaseAll(Step{}); !st.ok()) {
    spdlog::warn("{}published, but not every worker heard so: {}", log_prefix_,
                 std::string(st.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<MasterPhases::Ended> MasterPhases::RunEndPhases(const Commit& commit) {
  for (protocol::Position at = job_.position(); at.barrier != Barrier::kDone;
       at = job_.position()) {
    absl::Status st;
    switch (at.barrier) {
      case Barrier::kExecutedGraph:
        st = Executed();
        break;
      case Barrier::kPersistedResults:
        st = Persisted(commit);
        break;
      case Barrier::kCompletedJob:
        if (st = Completed(commit); st.ok()) return ended_;
        break;
      case Barrier::kAwaitingJob:
      case Barrier::kPre:
      case Barrier::kPost:
      case Barrier::kPostKeepRunning:
      case Barrier::kCheckpoint:
      case Barrier::kDone:
      case Barrier::kAborted:
        st = absl::InternalError(
            absl::StrCat("the job is at ", protocol::Describe(at), " after its supersteps"));
        break;
    }
    if (!st.ok()) return st;
  }
  return absl::InternalError("the job ended without publishing");
}

std::vector<std::string> TracedLines(const std::vector<std::string>& ids, uint32_t w,
                                     const std::vector<std::string>& lines) {
  std::vector<std::string> taken;
  for (const std::string& line : lines) {
    if (taken.size() == ids.size()) break;
    const bool holds = std::any_of(ids.begin(), ids.end(), [&](const std::string& id) {
      return line.starts_with(absl::StrCat("vertex '", id, "' "));
    });
    if (!holds) continue;  // not about a vertex it holds: not logged
    taken.push_back(absl::StrCat(bsp::SanitizeForLog(line, kMaxTraceLineBytes), " | worker ", w));
  }
  return taken;
}

}  // namespace lockstep::dbsp::job
