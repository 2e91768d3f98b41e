#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace lockstep::dbsp {

// The result directory of a distributed job, published atomically (DESIGN.md §4): workers write
// their parts into a hidden job directory beside DIR; the master adds `_SUCCESS` and swaps the
// symlink DIR over to that directory with one rename. A reader of DIR sees the previous complete
// result or the new one, never a mixture; a failed job's directory is removed.
struct JobOutput {
  std::string link;     // DIR as given (made absolute)
  std::string staging;  // where the parts are written during the job
  std::string final;    // the published job directory DIR points to
};

// Checks that DIR is free (or an empty directory) or a previous result link.
absl::Status CheckOutput(const std::string& dir);
// Checks DIR as CheckOutput does and creates the staging directory.
absl::StatusOr<JobOutput> PrepareOutput(const std::string& dir, const std::string& job_id);
// Writes `_SUCCESS` with `success_json`, then points DIR at the job's directory and removes the
// previously published one.
absl::Status PublishOutput(const JobOutput& output, const std::string& success_json);
// Removes the staging directory and everything in it.
void DiscardOutput(const JobOutput& output);

// "part-00003": the file of worker 3.
std::string PartName(uint32_t worker_index);

}  // namespace lockstep::dbsp
