#include "lockstep/db/postgres.h"

#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "connection.h"
#include "libpq.h"
#include "lockstep/bsp/text.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/partition/range.h"
#include "nlohmann/json.hpp"
#include "sink.h"
#include "spdlog/spdlog.h"

namespace lockstep::db {
namespace {

// A table's columns and their SQL types (pg_type's typname), or NotFound naming the table and the
// option that names it.
struct Table {
  std::string sql;   // the table's name, quoted as SQL needs it
  std::string name;  // as given, for messages
  std::map<std::string, std::string> columns;
  bool sampleable = false;  // a table (TABLESAMPLE applies), not a view
};

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

// The layout of the graph's tables.
struct Layout {
  Table edges;
  std::string id_type;
  bool has_weight = false;
  std::optional<Table> vertices;
};

absl::StatusOr<Layout> ReadLayout(PGconn* c, const SourceTables& tables) {
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

// Takes the result that ends a COPY on `c` (and any after it): OK, or why it failed.
absl::Status EndCopy(PGconn* c, const std::string& what) {
  Result end(Pq().PQgetResult(c));
  const bool ok = end != nullptr && Pq().PQresultStatus(end.get()) == PGRES_COMMAND_OK;
  std::string error =
      ok ? "" : Clean(end ? Pq().PQresultErrorMessage(end.get()) : Pq().PQerrorMessage(c));
  while (Result more{Pq().PQgetResult(c)}) {
  }
  if (!ok) return absl::UnavailableError(absl::StrCat("PostgreSQL: ", what, ": ", error));
  return absl::OkStatus();
}

// Appends rows of a COPY ... TO STDOUT under way on `c` to `out` until it holds `max_bytes` or
// the COPY ends (`done` is then set). Text format: fields split by tabs, one row per line, NULL
// as \N, and a backslash before a tab, newline or backslash in a value.
absl::Status ReadCopy(PGconn* c, const std::string& what, uint64_t max_bytes, std::string& out,
                      uint64_t& rows, bool& done) {
  while (!done && out.size() < max_bytes) {
    char* buf = nullptr;
    const int n = Pq().PQgetCopyData(c, &buf, 0);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      Pq().PQfreemem(buf);
      ++rows;
      continue;
    }
    if (n == -2) {
      return absl::UnavailableError(
          absl::StrCat("PostgreSQL: ", what, ": ", Clean(Pq().PQerrorMessage(c))));
    }
    if (auto st = EndCopy(c, what); !st.ok()) return st;
    done = true;
  }
  return absl::OkStatus();
}

// Appends the whole output of COPY (query) TO STDOUT.
absl::Status CopyOut(PGconn* c, const std::string& query, const std::string& what,
                     std::string& out) {
  auto started = Exec(c, absl::StrCat("COPY (", query, ") TO STDOUT"), what, PGRES_COPY_OUT);
  if (!started.ok()) return started.status();
  uint64_t rows = 0;
  bool done = false;
  return ReadCopy(c, what, std::numeric_limits<uint64_t>::max(), out, rows, done);
}

// Checks that COPY's text is what the edge-list form reads: no NULL (\N) and no escaped
// character in any field, and, for text IDs, no ID that is empty, holds a space or a carriage
// return, or would start a comment. The error names the table, the row and the column.
absl::Status CheckRows(const std::string& text, const std::string& table,
                       const std::vector<std::string>& columns, bool text_ids) {
  const auto fail = [&](size_t line_start, size_t field, const std::string& why) {
    std::string_view line(text.data() + line_start, text.size() - line_start);
    line = line.substr(0, line.find('\n'));
    std::string fields;
    for (size_t f = 0; f < columns.size(); ++f) {
      const size_t tab = line.find('\t');
      std::string_view v = line.substr(0, tab);
      if (f > 0) fields += ", ";
      fields += v == "\\N" ? std::string("NULL") : bsp::SanitizeForLog(v, 64);
      line = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("table \"", bsp::SanitizeForLog(table, 100), "\", row (", fields, "): ", why,
                     " in column \"",
                     bsp::SanitizeForLog(columns[std::min(field, columns.size() - 1)], 100), "\""));
  };
  if (!text_ids && text.find('\\') == std::string::npos) return absl::OkStatus();
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    size_t field = 0;
    for (size_t start = pos; start <= nl; ++field) {
      size_t end = text.find('\t', start);
      if (end == std::string::npos || end > nl) end = nl;
      const std::string_view v(text.data() + start, end - start);
      if (v == "\\N") return fail(pos, field, "NULL");
      if (v.find('\\') != std::string_view::npos) {
        return fail(pos, field, "a tab, newline or backslash (which an edge list cannot hold)");
      }
      const bool id = field < 2 && (field == 0 || columns.size() > 1);
      if (text_ids && id) {
        if (v.empty()) return fail(pos, field, "an empty ID");
        if (v.find_first_of(" \r") != std::string_view::npos) {
          return fail(pos, field, "a space or carriage return (which an edge list cannot hold)");
        }
        if (field == 0 && (v[0] == '#' || v[0] == '%')) {
          return fail(pos, field, "an ID starting with '#' or '%' (an edge list's comment)");
        }
      }
      start = end + 1;
    }
    pos = nl + 1;
  }
  return absl::OkStatus();
}

// A read-only transaction in the job's snapshot (`snapshot`, exported by the master), or in one of
// its own when there is none.
absl::StatusOr<Conn> OpenRead(const std::string& uri, const std::string& snapshot) {
  auto conn = Connect(uri);
  if (!conn.ok()) return conn.status();
  PGconn* c = conn->get();
  if (auto r = Exec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "starting a read");
      !r.ok()) {
    return r.status();
  }
  if (!snapshot.empty()) {
    char* literal = Pq().PQescapeLiteral(c, snapshot.data(), snapshot.size());
    if (literal == nullptr)
      return absl::InvalidArgumentError("a snapshot ID that cannot be quoted");
    const std::string sql = absl::StrCat("SET TRANSACTION SNAPSHOT ", literal);
    Pq().PQfreemem(literal);
    if (auto r = Exec(c, sql, "taking the job's snapshot (the master's session must live)");
        !r.ok()) {
      return r.status();
    }
  }
  return conn;
}

