#pragma once

// The command line's PostgreSQL wiring (docs/design.md §10): the db module's source, sink and
// snapshot handed to the jobs, which know nothing of databases. `run` reads and publishes on its
// own; a master gets a sink for its spec and exports a snapshot per job; a worker gets the hooks
// that open a job's tables, confine a URI's paths and copy its results into the staging table.
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job_flags.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/catalogue/app.h"
#include "lockstep/db/postgres.h"
#include "lockstep/dbsp/master.h"
#include "lockstep/dbsp/worker.h"

namespace lockstep::cli {

// A distributed job's PostgreSQL table, in its details' output options (and its record).
inline constexpr char kTableOption[] = "db.table";

// `run`'s PostgreSQL --out: publishes `results` (the job's output file) as the app's table in one
// transaction, with `record` (a fresh job ID is set here); says what it wrote, for the log.
absl::StatusOr<std::string> PublishRunResults(const catalogue::AppInfo& app, const JobFlags& flags,
                                              const std::string& results, db::JobRecord record);

// The parts of a master's spec that a database needs and a job record cannot hold (§10): the
// snapshot option, which lives with this master only, and the sink's functions.
void AttachDatabase(dbsp::JobSpec& spec);

// A master's job on a database graph reads one snapshot, exported here (its ID set in the spec's
// graph options) and imported by its workers; the exporting session lives as long as the returned
// object, which the job must not outlive. Nothing (null) for a graph that is not a database.
absl::StatusOr<std::unique_ptr<db::ExportedSnapshot>> ExportSnapshot(dbsp::JobSpec& spec);

// A worker's hooks for a job's PostgreSQL graph and results.
void AttachDatabase(dbsp::WorkerOptions& options);

}  // namespace lockstep::cli
