#pragma once

// The db module's connections and statements, shared by its files (private to the module): libpq's
// handles owned, a statement's failure said in one line that names what it was for.
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libpq.h"

namespace lockstep::db {

struct ConnDeleter {
  void operator()(PGconn* c) const { Pq().PQfinish(c); }
};
struct ResultDeleter {
  void operator()(PGresult* r) const { Pq().PQclear(r); }
};
using Conn = std::unique_ptr<PGconn, ConnDeleter>;
using Result = std::unique_ptr<PGresult, ResultDeleter>;

// A server or libpq message on one line, bounded.
std::string Clean(const char* message);

// The URI as messages show it (it holds no password: CheckUri).
std::string Shown(const std::string& uri);

// A connection to `uri` (checked first, which loads libpq), whose server notices go to the log.
absl::StatusOr<Conn> Connect(const std::string& uri);

// Runs `sql`, which must end in `want`; `what` says what it was for in an error.
absl::StatusOr<Result> Exec(PGconn* c, const std::string& sql, const std::string& what,
                            ExecStatusType want = PGRES_COMMAND_OK,
                            const std::vector<std::string>& params = {});

// `name` quoted as an SQL identifier.
std::string Identifier(PGconn* c, const std::string& name);

// A connection to `uri` in a read-only REPEATABLE READ transaction, in the job's snapshot
// (`snapshot`, exported by the master: ExportedSnapshot), or in one of its own when there is none.
absl::StatusOr<Conn> OpenRead(const std::string& uri, const std::string& snapshot);

}  // namespace lockstep::db