// The rows of each of `size` shares of `table` by `column`, as conditions the server evaluates
// (docs/design.md §10): for uuid IDs each worker's own UUID range (an index makes it a range
// scan); for integers ranges between quantiles of the column in the snapshot (the same on every
// worker); for text a hash of the ID. Empty conditions (one share): every row.
absl::StatusOr<std::vector<std::string>> ShareConditions(PGconn* c, const Table& table,
                                                         const std::string& column,
                                                         const std::string& id_type,
                                                         uint32_t size) {
  if (size <= 1) return std::vector<std::string>(1);
  const std::string col = Identifier(c, column);
  // The condition of share r; a NULL ID satisfies none, so share 0 takes it, for the row checks
  // to refuse it.
  std::vector<std::string> where(size);
  const auto add = [&](uint32_t r, const std::string& condition) {
    where[r] =
        absl::StrCat("(", condition, r == 0 ? absl::StrCat(" OR ", col, " IS NULL") : "", ")");
  };
  if (id_type == "uuid") {
    auto range = partition::Range::Whole(size);
    if (!range.ok()) return range.status();
    for (uint32_t r = 0; r < size; ++r) {
      auto extents = range->Extents(r);
      if (!extents.ok()) return extents.status();
      add(r, absl::StrCat(col, " BETWEEN '", bsp::ToString(extents->first), "'::uuid AND '",
                          bsp::ToString(extents->second), "'::uuid"));
    }
    return where;
  }
  if (id_type == "text") {
    for (uint32_t r = 0; r < size; ++r) {
      add(r, absl::StrCat("(hashtext(", col, ") & 2147483647) % ", size, " = ", r));
    }
    return where;
  }
  // Integers: split at quantiles of the column, from a block sample (1%, a fixed seed) when it
  // holds enough rows, else from every row. Both read only the snapshot, so every worker computes
  // the same bounds; the shares are then about equal in rows, however the IDs are spread.
  std::string cuts;
  for (uint32_t r = 1; r < size; ++r) {
    absl::StrAppend(&cuts, r > 1 ? ", " : "", static_cast<double>(r) / size);
  }
  const auto quantiles = [&](const std::string& from) {
    return Exec(c,
                absl::StrCat("SELECT count(*), percentile_disc(ARRAY[", cuts,
                             "]::float8[]) WITHIN GROUP (ORDER BY ", col, ") FROM ", from),
                absl::StrCat("splitting table ", table.sql, " into shares"), PGRES_TUPLES_OK);
  };
  auto q =
      quantiles(table.sampleable ? absl::StrCat(table.sql, " TABLESAMPLE SYSTEM (1) REPEATABLE (7)")
                                 : table.sql);
  if (!q.ok()) return q.status();
  if (table.sampleable && std::strtoull(Pq().PQgetvalue(q->get(), 0, 0), nullptr, 10) < 10000) {
    q = quantiles(table.sql);
    if (!q.ok()) return q.status();
  }
  if (Pq().PQgetisnull(q->get(), 0, 1)) {  // no rows, or only NULL IDs: share 0 reads them all
    where.assign(size, "false");
    where[0] = "true";
    return where;
  }
  // "{b1,b2,...}": the P-1 bounds, integers.
  std::vector<std::string> bounds;
  std::string_view list = Pq().PQgetvalue(q->get(), 0, 1);
  list.remove_prefix(1);
  list.remove_suffix(1);
  for (size_t at = 0; at <= list.size();) {
    size_t comma = list.find(',', at);
    if (comma == std::string_view::npos) comma = list.size();
    bounds.emplace_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  if (bounds.size() + 1 != size) {
    return absl::InternalError(absl::StrCat("PostgreSQL gave ", bounds.size(), " bounds for ", size,
                                            " shares of table ", table.sql));
  }
  // The first and last shares are open-ended, so no row falls outside every share.
  for (uint32_t r = 0; r < size; ++r) {
    std::string condition;
    if (r > 0) absl::StrAppend(&condition, col, " >= ", bounds[r - 1]);
    if (r + 1 < size) {
      absl::StrAppend(&condition, condition.empty() ? "" : " AND ", col, " < ", bounds[r]);
    }
    add(r, condition);
  }
  return where;
}

// A worker's share of a table: one COPY, read and checked a round ahead by a thread of its own,
// so that the server formats the next rows while the load parses and routes these (rather than
// waiting on the socket in between).
class PostgresShare final : public bsp::GraphTextShare {
 public:
  PostgresShare(Conn conn, std::string table, std::vector<std::string> columns, bool text_ids)
      : conn_(std::move(conn)),
        table_(std::move(table)),
        what_(absl::StrCat("reading table \"", bsp::SanitizeForLog(table_, 100), "\"")),
        columns_(std::move(columns)),
        text_ids_(text_ids) {}

  ~PostgresShare() override {
    if (!reader_.joinable()) return;
    bool reading;
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      reading = !finished_;
    }
    moved_.notify_all();
    // A reader waiting on the server (a share abandoned mid-COPY) is woken by shutting the
    // connection's socket down under it: at once, even with the server unreachable (a cancel
    // request would have to reach it first). The server ends the COPY when its next row finds
    // the connection gone.
    if (reading) ::shutdown(Pq().PQsocket(conn_.get()), SHUT_RDWR);
    reader_.join();
  }

  // Never waits: until the reader has queued its last round, more may come (and Next may then
  // return the empty rest).
  bool done() const override {
    std::lock_guard lock(mu_);
    return finished_ && ready_.empty();
  }

  uint64_t rows() const override { return rows_; }

  absl::StatusOr<std::string> Next(uint64_t max_bytes) override {
    if (!reader_.joinable() && !finished_) {
      reader_ = std::thread([this, max_bytes] { Read(max_bytes); });
    }
    std::unique_lock lock(mu_);
    moved_.wait(lock, [&] { return !ready_.empty() || finished_; });
    if (ready_.empty()) return std::string();
    Round round = std::move(ready_.front());
    ready_.pop_front();
    lock.unlock();
    moved_.notify_all();
    rows_ += round.rows;
    return std::move(round.text);
  }

 private:
  struct Round {
    absl::StatusOr<std::string> text;
    uint64_t rows = 0;
  };
  // Rounds read ahead of the load, at most.
  static constexpr size_t kAhead = 2;

  void Read(uint64_t max_bytes) {
    for (bool done = false; !done;) {
      Round round{std::string(), 0};
      round.text->reserve(max_bytes + (64 << 10));
      absl::Status st = ReadCopy(conn_.get(), what_, max_bytes, *round.text, round.rows, done);
      if (st.ok()) st = CheckRows(*round.text, table_, columns_, text_ids_);
      if (!st.ok()) {
        round.text = st;
        done = true;
      }
      std::unique_lock lock(mu_);
      moved_.wait(lock, [&] { return ready_.size() < kAhead || stop_; });
      if (stop_) break;
      ready_.push_back(std::move(round));
      finished_ = done;
      lock.unlock();
      moved_.notify_all();
    }
    std::lock_guard lock(mu_);
    finished_ = true;
  }

  Conn conn_;
  const std::string table_;
  const std::string what_;
  const std::vector<std::string> columns_;
  const bool text_ids_;
  uint64_t rows_ = 0;  // handed out by Next
  mutable std::mutex mu_;
  mutable std::condition_variable moved_;
  std::deque<Round> ready_;  // under mu_, as below
  bool finished_ = false;    // the reader has queued its last round
  bool stop_ = false;
  std::thread reader_;
};

