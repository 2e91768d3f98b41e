#pragma once

// A job's runner whose results go to a sink that is not a file (a database table, docs/design.md
// §10): the results are written to a file in a directory of this worker's, then shipped; the
// directory goes with the runner.

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/runner/job_runner.h"

namespace lockstep::dbsp::job {

class ShippingRunner final : public runner::JobRunner {
 public:
  // Ships the results file (the path) to the sink the master's details name.
  using Ship = std::function<absl::Status(const runner::JobDetails&, const std::string&)>;

  // Runs the job of `details` (whose output names the sink) with `inner`, shipping with `ship`
  // (Unimplemented without one).
  static absl::StatusOr<ShippingRunner> Make(runner::JobRunner& inner, Ship ship,
                                             const runner::JobDetails& details);
  ShippingRunner(ShippingRunner&& o) noexcept;
  ~ShippingRunner() override;

  // The details to run the job with: the master's, with the output pointed at the local file.
  const runner::JobDetails& details() const { return local_; }

  absl::Status CheckParams(const runner::JobWork& work) const override {
    return inner_.CheckParams(work);
  }
  absl::StatusOr<std::unique_ptr<bsp::Executor>> StartJob(
      const runner::JobDetails& d, const bsp::ExecutorFactory& factory) override {
    return inner_.StartJob(d, factory);
  }
  absl::StatusOr<runner::OutputSummary> CompleteJob(const runner::JobDetails& d) override;
  void AbortJob(const runner::JobDetails& d) override { inner_.AbortJob(d); }

 private:
  ShippingRunner(runner::JobRunner& inner, Ship ship, std::string dir, runner::JobDetails sink);
  runner::JobRunner& inner_;
  Ship ship_;
  std::string dir_;
  runner::JobDetails sink_;   // as the master gave them: `work.output` names the sink
  runner::JobDetails local_;  // `work.output` is the file in dir_
};

}  // namespace lockstep::dbsp::job
