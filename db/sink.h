#pragma once

// The sink's steps that run on a caller's connection, in its transaction (private to the db
// module): `run`'s publication (sink.cc) and a distributed job's staging tables (stage.cc)
// share them.
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "libpq.h"
#include "lockstep/db/postgres.h"

namespace lockstep::db {

// Creates the staging table `stage`: `options`' columns, no index.
absl::Status MakeStage(PGconn* c, const SinkOptions& options, const std::string& stage);

// Publishes the staging table `stage`, which must hold `vertices` rows, as the result table, and
// records the job, in the transaction `c` is in, which it commits (docs/design.md §10); a job
// already recorded is not published again (rolled back: kPublishedBefore). The staging table is
// gone once the transaction commits.
absl::StatusOr<Publication> Publish(PGconn* c, const SinkOptions& options, const std::string& stage,
                                    uint64_t vertices, const JobRecord& record);

}  // namespace lockstep::db