// How many streams a whole read (`lockstep run`) uses at most.
constexpr uint32_t kReadStreams = 4;

class PostgresSource final : public bsp::GraphTextSource {
 public:
  PostgresSource(std::string uri, SourceTables tables, std::string snapshot)
      : uri_(std::move(uri)), tables_(std::move(tables)), snapshot_(std::move(snapshot)) {}

  std::string EdgesName() const override {
    return absl::StrCat("table \"", bsp::SanitizeForLog(tables_.edges, 100), "\"");
  }
  std::string VerticesName() const override {
    return absl::StrCat("table \"", bsp::SanitizeForLog(tables_.vertices, 100), "\"");
  }

  absl::StatusOr<bsp::GraphText> ReadAll(bool weights) const override {
    auto conn = OpenRead(uri_, snapshot_);
    if (!conn.ok()) return conn.status();
    PGconn* c = conn->get();
    auto layout = ReadLayout(c, tables_);
    if (!layout.ok()) return layout.status();
    bsp::GraphText text;
    text.edges_name = EdgesName();
    text.vertices_name = VerticesName();
    if (layout->vertices) {
      text.has_vertices = true;
      const Rows rows = VertexRows(c, *layout);
      if (auto st =
              CopyOut(c, rows.query, absl::StrCat("reading ", text.vertices_name), text.vertices);
          !st.ok()) {
        return st;
      }
      if (auto st = CheckRows(text.vertices, tables_.vertices, rows.columns, rows.text_ids);
          !st.ok()) {
        return st;
      }
    }
    // The edges in shares read at once over connections of their own (one server process each:
    // COPY's formatting on the server is what a single stream waits for), all in this read's
    // snapshot, exported here unless the job gave one. Their order does not matter: LoadGraph
    // sorts the edges.
    std::string snapshot = snapshot_;
    const uint32_t shares = std::clamp(std::thread::hardware_concurrency(), 1u, kReadStreams);
    if (snapshot.empty() && shares > 1) {
      auto id =
          Exec(c, "SELECT pg_export_snapshot()", "exporting the read's snapshot", PGRES_TUPLES_OK);
      if (!id.ok()) return id.status();
      snapshot = Pq().PQgetvalue(id->get(), 0, 0);
    }
    const Rows rows = EdgeRows(c, *layout, weights);
    // The shares' conditions, computed once (they read only the snapshot).
    auto where = ShareConditions(c, layout->edges, tables_.src, layout->id_type, shares);
    if (!where.ok()) return where.status();
    std::vector<std::string> parts(shares);
    std::vector<absl::Status> status(shares);
    const auto read_share = [&](uint32_t r) {
      // Share 0 on this read's connection, the others on their own.
      absl::StatusOr<Conn> own = Conn();
      if (r > 0) own = OpenRead(uri_, snapshot);
      if (!own.ok()) {
        status[r] = own.status();
        return;
      }
      PGconn* sc = r == 0 ? c : own->get();
      const std::string& w = (*where)[r];
      const std::string query = w.empty() ? rows.query : absl::StrCat(rows.query, " WHERE ", w);
      status[r] = CopyOut(sc, query, absl::StrCat("reading ", text.edges_name), parts[r]);
      if (status[r].ok()) {
        status[r] = CheckRows(parts[r], tables_.edges, rows.columns, rows.text_ids);
      }
    };
    {
      std::vector<std::jthread> threads;  // joined however this block is left
      for (uint32_t r = 1; r < shares; ++r) threads.emplace_back(read_share, r);
      read_share(0);
    }
    for (const absl::Status& st : status) {
      if (!st.ok()) return st;
    }
    size_t bytes = 0;
    for (const std::string& p : parts) bytes += p.size();
    text.edges = std::move(parts[0]);
    text.edges.reserve(bytes);
    for (uint32_t r = 1; r < shares; ++r) {
      text.edges += parts[r];
      std::string().swap(parts[r]);
    }
    if (auto r = Exec(c, "COMMIT", "ending the read"); !r.ok()) return r.status();
    return text;
  }

