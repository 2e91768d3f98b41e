#include "lockstep/bsp/executor.h"

#include "absl/strings/str_cat.h"

namespace lockstep::bsp {

Executor::Executor(StepEngine& engine, Callbacks callbacks, ExecutorOptions options)
    : engine_(engine), callbacks_(std::move(callbacks)), options_(std::move(options)) {}

absl::StatusOr<bool> Executor::Step() {
  if (cancel_.load()) return absl::CancelledError("job was cancelled");
  const uint64_t s = next_superstep_;
  if (callbacks_.pre_step) {
    if (auto st = callbacks_.pre_step(s); !st.ok()) return st;
  }
  auto stats = engine_.RunSuperstep(s, cancel_);
  if (!stats.ok()) return stats.status();
  ++next_superstep_;
  if (options_.progress) options_.progress(*stats);
  if (callbacks_.post_step) {
    if (auto st = callbacks_.post_step(*stats); !st.ok()) return st;
  }
  if (callbacks_.keep_running) return callbacks_.keep_running(*stats);
  return DefaultKeepRunning(*stats);
}

absl::Status Executor::RunToCompletion() {
  while (!stopped_) {
    if (next_superstep_ >= options_.max_supersteps) {
      return absl::DeadlineExceededError(
          absl::StrCat("the job did not finish within ", options_.max_supersteps,
                       " supersteps (raise --max-supersteps if it needs more)"));
    }
    auto keep = Step();
    if (!keep.ok()) return keep.status();
    stopped_ = !*keep;
  }
  return absl::OkStatus();
}

absl::Status Executor::RunSteps(uint64_t n) {
  for (uint64_t i = 0; i < n && !stopped_; ++i) {
    auto keep = Step();
    if (!keep.ok()) return keep.status();
    stopped_ = !*keep;
  }
  return absl::OkStatus();
}

ExecutorFactory LocalExecutorFactory(ExecutorOptions options) {
  return [options](StepEngine& engine,
                   Callbacks callbacks) -> absl::StatusOr<std::unique_ptr<Executor>> {
    return std::make_unique<Executor>(engine, std::move(callbacks), options);
  };
}

}  // namespace lockstep::bsp
