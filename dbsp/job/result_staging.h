#pragma once

// Where an attempt's workers write their results until the master publishes them
// (docs/design.md §6.2, §10): a staging directory beside the output directory, with its lease,
// or the staging place of a sink that is not a directory (a database table). Each attempt takes a
// fresh one, so that a worker of a failed attempt still writing cannot put its part among the
// next attempt's.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job/output_dir.h"
#include "lockstep/dbsp/job_spec.h"
#include "lockstep/runner/job_runner.h"
#include "nlohmann/json.hpp"

namespace lockstep::dbsp::job {

class ResultStaging {
 public:
  // The results of job `job_id` of `spec` (spec.sink, if set, else the directory
  // spec.details.work.output).
  ResultStaging(const JobSpec& spec, std::string job_id)
      : spec_(spec), job_id_(std::move(job_id)) {}
  ResultStaging(const ResultStaging&) = delete;
  ResultStaging& operator=(const ResultStaging&) = delete;
  ~ResultStaging() { Discard(); }

  // Makes attempt `attempt`'s staging (attempt 0 is named by the job's ID, attempt A by ID-(A+1)),
  // dropping what an earlier attempt staged.
  absl::Status Prepare(uint32_t attempt);
  // `details` of worker w pointed at its place in the staging: its part's path, or the sink's
  // staging options.
  runner::JobDetails ForWorker(uint32_t w, runner::JobDetails details) const;
  // Checks worker w's part against what it reported, where the master can read it (a directory;
  // a sink checks what it publishes). Null when there is nothing to check here.
  std::function<absl::Status(uint32_t w, const runner::OutputSummary& part)> PartCheck() const;
  // Publishes what is staged, which holds `vertices` results, with the job's record `success`
  // (the JSON a directory's _SUCCESS holds); returns where the results are now.
  absl::StatusOr<std::string> Publish(const nlohmann::json& success, uint64_t vertices);
  // Drops what is staged, and the lease on it.
  void Discard();

 private:
  const JobSpec& spec_;
  const std::string job_id_;
  std::unique_ptr<Lease> lease_;  // a directory's staging
  std::optional<JobOutput> output_;
  std::optional<std::map<std::string, std::string>> staged_;  // a sink's staging
};

}  // namespace lockstep::dbsp::job