  absl::StatusOr<std::unique_ptr<bsp::GraphTextShare>> OpenShare(bool vertices, bool weights,
                                                                 uint32_t rank,
                                                                 uint32_t size) const override {
    auto conn = OpenRead(uri_, snapshot_);
    if (!conn.ok()) return conn.status();
    PGconn* c = conn->get();
    auto layout = ReadLayout(c, tables_);
    if (!layout.ok()) return layout.status();
    if (vertices && !layout->vertices) {
      return absl::NotFoundError(absl::StrCat("no ", VerticesName()));
    }
    Rows rows = vertices ? VertexRows(c, *layout) : EdgeRows(c, *layout, weights);
    const Table& table = vertices ? *layout->vertices : layout->edges;
    auto where = ShareConditions(c, table, rows.columns[0], layout->id_type, size);
    if (!where.ok()) return where.status();
    if (rank >= where->size()) return absl::InvalidArgumentError("no such share");
    if (!(*where)[rank].empty()) absl::StrAppend(&rows.query, " WHERE ", (*where)[rank]);
    const std::string what = absl::StrCat("reading ", vertices ? VerticesName() : EdgesName());
    if (auto r = Exec(c, absl::StrCat("COPY (", rows.query, ") TO STDOUT"), what, PGRES_COPY_OUT);
        !r.ok()) {
      return r.status();
    }
    return std::make_unique<PostgresShare>(*std::move(conn),
                                           vertices ? tables_.vertices : tables_.edges,
                                           std::move(rows.columns), rows.text_ids);
  }

