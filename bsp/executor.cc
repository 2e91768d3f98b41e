#include "lockstep/bsp/executor.h"

#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"

namespace lockstep::bsp {

Executor::Executor(StepEngine& engine, Callbacks callbacks, ExecutorOptions options)
    : engine_(engine), callbacks_(std::move(callbacks)), options_(std::move(options)) {}

absl::StatusOr<bool> Executor::Step() {
  // oneTBB carries an exception out of a parallel loop to the thread that started it: a
  // superstep's allocation failing on any worker thread arrives here.
  try {
    return StepOrThrow();
  } catch (const std::bad_alloc&) {
    return OutOfMemoryError(absl::StrCat("the messages of superstep ", next_superstep_),
                            engine_.EstimatedPeakBytes());
  } catch (const std::exception& e) {
    return FailedWhileBuilding(absl::StrCat("the messages of superstep ", next_superstep_), e);
  }
}

absl::StatusOr<bool> Executor::StepOrThrow() {
  if (cancel_.load()) return absl::CancelledError("job was cancelled");
  const uint64_t s = next_superstep_;
  if (callbacks_.pre_step) {
    if (auto st = callbacks_.pre_step(s); !st.ok()) return st;
  }
  auto stats = engine_.RunSuperstep(s, cancel_);
  if (!stats.ok()) return stats.status();
  ++next_superstep_;
  if (options_.trace) {
    for (const std::string& line : engine_.TakeTrace()) options_.trace(line);
  }
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
                       " supersteps, the job's superstep limit (max_supersteps)"));
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

absl::Status OutOfMemoryError(std::string_view what, uint64_t needed_bytes) {
  std::string message = absl::StrCat("out of memory while building ", std::string(what));
  if (needed_bytes > 0) {
    constexpr uint64_t kMiB = uint64_t{1} << 20;
    absl::StrAppend(&message, " (needed about ", (needed_bytes + kMiB - 1) / kMiB, " MiB)");
  }
  return absl::ResourceExhaustedError(message);
}

absl::Status FailedWhileBuilding(std::string_view what, const std::exception& e) {
  return absl::InternalError(absl::StrCat("failed while building ", std::string(what), ": ",
                                          SanitizeForLog(e.what(), 200)));
}

}  // namespace lockstep::bsp
