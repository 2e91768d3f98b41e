// A snapshot of the database that the workers of one job import (docs/design.md §10), exported by
// the master in a session that lives as long as the job.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "connection.h"
#include "lockstep/db/postgres.h"
#include "tables.h"

namespace lockstep::db {

struct ExportedSnapshot::Session {
  Conn conn;
};

ExportedSnapshot::ExportedSnapshot(std::unique_ptr<Session> session, std::string id)
    : session_(std::move(session)), id_(std::move(id)) {}
ExportedSnapshot::~ExportedSnapshot() = default;

absl::StatusOr<std::unique_ptr<ExportedSnapshot>> ExportedSnapshot::Export(
    const std::string& uri, const SourceTables& tables) {
  auto conn = OpenRead(uri, "");
  if (!conn.ok()) return conn.status();
  // The session idles in its transaction for the whole job: a server's timeout for that must not
  // end it (and the snapshot with it).
  if (auto r = Exec(conn->get(), "SET idle_in_transaction_session_timeout = 0",
                    "keeping the job's snapshot");
      !r.ok()) {
    return r.status();
  }
  // The graph's tables cannot be rewritten under the job (TRUNCATE, VACUUM FULL, CLUSTER and
  // the like are not MVCC-safe, and would move the rows the share bounds sample) while it runs;
  // ordinary writes go on.
  auto layout = ReadLayout(conn->get(), tables);
  if (!layout.ok()) return layout.status();
  std::string lock = absl::StrCat("LOCK TABLE ", layout->edges.sql);
  if (layout->vertices) absl::StrAppend(&lock, ", ", layout->vertices->sql);
  if (auto r = Exec(conn->get(), lock + " IN ACCESS SHARE MODE", "locking the graph's tables");
      !r.ok()) {
    return r.status();
  }
  auto id = Exec(conn->get(), "SELECT pg_export_snapshot()", "exporting the job's snapshot",
                 PGRES_TUPLES_OK);
  if (!id.ok()) return id.status();
  std::string snapshot = Pq().PQgetvalue(id->get(), 0, 0);
  auto session = std::make_unique<Session>();
  session->conn = *std::move(conn);
  return std::unique_ptr<ExportedSnapshot>(
      new ExportedSnapshot(std::move(session), std::move(snapshot)));
}

}  // namespace lockstep::db