 private:
  // A table's query (without a condition) and the columns it reads.
  struct Rows {
    std::string query;
    std::vector<std::string> columns;
    bool text_ids = false;
  };
  Rows VertexRows(PGconn* c, const Layout& layout) const {
    return {absl::StrCat("SELECT ", Identifier(c, tables_.id), " FROM ", layout.vertices->sql),
            {tables_.id},
            layout.id_type == "text"};
  }
  Rows EdgeRows(PGconn* c, const Layout& layout, bool weights) const {
    Rows rows{absl::StrCat("SELECT ", Identifier(c, tables_.src), ", ", Identifier(c, tables_.dst)),
              {tables_.src, tables_.dst},
              layout.id_type == "text"};
    if (weights && layout.has_weight) {
      absl::StrAppend(&rows.query, ", ", Identifier(c, tables_.weight), "::float8");
      rows.columns.push_back(tables_.weight);
    }
    absl::StrAppend(&rows.query, " FROM ", layout.edges.sql);
    return rows;
  }

  const std::string uri_;
  const SourceTables tables_;
  const std::string snapshot_;
};

// The advisory lock every lockstep publisher takes in its transaction: publishers of one database
// go one at a time (so two never interleave their deletes and copies), readers never wait.
constexpr char kPublishLock[] = "SELECT pg_advisory_xact_lock(7813766102151734383)";

absl::Status CopyResults(PGconn* c, const std::string& table_sql, const std::string& results) {
  std::FILE* f = std::fopen(results.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open ", results, ": ", std::strerror(errno)));
  }
  auto started = Exec(c, absl::StrCat("COPY ", table_sql, " (id, value) FROM STDIN"),
                      "writing the results", PGRES_COPY_IN);
  if (!started.ok()) {
    std::fclose(f);
    return started.status();
  }
  std::string buf(1 << 20, '\0');
  size_t n;
  bool sent = true;
  std::string escaped;
  while (sent && (n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    // A line is "id value": neither holds a space, so every space separates the two columns.
    std::replace(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n), ' ', '\t');
    std::string_view block(buf.data(), n);
    if (block.find('\\') != std::string_view::npos) {
      // COPY's text form reads a backslash as an escape (an ID from a file may hold one).
      escaped.clear();
      for (char ch : block) {
        if (ch == '\\') escaped.push_back('\\');
        escaped.push_back(ch);
      }
      block = escaped;
    }
    sent = Pq().PQputCopyData(c, block.data(), static_cast<int>(block.size())) == 1;
  }
  const bool read_failed = std::ferror(f) != 0;
  std::fclose(f);
  const char* abort = read_failed ? "the results could not be read" : nullptr;
  if (!sent || Pq().PQputCopyEnd(c, abort) != 1) {
    return absl::UnavailableError(
        absl::StrCat("PostgreSQL: writing the results: ", Clean(Pq().PQerrorMessage(c))));
  }
  const absl::Status ended = EndCopy(c, "writing the results");
  if (read_failed) return absl::DataLossError(absl::StrCat("cannot read ", results));
  return ended;
}

}  // namespace

// A staging table for `options`' results: a logged table, since published it becomes the result
// table itself.
absl::Status MakeStage(PGconn* c, const SinkOptions& options, const std::string& stage) {
  return Exec(c,
              absl::StrCat("CREATE TABLE ", Identifier(c, stage), " (id ", options.id_type,
                           " NOT NULL, value ", options.value_type, ")"),
              absl::StrCat("creating staging table ", stage))
      .status();
}

