#pragma once

// The job a command line describes, for `run` and `master`: the graph and its --db-* tables, the
// output, the limits, and the app's own options (from the catalogue); and the job details made of
// them, checked before anything is read.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "lockstep/catalogue/app.h"
#include "lockstep/db/postgres.h"
#include "lockstep/runner/job_runner.h"

namespace lockstep::cli {

// Graph and job options shared by `run` and `master`.
struct JobFlags {
  std::string graph;
  std::string format;
  bool undirected = false;
  bool symmetric = false;  // --symmetric: both directions listed (GraphSource::both_listed)
  std::string out;
  std::string out_table;
  db::SourceTables tables;
  std::vector<std::string> db_flags;  // the --db-* options given
  uint64_t max_supersteps = 10000;
  std::vector<std::string> trace_vertices;
  std::map<std::string, std::string> params;  // app flags as given
};

// --graph and what goes with it: the --db-* tables, --format, --undirected or --symmetric,
// --max-supersteps,
// --trace-vertex.
void AddGraphOptions(CLI::App* command, JobFlags& flags);

// App options: every given option's value by name, read after parsing.
struct AppOptions {
  std::vector<std::pair<std::string, CLI::Option*>> options;
  std::vector<std::unique_ptr<std::string>> storage;

  // Adds --<p.name> to `command`, once (the master lists every app's options).
  void Add(CLI::App* command, const catalogue::AppParam& p);
  // The given options' values, by name.
  std::map<std::string, std::string> Given() const;
};

// A job made of the command line, and the parameters a file of the graph gave (JobParams).
struct MadeJob {
  runner::JobDetails details;
  std::map<std::string, std::string> from_file;
};

// Why a job could not be made: the command line (exit 2) or the input it names (exit 1).
struct JobError {
  absl::Status status;
  int exit_code;
};

// The job of `app` on the command line: defaults, then Graphalytics properties, then flags; then
// checked as a whole (an app option given to another app, a flag that does not apply to the
// graph's format, parameters wrong whatever the graph). A .properties file that cannot be read or
// says something wrong (a parameter's value included) is bad input (1); everything else here is
// the command line (2).
std::variant<MadeJob, JobError> MakeJob(const catalogue::AppInfo& app, const JobFlags& flags);

// An app's error about a parameter the command line gave names its flag (job_params.h).
absl::Status AsFlagError(const catalogue::AppInfo& app, const absl::Status& status);

}  // namespace lockstep::cli
