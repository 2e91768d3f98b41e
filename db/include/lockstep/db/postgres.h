#pragma once

// PostgreSQL as a graph source and a result sink (docs/design.md §10), on libpq. The engine (bsp)
// links no database client: `OpenSource` makes the GraphTextSource that a GraphSource carries,
// and `PublishResults` publishes a finished job's results as a table in one transaction.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/graph_input.h"

namespace lockstep::db {

// True if `text` is a libpq connection URI (postgresql:// or postgres://).
bool IsPostgresUri(std::string_view text);

// Refuses a URI that carries a password, which would show in process lists, logs and
// configuration files: libpq takes it from PGPASSWORD or a password file (PGPASSFILE,
// ~/.pgpass) instead. `flag` names the option in the error.
absl::Status CheckUri(std::string_view uri, const std::string& flag);

// The local paths a URI has libpq use, as (keyword, path), for a worker's --data-root to confine
// (so that a job's URI cannot have libpq read a file of the worker's: a password file's entries
// go to the server): sslcert, sslkey, sslrootcert, sslcrl, sslcrldir, passfile, and the Unix
// socket directories among its hosts. Fails closed: a keyword that names something the roots
// cannot confine (service, servicefile, sslkeylogfile, an abstract socket, an OpenSSL engine's
// key "engine:id"), or one this code does not know (a newer libpq's), is refused, naming it. A URI
// that does not parse gives no paths (CheckUri says why); without libpq (it is opened on first
// use) the error says it could not be loaded.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> UriPaths(std::string_view uri);

// Where the graph is in the database: the tables and columns, as given by the --db-* options.
struct SourceTables {
  std::string edges = "edges";
  std::string src = "src";
  std::string dst = "dst";
  std::string weight = "weight";
  std::string vertices = "vertices";
  std::string id = "id";
  // The vertex table was named explicitly: it must exist (by default it is read only if it does).
  bool vertices_required = false;
};

// The graph in the tables at `uri`: its edges (and, if the vertex table exists, its vertex set),
// read in one REPEATABLE READ snapshot with COPY ... TO STDOUT: `snapshot` (an exported
// snapshot's ID, which every worker of a job imports), or one of its own if empty. IDs are
// `uuid`, an integer type or text (`text`, `varchar`); weights any numeric type.
std::shared_ptr<const bsp::GraphTextSource> OpenSource(std::string uri, SourceTables tables,
                                                       std::string snapshot = "");

// The tables as a GraphSource's options, which travel to a distributed job's workers, and back.
std::map<std::string, std::string> TablesAsOptions(const SourceTables& tables);
SourceTables TablesFromOptions(const std::map<std::string, std::string>& options);
// The option that names the job's exported snapshot.
inline constexpr char kSnapshotOption[] = "db.snapshot";

// Sets `graph.text` when `graph.path` is a PostgreSQL URI (from its options: the tables and the
// snapshot); anything else is left alone.
absl::Status AttachSource(bsp::GraphSource& graph);

// A snapshot of the database that the workers of one job import (docs/design.md §10): the
// exporting session, a REPEATABLE READ transaction, lives as long as this object, and the
// snapshot with it.
class ExportedSnapshot {
 public:
  // Also locks the graph's tables against rewrites (ACCESS SHARE) while the snapshot lives.
  static absl::StatusOr<std::unique_ptr<ExportedSnapshot>> Export(const std::string& uri,
                                                                  const SourceTables& tables);
  ~ExportedSnapshot();
  const std::string& id() const { return id_; }

 private:
  struct Session;
  ExportedSnapshot(std::unique_ptr<Session> session, std::string id);
  std::unique_ptr<Session> session_;
  std::string id_;
};

// The SQL type of the graph's IDs at `uri` (the edge table's source column: "uuid", "bigint" or
// "text"), which a result table's `id` column takes.
absl::StatusOr<std::string> IdType(const std::string& uri, const SourceTables& tables);

// What the sink writes beside the results: one row of `lockstep_jobs`.
struct JobRecord {
  std::string job_id;  // a published job ID is never published again (idempotent)
  std::string app;
  std::string graph;  // the graph's name (a path, or a URI without password)
  std::map<std::string, std::string> params;
  uint64_t vertices = 0;
  uint64_t supersteps = 0;
  double load_seconds = 0;
  double compute_seconds = 0;
};

struct SinkOptions {
  std::string uri;
  std::string table;       // the result table (created when missing)
  std::string id_type;     // "uuid", "bigint" or "text": the new table's id column
  std::string value_type;  // "double precision", "bigint", or an ID type (labels)
};

// What a publication did: the results are the table's now, or the job was published before (its
// ID is in `lockstep_jobs`) and nothing was written.
enum class Publication { kPublished, kPublishedBefore };

// Publishes the results in `results` (one "id value" line per vertex, as a job's output file
// holds; `record.vertices` of them) as `options.table` and records the job in `lockstep_jobs`:
// the results are copied into a staging table of their own, then published as Stages::Publish
// does.
// A reader sees the previous results or these, never a mixture, and a failure leaves the previous
// ones and no staging table. A job ID already in `lockstep_jobs` is not published again.
absl::StatusOr<Publication> PublishResults(const SinkOptions& options, const std::string& results,
                                           const JobRecord& record);

// The output option that names a job's staging table.
inline constexpr char kStageOption[] = "db.stage";

// A job's results (docs/design.md §10): the master creates a staging table for each attempt (a
// plain table with the result table's columns and no index, named after the job, and leased:
// lockstep/db/stage.h), every worker copies its part into it in a transaction of its own, and the
// master publishes it in one transaction that checks it holds `vertices` rows, takes the job's row
// in `lockstep_jobs`, and either renames the staging table into the result table's place (when the
// result table is missing, or plain: nothing but its primary key and privileges attached, which
// are carried over) or replaces the result table's rows with the staged ones and drops the staging
// table. CopyIntoStage is a worker's copy.
absl::Status CopyIntoStage(const std::string& uri, const std::string& stage,
                           const std::string& results);

}  // namespace lockstep::db