namespace {

// Whether the result table `table` (which exists) is exactly what a publication would make of the
// staging table: then the staging table takes its place (§10). The table must be a plain table in
// the current schema, owned by this user, with columns id and value of the job's types, its one
// index the primary key on id, and nothing else attached: no other index, constraint, default,
// trigger, rule, policy, statistics object, comment, publication, inheritance, storage option, and
// no view or foreign key that depends on it. Its privileges are copied over, so they may be any
// that its owner granted.
absl::StatusOr<bool> Swappable(PGconn* c, const std::string& table, const SinkOptions& options) {
  auto r = Exec(
      c,
      "SELECT c.relkind = 'r' AND c.relpersistence = 'p' AND c.reltablespace = 0 AND c.reloptions "
      "IS NULL AND c.relreplident = 'd' AND NOT c.relrowsecurity AND NOT c.relhastriggers AND NOT "
      "c.relhasrules AND NOT c.relhassubclass AND NOT c.relispartition "
      "AND c.relnamespace = to_regnamespace(quote_ident(current_schema())) "
      "AND c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user) "
      "AND NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = c.oid) "
      "AND ARRAY(SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute "
      "  WHERE attrelid = c.oid AND attnum > 0 AND NOT attisdropped ORDER BY attnum) "
      "  = ARRAY['id ' || $2, 'value ' || $3] "
      "AND NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = c.oid AND attnum > 0 AND "
      "  (attacl IS NOT NULL OR atthasdef)) "
      "AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE (conrelid = c.oid AND contype <> 'p') OR "
      "  confrelid = c.oid) "
      "AND (SELECT count(*) FROM pg_index i WHERE i.indrelid = c.oid) = 1 "
      "AND EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum "
      "  = i.indkey[0] WHERE i.indrelid = c.oid AND i.indisprimary AND i.indnatts = 1 AND "
      "  a.attname = 'id') "
      "AND NOT EXISTS (SELECT 1 FROM pg_depend WHERE deptype = 'n' AND ((refclassid = "
      "  'pg_class'::regclass AND refobjid = c.oid) OR (refclassid = 'pg_type'::regclass AND "
      "  refobjid = c.reltype))) "
      "AND NOT EXISTS (SELECT 1 FROM pg_description WHERE classoid = 'pg_class'::regclass AND "
      "  objoid = c.oid) "
      "AND NOT EXISTS (SELECT 1 FROM pg_publication_rel WHERE prrelid = c.oid) "
      "AND NOT EXISTS (SELECT 1 FROM pg_statistic_ext WHERE stxrelid = c.oid) "
      "AND NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = c.oid) "
      "AND NOT EXISTS (SELECT 1 FROM aclexplode(c.relacl) a WHERE a.grantor <> c.relowner) "
      "AND NOT EXISTS (SELECT privilege_type FROM aclexplode(acldefault('r', c.relowner)) EXCEPT "
      "  SELECT privilege_type FROM aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) "
      "  WHERE grantee = c.relowner) "
      "FROM pg_class c WHERE c.oid = $1::regclass",
      "reading the result table's definition", PGRES_TUPLES_OK,
      {table, options.id_type, options.value_type});
  if (!r.ok()) return r.status();
  return std::string_view(Pq().PQgetvalue(r->get(), 0, 0)) == "t";
}

// The staging table `stage` becomes the result table `name` (which `exists` or not), with the
// old table's privileges; both are locked until the transaction ends.
absl::Status SwapIn(PGconn* c, const std::string& stage, const std::string& name, bool exists) {
  const std::string staged = Identifier(c, stage), table = Identifier(c, name);
  const std::string index = Identifier(c, stage + "_pkey");
  if (auto r = Exec(
          c, absl::StrCat("ALTER TABLE ", staged, " ADD CONSTRAINT ", index, " PRIMARY KEY (id)"),
          "indexing the staged results");
      !r.ok()) {
    return r.status();
  }
  if (exists) {
    auto grants = Exec(c,
                       "SELECT format('GRANT %s ON %s TO %s%s', a.privilege_type, $2::text, CASE "
                       "WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid("
                       "a.grantee)) END, CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE "
                       "'' END) FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = "
                       "$1::regclass AND a.grantee <> c.relowner",
                       "reading the result table's privileges", PGRES_TUPLES_OK, {table, staged});
    if (!grants.ok()) return grants.status();
    for (int i = 0; i < Pq().PQntuples(grants->get()); ++i) {
      if (auto r = Exec(c, Pq().PQgetvalue(grants->get(), i, 0),
                        "granting the result table's privileges");
          !r.ok()) {
        return r.status();
      }
    }
    if (auto r = Exec(c, absl::StrCat("DROP TABLE ", table), "replacing the previous results");
        !r.ok()) {
      return r.status();
    }
  }
  if (auto r = Exec(c, absl::StrCat("ALTER TABLE ", staged, " RENAME TO ", table),
                    "publishing the staged results");
      !r.ok()) {
    return r.status();
  }
  // The index takes the name PostgreSQL gives a primary key, unless another relation holds it.
  const std::string pkey = name + "_pkey";
  auto taken = Exec(c, "SELECT to_regclass(quote_ident($1)) IS NOT NULL",
                    "naming the result table's index", PGRES_TUPLES_OK, {pkey});
  if (!taken.ok()) return taken.status();
  if (std::string_view(Pq().PQgetvalue(taken->get(), 0, 0)) == "t") return absl::OkStatus();
  return Exec(c, absl::StrCat("ALTER INDEX ", index, " RENAME TO ", Identifier(c, pkey)),
              "naming the result table's index")
      .status();
}

}  // namespace

