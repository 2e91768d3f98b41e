#pragma once

// The graph's tables as the server describes them (private to the db module): each table's columns
// and types, and what kind of IDs and weights they hold, checked against the --db-* options that
// name them. The source, the snapshot and the sink read them.
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "libpq.h"
#include "lockstep/db/postgres.h"

namespace lockstep::db {

// A table's columns and their SQL types (pg_type's typname).
struct Table {
  std::string sql;   // the table's name, quoted as SQL needs it
  std::string name;  // as given, for messages
  std::map<std::string, std::string> columns;
  bool sampleable = false;  // a table (TABLESAMPLE applies), not a view
};

// The table `name`, or NotFound naming it and the option `flag` that names it.
absl::StatusOr<Table> Describe(PGconn* c, const std::string& name, const std::string& flag);

// The layout of the graph's tables.
struct Layout {
  Table edges;
  std::string id_type;  // "uuid", "bigint" or "text"
  bool has_weight = false;
  std::optional<Table> vertices;
};

// The layout of `tables`: the edge table with ID columns of one kind and a numeric weight, if it
// has one; the vertex table if it exists (an error if it was named and does not), its IDs of the
// edges' kind. An error names the table, the column and its option.
absl::StatusOr<Layout> ReadLayout(PGconn* c, const SourceTables& tables);

}  // namespace lockstep::db
