#pragma once

// The directories a worker confines a job's paths to (--data-root, docs/design.md §11): a master
// is trusted with the cluster's jobs, not with this machine's files.

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/dbsp/worker_options.h"
#include "lockstep/runner/job_runner.h"

namespace lockstep::dbsp::job {

// The canonical forms of the directories `dirs`; InvalidArgument naming one that is not a
// directory.
absl::StatusOr<std::vector<std::filesystem::path>> DataRoots(const std::vector<std::string>& dirs);

// Refuses (PermissionDenied) a job whose details name a path outside `roots` once its symbolic
// links are resolved: its graph (a Graphalytics graph's vertex and edge files too), output,
// checkpoints and partitioned form, and the local files a database URI has its client use
// (options.uri_paths). No roots: any path.
absl::Status ConfinePaths(const runner::JobDetails& d,
                          const std::vector<std::filesystem::path>& roots,
                          const WorkerOptions& options);

}  // namespace lockstep::dbsp::job