// When the result table is missing, or is exactly what the staging table would make of it
// (Swappable), the staging table is renamed into its place; otherwise the table's rows are
// replaced in place. Either way a reader sees the previous results or the new ones whole.
absl::Status Publish(PGconn* c, const SinkOptions& options, const std::string& stage,
                     uint64_t vertices, const JobRecord& record, bool* already) {
  if (auto r = Exec(c, kPublishLock, "starting to publish", PGRES_TUPLES_OK); !r.ok()) {
    return r.status();
  }
  if (auto r = Exec(c,
                    "CREATE TABLE IF NOT EXISTS lockstep_jobs (job_id text PRIMARY KEY, app text "
                    "NOT NULL, graph text NOT NULL, params jsonb NOT NULL, out_table text NOT "
                    "NULL, vertices bigint NOT NULL, supersteps bigint NOT NULL, load_seconds "
                    "double precision NOT NULL, compute_seconds double precision NOT NULL, "
                    "published_at timestamptz NOT NULL DEFAULT now())",
                    "creating table lockstep_jobs");
      !r.ok()) {
    return r.status();
  }
  auto seen = Exec(c, "SELECT 1 FROM lockstep_jobs WHERE job_id = $1", "reading lockstep_jobs",
                   PGRES_TUPLES_OK, {record.job_id});
  if (!seen.ok()) return seen.status();
  if (Pq().PQntuples(seen->get()) > 0) {
    if (already != nullptr) *already = true;
    return Exec(c, "ROLLBACK", "ending the publication").status();
  }
  const std::string staged = Identifier(c, stage);
  // Every part is there, once: the staging table holds as many rows as the job has vertices.
  auto count = Exec(c, absl::StrCat("SELECT count(*) FROM ", staged), "counting the staged rows",
                    PGRES_TUPLES_OK);
  if (!count.ok()) return count.status();
  const uint64_t rows = std::strtoull(Pq().PQgetvalue(count->get(), 0, 0), nullptr, 10);
  if (rows != vertices) {
    return absl::DataLossError(absl::StrCat("PostgreSQL: staging table ", staged, " holds ", rows,
                                            " rows; the job has ", vertices, " vertices"));
  }
  // Found as it was made: the name as given, quoted (not parsed as SQL, which would fold case).
  const std::string table = Identifier(c, options.table);
  auto t = Describe(c, table, "--out-table");
  if (!t.ok() && !absl::IsNotFound(t.status())) return t.status();
  bool swap = !t.ok();
  if (t.ok()) {
    for (const char* column : {"id", "value"}) {
      if (!t->columns.contains(column)) {
        return absl::InvalidArgumentError(
            absl::StrCat("PostgreSQL: result table ", table, " has no column \"", column,
                         "\" (lockstep writes id and value; --out-table names another table)"));
      }
    }
    auto swappable = Swappable(c, t->sql, options);
    if (!swappable.ok()) return swappable.status();
    swap = *swappable;
  }
  if (swap) {
    if (auto st = SwapIn(c, stage, options.table, t.ok()); !st.ok()) return st;
  } else {
    for (const auto& [sql, what] :
         {std::pair{absl::StrCat("DELETE FROM ", t->sql), "removing the previous results"},
          std::pair{
              absl::StrCat("INSERT INTO ", t->sql, " (id, value) SELECT id, value FROM ", staged),
              "publishing the staged results"},
          std::pair{absl::StrCat("DROP TABLE ", staged), "dropping the staging table"}}) {
      if (auto r = Exec(c, sql, what); !r.ok()) return r.status();
    }
  }
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : record.params) params[k] = v;
  if (auto r = Exec(c,
                    "INSERT INTO lockstep_jobs (job_id, app, graph, params, out_table, vertices, "
                    "supersteps, load_seconds, compute_seconds) VALUES ($1, $2, $3, $4::jsonb, $5, "
                    "$6, $7, $8, $9)",
                    "recording the job in lockstep_jobs", PGRES_COMMAND_OK,
                    {record.job_id, record.app, record.graph, params.dump(), options.table,
                     std::to_string(record.vertices), std::to_string(record.supersteps),
                     absl::StrCat(record.load_seconds), absl::StrCat(record.compute_seconds)});
      !r.ok()) {
    return r.status();
  }
  return Exec(c, "COMMIT", "publishing").status();
}

bool IsPostgresUri(std::string_view text) {
  return text.starts_with("postgresql://") || text.starts_with("postgres://");
}

// The options a URI gives (keyword -> value, those with a value), as libpq parses it.
static absl::StatusOr<std::map<std::string, std::string>> UriOptions(std::string_view uri) {
  if (auto st = LoadLibPq(); !st.ok()) return st;
  char* error = nullptr;
  PQconninfoOption* options = Pq().PQconninfoParse(std::string(uri).c_str(), &error);
  if (options == nullptr) {
    std::string why = error == nullptr ? "out of memory" : Clean(error);
    Pq().PQfreemem(error);
    return absl::InvalidArgumentError(absl::StrCat("not a PostgreSQL URI: ", why));
  }
  std::map<std::string, std::string> given;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val != nullptr && o->val[0] != '\0') given[o->keyword] = o->val;
  }
  Pq().PQconninfoFree(options);
  return given;
}

