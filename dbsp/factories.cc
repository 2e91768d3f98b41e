#include "lockstep/dbsp/factories.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace lockstep::dbsp {
namespace {

void SetStats(const bsp::StepStats& s, v1::Step& step) {
  step.set_superstep(s.superstep);
  step.set_active(s.active);
  step.set_messages(s.messages);
  step.set_unhalted(s.unhalted);
}

bsp::StepStats StatsOf(const v1::Step& step) {
  bsp::StepStats s;
  s.superstep = step.superstep();
  s.active = step.active();
  s.messages = step.messages();
  s.unhalted = step.unhalted();
  return s;
}

bsp::StepStats Sum(const std::vector<v1::Step>& entries, uint64_t superstep) {
  bsp::StepStats g;
  g.superstep = superstep;
  for (const v1::Step& e : entries) {
    g.active += e.active();
    g.messages += e.messages();
    g.unhalted += e.unhalted();
  }
  return g;
}

v1::Step MakeStep(v1::Step::Type type, uint64_t superstep) {
  v1::Step step;
  step.set_type(type);
  step.set_superstep(superstep);
  return step;
}

}  // namespace

bsp::ExecutorFactory WorkerExecutorFactory(BarrierClient& barrier,
                                           std::function<void(bsp::StepEngine&)> on_engine,
                                           bsp::ExecutorOptions options) {
  return [&barrier, on_engine, options](
             bsp::StepEngine& engine,
             bsp::Callbacks user) -> absl::StatusOr<std::unique_ptr<bsp::Executor>> {
    if (on_engine) on_engine(engine);
    engine.aggregators().set_count_outside_compute(false);
    bsp::Callbacks wrapped;
    wrapped.pre_step = [&barrier, user](uint64_t s) -> absl::Status {
      auto release = barrier.Enter(MakeStep(v1::Step::PRE, s));
      if (!release.ok()) return release.status();
      return user.pre_step ? user.pre_step(s) : absl::OkStatus();
    };
    wrapped.post_step = [&barrier, &engine, user](const bsp::StepStats& local) -> absl::Status {
      v1::Step entry = MakeStep(v1::Step::POST, local.superstep);
      SetStats(local, entry);
      engine.aggregators().ForEach([&](const bsp::AggregatorBase& agg) {
        agg.EncodeDelta((*entry.mutable_aggregator_values())[agg.name()]);
      });
      auto release = barrier.Enter(std::move(entry));
      if (!release.ok()) return release.status();
      for (const auto& [name, bytes] : release->aggregator_values()) {
        bsp::AggregatorBase* agg = engine.aggregators().Find(name);
        if (agg == nullptr) {
          return absl::FailedPreconditionError(absl::StrCat(
              "the master sent a value for aggregator \"", name, "\", which this program lacks"));
        }
        if (auto st = agg->SetEncodedValue(bytes); !st.ok()) return st;
      }
      return user.post_step ? user.post_step(StatsOf(*release)) : absl::OkStatus();
    };
    wrapped.keep_running = [&barrier, user](const bsp::StepStats& local) -> absl::StatusOr<bool> {
      v1::Step entry = MakeStep(v1::Step::POST_KEEP_RUNNING, local.superstep);
      SetStats(local, entry);
      auto release = barrier.Enter(std::move(entry));
      if (!release.ok()) return release.status();
      // Run the user's callback for its side effects; the master's decision is binding, so a
      // callback that is not deterministic cannot split the job.
      if (user.keep_running) {
        auto mine = user.keep_running(StatsOf(*release));
        if (!mine.ok()) return mine.status();
      }
      return !release->stop();
    };
    return std::make_unique<bsp::Executor>(engine, std::move(wrapped), options);
  };
}

bsp::ExecutorFactory MasterExecutorFactory(JobCoordinator& coordinator,
                                           std::function<void(const MasterProgress&)> progress,
                                           bsp::ExecutorOptions options) {
  return [&coordinator, progress, options](
             bsp::StepEngine& engine,
             bsp::Callbacks user) -> absl::StatusOr<std::unique_ptr<bsp::Executor>> {
    struct StepClock {
      std::chrono::steady_clock::time_point start;
      uint64_t batches = 0;
      uint64_t bytes = 0;
    };
    auto clock = std::make_shared<StepClock>();
    bsp::Callbacks wrapped;
    wrapped.pre_step = [&coordinator, user, clock](uint64_t s) -> absl::Status {
      clock->start = std::chrono::steady_clock::now();
      clock->batches = coordinator.relayed_batches();
      clock->bytes = coordinator.relayed_bytes();
      auto entries = coordinator.WaitAll(v1::Step::PRE, s);
      if (!entries.ok()) return entries.status();
      coordinator.ReleaseAll(MakeStep(v1::Step::PRE, s));
      return user.pre_step ? user.pre_step(s) : absl::OkStatus();
    };
    wrapped.post_step = [&coordinator, &engine, user](const bsp::StepStats& own) -> absl::Status {
      auto entries = coordinator.WaitAll(v1::Step::POST, own.superstep);
      if (!entries.ok()) return entries.status();
      for (uint32_t w = 0; w < entries->size(); ++w) {
        for (const auto& [name, bytes] : (*entries)[w].aggregator_values()) {
          bsp::AggregatorBase* agg = engine.aggregators().Find(name);
          absl::Status st = agg == nullptr ? absl::FailedPreconditionError(absl::StrCat(
                                                 "worker ", w, " sent a value for aggregator \"",
                                                 name, "\", which the master's program lacks"))
                                           : agg->MergeEncodedDelta(bytes);
          if (!st.ok()) {
            coordinator.Abort(st);
            return st;
          }
        }
      }
      v1::Step release = MakeStep(v1::Step::POST, own.superstep);
      const bsp::StepStats global = Sum(*entries, own.superstep);
      SetStats(global, release);
      engine.aggregators().ForEach([&](const bsp::AggregatorBase& agg) {
        agg.EncodeValue((*release.mutable_aggregator_values())[agg.name()]);
      });
      coordinator.ReleaseAll(release);
      return user.post_step ? user.post_step(global) : absl::OkStatus();
    };
    wrapped.keep_running = [&coordinator, user, progress,
                            clock](const bsp::StepStats& own) -> absl::StatusOr<bool> {
      auto entries = coordinator.WaitAll(v1::Step::POST_KEEP_RUNNING, own.superstep);
      if (!entries.ok()) return entries.status();
      const bsp::StepStats global = Sum(*entries, own.superstep);
      bool keep = bsp::DefaultKeepRunning(global);
      if (user.keep_running) {
        auto decision = user.keep_running(global);
        if (!decision.ok()) {
          coordinator.Abort(decision.status());
          return decision.status();
        }
        keep = *decision;
      }
      v1::Step release = MakeStep(v1::Step::POST_KEEP_RUNNING, own.superstep);
      SetStats(global, release);
      release.set_stop(!keep);
      coordinator.ReleaseAll(release);
      if (progress) {
        MasterProgress p;
        p.global = global;
        p.relayed_batches = coordinator.relayed_batches() - clock->batches;
        p.relayed_bytes = coordinator.relayed_bytes() - clock->bytes;
        p.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - clock->start).count();
        progress(p);
      }
      return keep;
    };
    return std::make_unique<bsp::Executor>(engine, std::move(wrapped), options);
  };
}

}  // namespace lockstep::dbsp
