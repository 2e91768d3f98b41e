#pragma once

// COPY on a connection (private to the db module): a table's rows out as COPY's text, and a
// results file in. The source reads with the first, the sink writes with the second.
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libpq.h"

namespace lockstep::db {

// Rows of a COPY ... TO STDOUT as COPY's text form: fields split by tabs, one row per line, NULL
// as \N, and a backslash before a tab, newline or backslash in a value.
struct CopiedRows {
  std::string text;
  uint64_t rows = 0;
  bool done = false;  // the COPY has ended
};

// Reads rows of a COPY ... TO STDOUT under way on `c`, appended to `buffer` (whose capacity a
// caller may have reserved), until the text holds `max_bytes` or the COPY ends. `what` says what
// the COPY was for in an error.
absl::StatusOr<CopiedRows> ReadCopy(PGconn* c, const std::string& what, uint64_t max_bytes,
                                    std::string buffer = {});

// The whole output of COPY (query) TO STDOUT.
absl::StatusOr<std::string> CopyOut(PGconn* c, const std::string& query, const std::string& what);

// Copies the results file at `results` ("id value" lines) into the table `table_sql` (quoted) with
// COPY ... FROM STDIN, in the transaction `c` is in.
absl::Status CopyResults(PGconn* c, const std::string& table_sql, const std::string& results);

}  // namespace lockstep::db