absl::Status CheckUri(std::string_view uri, const std::string& flag) {
  if (auto st = LoadLibPq(); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat(flag, ": ", st.message()));
  }
  auto options = UriOptions(uri);
  if (!options.ok())
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", options.status().message()));
  if (options->contains("password")) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag,
        ": the URI holds a password, which would show in process lists and logs; give it in "
        "PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass) instead"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> UriPaths(std::string_view uri) {
  // Keywords of libpq 15 and 16 that name no local path.
  static const std::set<std::string, std::less<>> kNoPath = {"hostaddr",
                                                             "port",
                                                             "dbname",
                                                             "user",
                                                             "password",
                                                             "connect_timeout",
                                                             "client_encoding",
                                                             "options",
                                                             "application_name",
                                                             "fallback_application_name",
                                                             "keepalives",
                                                             "keepalives_idle",
                                                             "keepalives_interval",
                                                             "keepalives_count",
                                                             "tcp_user_timeout",
                                                             "sslmode",
                                                             "sslcompression",
                                                             "sslsni",
                                                             "sslpassword",
                                                             "sslcertmode",
                                                             "requirepeer",
                                                             "ssl_min_protocol_version",
                                                             "ssl_max_protocol_version",
                                                             "gssencmode",
                                                             "krbsrvname",
                                                             "gsslib",
                                                             "gssdelegation",
                                                             "target_session_attrs",
                                                             "load_balance_hosts",
                                                             "channel_binding",
                                                             "require_auth",
                                                             "replication"};
  static const std::set<std::string, std::less<>> kFiles = {"sslcert", "sslkey",    "sslrootcert",
                                                            "sslcrl",  "sslcrldir", "passfile"};
  if (auto st = LoadLibPq(); !st.ok()) return st;  // fails closed
  std::vector<std::pair<std::string, std::string>> paths;
  auto options = UriOptions(uri);
  if (!options.ok()) return paths;
  for (const auto& [keyword, value] : *options) {
    if (kNoPath.contains(keyword)) continue;
    if (keyword == "host") {
      // A list; an entry that starts with '/' is a socket's directory, '@' an abstract socket.
      const std::vector<std::string> hosts = absl::StrSplit(value, ',');
      for (const std::string& host : hosts) {
        if (host.starts_with('/')) {
          paths.emplace_back("host", host);
        } else if (host.starts_with('@')) {
          return absl::PermissionDeniedError("names an abstract Unix socket as its host");
        }
      }
    } else if (kFiles.contains(keyword)) {
      if (keyword == "sslkey" && value.find(':') != std::string::npos) {
        return absl::PermissionDeniedError(
            "names its sslkey as an OpenSSL engine's (a colon), which loads code");
      }
      paths.emplace_back(keyword, value);
    } else {
      return absl::PermissionDeniedError(
          absl::StrCat("names \"", keyword, "\", which a worker's --data-root cannot confine"));
    }
  }
  return paths;
}

std::shared_ptr<const bsp::GraphTextSource> OpenSource(std::string uri, SourceTables tables,
                                                       std::string snapshot) {
  return std::make_shared<PostgresSource>(std::move(uri), std::move(tables), std::move(snapshot));
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

absl::Status AttachSource(bsp::GraphSource& graph) {
  if (!IsPostgresUri(graph.path)) return absl::OkStatus();
  if (auto st = CheckUri(graph.path, "the job's graph"); !st.ok()) return st;
  auto snapshot = graph.options.find(kSnapshotOption);
  graph.text = OpenSource(graph.path, TablesFromOptions(graph.options),
                          snapshot == graph.options.end() ? "" : snapshot->second);
  return absl::OkStatus();
}

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

absl::StatusOr<std::string> IdType(const std::string& uri, const SourceTables& tables) {
  auto conn = Connect(uri);
  if (!conn.ok()) return conn.status();
  auto layout = ReadLayout(conn->get(), tables);
  if (!layout.ok()) return layout.status();
  return layout->id_type;
}

absl::Status PublishResults(const SinkOptions& options, const std::string& results,
                            const JobRecord& record, bool* already) {
  if (already != nullptr) *already = false;
  // Staged under a name of its own, as a distributed job's parts are, then published the same way.
  std::random_device random;
  const std::string stage =
      absl::StrCat("lockstep_stage_run_", absl::Hex(random(), absl::kZeroPad8),
                   absl::Hex(random(), absl::kZeroPad8));
  auto conn = Connect(options.uri);
  if (!conn.ok()) return conn.status();
  PGconn* c = conn->get();
  // All in the one transaction: a failure anywhere leaves no staging table either.
  if (auto r = Exec(c, "BEGIN", "starting to publish"); !r.ok()) return r.status();
  if (auto st = MakeStage(c, options, stage); !st.ok()) return st;
  if (auto st = CopyResults(c, Identifier(c, stage), results); !st.ok()) return st;
  return Publish(c, options, stage, record.vertices, record, already);
}

absl::Status CopyIntoStage(const std::string& uri, const std::string& stage,
                           const std::string& results) {
  auto conn = Connect(uri);
  if (!conn.ok()) return conn.status();
  PGconn* c = conn->get();
  // One transaction per worker: its rows are in the staging table whole or not at all.
  if (auto r = Exec(c, "BEGIN", "staging the results"); !r.ok()) return r.status();
  if (auto st = CopyResults(c, Identifier(c, stage), results); !st.ok()) return st;
  return Exec(c, "COMMIT", "staging the results").status();
}

}  // namespace lockstep::db
