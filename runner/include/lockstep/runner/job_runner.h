#pragma once

// The interface the jobs (dbsp, the command line's `run`) drive an app through: what runs on each
// process between receiving its job details and reporting its output.

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/runner/job.h"

namespace lockstep::runner {

// What a process wrote to its output: the distributed master checks every worker's output against
// it before publishing (docs/design.md §6).
struct OutputSummary {
  uint64_t vertices = 0;  // lines
  uint64_t bytes = 0;
  uint32_t crc32c = 0;  // CRC-32C (Castagnoli) of the bytes (bsp::Crc32c)
};

// One app's way to run a job: load, build the executor through the given factory, persist.
class JobRunner {
 public:
  virtual ~JobRunner() = default;
  // Checks the job's parameters alone, before any graph is read, and changes nothing: a command
  // line rejects a bad value with it before starting work. The default checks nothing (StartJob
  // still does).
  virtual absl::Status CheckParams(const JobWork&) const { return absl::OkStatus(); }
  // Loads this process's share of the graph and builds the executor with `factory`.
  virtual absl::StatusOr<std::unique_ptr<bsp::Executor>> StartJob(
      const JobDetails& details, const bsp::ExecutorFactory& factory) = 0;
  // Persists the results to details.work.output and says what it wrote.
  virtual absl::StatusOr<OutputSummary> CompleteJob(const JobDetails& details) = 0;
  // Releases whatever the job holds; its output is not written.
  virtual void AbortJob(const JobDetails& details) = 0;
};

}  // namespace lockstep::runner
