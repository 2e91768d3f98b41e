#include "tables.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "connection.h"
#include "lockstep/bsp/text.h"

namespace lockstep::db {
namespace {

// The kind of ID a column holds ("uuid", "bigint" or "text"), or an error naming it.
absl::StatusOr<std::string> IdColumn(const Table& t, const std::string& column,
                                     const std::string& flag) {
  auto it = t.columns.find(column);
  if (it == t.columns.end()) {
    return absl::NotFoundError(absl::StrCat("PostgreSQL: table \"",
                                            bsp::SanitizeForLog(t.name, 100), "\" has no column \"",
                                            bsp::SanitizeForLog(column, 100), "\" (", flag, ")"));
  }
  const std::string& type = it->second;
  if (type == "uuid") return std::string("uuid");
  if (type == "int2" || type == "int4" || type == "int8") return std::string("bigint");
  if (type == "text" || type == "varchar") return std::string("text");
  return absl::InvalidArgumentError(
      absl::StrCat("PostgreSQL: column \"", bsp::SanitizeForLog(column, 100), "\" of table \"",
                   bsp::SanitizeForLog(t.name, 100), "\" has type ", type,
                   "; vertex IDs must be uuid, an integer type, text or varchar"));
}

bool IsNumeric(const std::string& type) {
  return type == "float8" || type == "float4" || type == "numeric" || type == "int2" ||
         type == "int4" || type == "int8";
}

// The edge table: its ID columns, of one kind, and its weight column if it has one, numeric.
absl::StatusOr<Layout> ReadEdgeLayout(PGconn* c, const SourceTables& tables) {
  Layout l;
  auto edges = Describe(c, tables.edges, "--db-edges-table");
  if (!edges.ok()) return edges.status();
  l.edges = *std::move(edges);
  auto src = IdColumn(l.edges, tables.src, "--db-src-column");
  if (!src.ok()) return src.status();
  auto dst = IdColumn(l.edges, tables.dst, "--db-dst-column");
  if (!dst.ok()) return dst.status();
  if (*src != *dst) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PostgreSQL: table \"", bsp::SanitizeForLog(tables.edges, 100), "\": column \"",
        bsp::SanitizeForLog(tables.src, 100), "\" holds ", *src, " IDs and \"",
        bsp::SanitizeForLog(tables.dst, 100), "\" ", *dst, " IDs; both must be of one kind"));
  }
  l.id_type = *src;
  auto w = l.edges.columns.find(tables.weight);
  if (w != l.edges.columns.end()) {
    if (!IsNumeric(w->second)) {
      return absl::InvalidArgumentError(
          absl::StrCat("PostgreSQL: column \"", bsp::SanitizeForLog(tables.weight, 100),
                       "\" of table \"", bsp::SanitizeForLog(tables.edges, 100), "\" has type ",
                       w->second, "; weights must be numeric (--db-weight-column)"));
    }
    l.has_weight = true;
  }
  return l;
}

}  // namespace

absl::StatusOr<Table> Describe(PGconn* c, const std::string& name, const std::string& flag) {
  auto found = Exec(c,
                    "SELECT to_regclass($1)::text, (SELECT relkind FROM pg_class WHERE oid = "
                    "to_regclass($1))",
                    "looking up a table", PGRES_TUPLES_OK, {name});
  if (!found.ok()) return found.status();
  if (Pq().PQgetisnull(found->get(), 0, 0)) {
    return absl::NotFoundError(
        absl::StrCat("PostgreSQL: no table \"", bsp::SanitizeForLog(name, 100), "\" (", flag, ")"));
  }
  Table t{Pq().PQgetvalue(found->get(), 0, 0), name, {}};
  // TABLESAMPLE reads tables and materialized views only, not views.
  const std::string_view kind = Pq().PQgetvalue(found->get(), 0, 1);
  t.sampleable = kind == "r" || kind == "m" || kind == "p";
  auto cols = Exec(c,
                   "SELECT a.attname, t.typname FROM pg_attribute a JOIN pg_type t ON t.oid = "
                   "a.atttypid WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT "
                   "a.attisdropped",
                   "reading a table's columns", PGRES_TUPLES_OK, {t.sql});
  if (!cols.ok()) return cols.status();
  for (int i = 0; i < Pq().PQntuples(cols->get()); ++i) {
    t.columns[Pq().PQgetvalue(cols->get(), i, 0)] = Pq().PQgetvalue(cols->get(), i, 1);
  }
  return t;
}

absl::StatusOr<Layout> ReadLayout(PGconn* c, const SourceTables& tables) {
  auto edges = ReadEdgeLayout(c, tables);
  if (!edges.ok()) return edges.status();
  Layout l = *std::move(edges);
  auto vertices = Describe(c, tables.vertices, "--db-vertices-table");
  if (vertices.ok()) {
    auto id = IdColumn(*vertices, tables.id, "--db-id-column");
    if (!id.ok()) return id.status();
    if (*id != l.id_type) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PostgreSQL: table \"", bsp::SanitizeForLog(tables.vertices, 100), "\" holds ", *id,
          " IDs and table \"", bsp::SanitizeForLog(tables.edges, 100), "\" ", l.id_type,
          " IDs; both must be of one kind"));
    }
    l.vertices = *std::move(vertices);
  } else if (!absl::IsNotFound(vertices.status())) {
    return vertices.status();
  } else if (tables.vertices_required) {
    // Not NotFound, which means "no vertex table" to a partitioned load.
    return absl::InvalidArgumentError(vertices.status().message());
  }
  return l;
}

absl::StatusOr<std::string> IdType(const std::string& uri, const SourceTables& tables) {
  auto conn = Connect(uri);
  if (!conn.ok()) return conn.status();
  auto layout = ReadLayout(conn->get(), tables);
  if (!layout.ok()) return layout.status();
  return layout->id_type;
}

std::map<std::string, std::string> TablesAsOptions(const SourceTables& t) {
  std::map<std::string, std::string> o = {{"db.edges", t.edges},       {"db.src", t.src},
                                          {"db.dst", t.dst},           {"db.weight", t.weight},
                                          {"db.vertices", t.vertices}, {"db.id", t.id}};
  if (t.vertices_required) o["db.vertices_required"] = "1";
  return o;
}

SourceTables TablesFromOptions(const std::map<std::string, std::string>& o) {
  SourceTables t;
  const auto take = [&](const char* key, std::string& into) {
    if (auto it = o.find(key); it != o.end()) into = it->second;
  };
  take("db.edges", t.edges);
  take("db.src", t.src);
  take("db.dst", t.dst);
  take("db.weight", t.weight);
  take("db.vertices", t.vertices);
  take("db.id", t.id);
  t.vertices_required = o.contains("db.vertices_required");
  return t;
}

}  // namespace lockstep::db
