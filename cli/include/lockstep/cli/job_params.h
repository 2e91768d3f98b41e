#pragma once

// An app's parameters for a job on the command line, and where each came from: the app's default,
// a flag, or a property of the graph's files (a Graphalytics `.properties` file, or the partitioned
// graph written from one). An app names a bad parameter at the start of its error ("damping: must
// be in [0, 1]"); the user is told what they wrote: the flag (a usage error) or the file, line and
// key (bad input data, README "Exit codes").
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::cli {

struct JobParams {
  bsp::Params values;
  // The parameters a file of the graph gave and no flag overrode, and where: the file, line and
  // key ("g.properties:4: graph.g.pr.damping-factor").
  std::map<std::string, std::string> from_file;
};

// The parameters of `app` for a job on `graph`: the app's defaults, then what the graph's
// Graphalytics properties give, then `flags` (the app options given on the command line). An error
// reading the properties names the file.
absl::StatusOr<JobParams> MakeJobParams(const catalogue::AppInfo& app,
                                        const bsp::GraphSource& graph,
                                        const std::map<std::string, std::string>& flags);

// An app's error with the parameter it is about named as the user gave it, and whether that was
// in a file (bad input) rather than on the command line.
struct NamedError {
  absl::Status status;
  bool in_file = false;
};
NamedError NameParam(const catalogue::AppInfo& app,
                     const std::map<std::string, std::string>& from_file,
                     const absl::Status& status);

}  // namespace lockstep::cli
