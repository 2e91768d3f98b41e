// PostgreSQL as a graph source (docs/design.md §10): a GraphTextSource whose text is the tables'
// rows as COPY gives them, checked first; read whole (`run`) or in shares, one per worker, each
// by a condition the server evaluates.
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "connection.h"
#include "copy.h"
#include "libpq.h"
#include "lockstep/bsp/text.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/db/postgres.h"
#include "lockstep/partition/range.h"
#include "tables.h"

namespace lockstep::db {
namespace {

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

// The P-1 bounds between the shares of integer IDs in column `col` (quoted): quantiles of the
// column, from a block sample (1%, a fixed seed) when it holds enough rows, else from every row.
// Both read only the snapshot, so every worker computes the same bounds; the shares are then about
// equal in rows, however the IDs are spread. None when the column holds no ID.
absl::StatusOr<std::optional<std::vector<std::string>>> QuantileBounds(PGconn* c,
                                                                       const Table& table,
                                                                       const std::string& col,
                                                                       uint32_t size) {
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
  if (Pq().PQgetisnull(q->get(), 0, 1)) return std::nullopt;
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
  return bounds;
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
  auto bounds = QuantileBounds(c, table, col, size);
  if (!bounds.ok()) return bounds.status();
  if (!*bounds) {  // no rows, or only NULL IDs: share 0 reads them all
    where.assign(size, "false");
    where[0] = "true";
    return where;
  }
  // The first and last shares are open-ended, so no row falls outside every share.
  for (uint32_t r = 0; r < size; ++r) {
    std::string condition;
    if (r > 0) absl::StrAppend(&condition, col, " >= ", (**bounds)[r - 1]);
    if (r + 1 < size) {
      absl::StrAppend(&condition, condition.empty() ? "" : " AND ", col, " < ", (**bounds)[r]);
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
    bool done = false;  // the last round: the COPY ended, or failed
  };
  // Rounds read ahead of the load, at most.
  static constexpr size_t kAhead = 2;

  // The next round of rows, read and checked; an error is the last round.
  Round ReadRound(uint64_t max_bytes) {
    std::string buffer;
    buffer.reserve(max_bytes + (64 << 10));
    auto read = ReadCopy(conn_.get(), what_, max_bytes, std::move(buffer));
    if (!read.ok()) return Round{read.status(), 0, true};
    Round round{std::move(read->text), read->rows, read->done};
    if (auto st = CheckRows(*round.text, table_, columns_, text_ids_); !st.ok()) {
      round.text = st;
      round.done = true;
    }
    return round;
  }

  void Read(uint64_t max_bytes) {
    for (bool done = false; !done;) {
      Round round = ReadRound(max_bytes);
      done = round.done;
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
      auto vertices = ReadVertices(c, *layout);
      if (!vertices.ok()) return vertices.status();
      text.vertices = *std::move(vertices);
    }
    auto edges = ReadEdges(c, *layout, weights);
    if (!edges.ok()) return edges.status();
    text.edges = *std::move(edges);
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
  // The vertex table's rows, checked.
  absl::StatusOr<std::string> ReadVertices(PGconn* c, const Layout& layout) const {
    const Rows rows = VertexRows(c, layout);
    auto text = CopyOut(c, rows.query, absl::StrCat("reading ", VerticesName()));
    if (!text.ok()) return text.status();
    if (auto st = CheckRows(*text, tables_.vertices, rows.columns, rows.text_ids); !st.ok()) {
      return st;
    }
    return text;
  }

  // The edge table's rows, checked: in shares read at once over connections of their own (one
  // server process each: COPY's formatting on the server is what a single stream waits for), all
  // in the snapshot of the read on `c`, exported here unless the job gave one. Their order does not
  // matter: LoadGraph sorts the edges.
  absl::StatusOr<std::string> ReadEdges(PGconn* c, const Layout& layout, bool weights) const {
    std::string snapshot = snapshot_;
    const uint32_t shares = std::clamp(std::thread::hardware_concurrency(), 1u, kReadStreams);
    if (snapshot.empty() && shares > 1) {
      auto id =
          Exec(c, "SELECT pg_export_snapshot()", "exporting the read's snapshot", PGRES_TUPLES_OK);
      if (!id.ok()) return id.status();
      snapshot = Pq().PQgetvalue(id->get(), 0, 0);
    }
    const Rows rows = EdgeRows(c, layout, weights);
    // The shares' conditions, computed once (they read only the snapshot).
    auto where = ShareConditions(c, layout.edges, tables_.src, layout.id_type, shares);
    if (!where.ok()) return where.status();
    std::vector<absl::StatusOr<std::string>> parts(shares);
    const auto read_share = [&](uint32_t r) {
      // Share 0 on this read's connection, the others on their own.
      absl::StatusOr<Conn> own = Conn();
      if (r > 0) own = OpenRead(uri_, snapshot);
      if (!own.ok()) {
        parts[r] = own.status();
        return;
      }
      PGconn* sc = r == 0 ? c : own->get();
      const std::string& w = (*where)[r];
      const std::string query = w.empty() ? rows.query : absl::StrCat(rows.query, " WHERE ", w);
      parts[r] = CopyOut(sc, query, absl::StrCat("reading ", EdgesName()));
      if (!parts[r].ok()) return;
      if (auto st = CheckRows(*parts[r], tables_.edges, rows.columns, rows.text_ids); !st.ok()) {
        parts[r] = st;
      }
    };
    {
      std::vector<std::jthread> threads;  // joined however this block is left
      for (uint32_t r = 1; r < shares; ++r) threads.emplace_back(read_share, r);
      read_share(0);
    }
    return Concatenate(parts);
  }

  // The shares' text, one after the other (each share's freed once copied); or the first error.
  static absl::StatusOr<std::string> Concatenate(std::vector<absl::StatusOr<std::string>>& parts) {
    size_t bytes = 0;
    for (const auto& p : parts) {
      if (!p.ok()) return p.status();
      bytes += p->size();
    }
    std::string text = *std::move(parts[0]);
    text.reserve(bytes);
    for (size_t r = 1; r < parts.size(); ++r) {
      text += *parts[r];
      std::string().swap(*parts[r]);
    }
    return text;
  }

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

}  // namespace

std::shared_ptr<const bsp::GraphTextSource> OpenSource(std::string uri, SourceTables tables,
                                                       std::string snapshot) {
  return std::make_shared<PostgresSource>(std::move(uri), std::move(tables), std::move(snapshot));
}

absl::Status AttachSource(bsp::GraphSource& graph) {
  if (!IsPostgresUri(graph.path)) return absl::OkStatus();
  if (auto st = CheckUri(graph.path, "the job's graph"); !st.ok()) return st;
  auto snapshot = graph.options.find(kSnapshotOption);
  graph.text = OpenSource(graph.path, TablesFromOptions(graph.options),
                          snapshot == graph.options.end() ? "" : snapshot->second);
  return absl::OkStatus();
}

}  // namespace lockstep::db
