// PostgreSQL as a result sink (docs/design.md §10): a staging table, then one transaction that
// checks it, puts its rows in the result table's place (a swap, or a rewrite in place) and records
// the job in lockstep_jobs. `run` stages and publishes on one connection; a distributed job's
// workers copy into the stage (CopyIntoStage) and its master publishes it (stage.cc).
#include "sink.h"

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "connection.h"
#include "copy.h"
#include "libpq.h"
#include "lockstep/db/postgres.h"
#include "nlohmann/json.hpp"
#include "tables.h"

namespace lockstep::db {
namespace {

// The advisory lock every lockstep publisher takes in its transaction: publishers of one database
// go one at a time (so two never interleave their deletes and copies), readers never wait.
constexpr char kPublishLock[] = "SELECT pg_advisory_xact_lock(7813766102151734383)";

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

// Takes the publishers' lock and tells whether the job was published before (its row in
// lockstep_jobs, made here when missing).
absl::StatusOr<bool> PublishedBefore(PGconn* c, const JobRecord& record) {
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
  return Pq().PQntuples(seen->get()) > 0;
}

// Every part is there, once: the staging table holds as many rows as the job has vertices.
absl::Status CheckStagedRows(PGconn* c, const std::string& staged, uint64_t vertices) {
  auto count = Exec(c, absl::StrCat("SELECT count(*) FROM ", staged), "counting the staged rows",
                    PGRES_TUPLES_OK);
  if (!count.ok()) return count.status();
  const uint64_t rows = std::strtoull(Pq().PQgetvalue(count->get(), 0, 0), nullptr, 10);
  if (rows != vertices) {
    return absl::DataLossError(absl::StrCat("PostgreSQL: staging table ", staged, " holds ", rows,
                                            " rows; the job has ", vertices, " vertices"));
  }
  return absl::OkStatus();
}

// The staged rows become the result table's: when the result table is missing, or is exactly what
// the staging table would make of it (Swappable), the staging table is renamed into its place;
// otherwise the table's rows are replaced in place. Either way a reader sees the previous results
// or the new ones whole.
absl::Status ReplaceResults(PGconn* c, const SinkOptions& options, const std::string& stage) {
  const std::string staged = Identifier(c, stage);
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
  if (swap) return SwapIn(c, stage, options.table, t.ok());
  for (const auto& [sql, what] :
       {std::pair{absl::StrCat("DELETE FROM ", t->sql), "removing the previous results"},
        std::pair{
            absl::StrCat("INSERT INTO ", t->sql, " (id, value) SELECT id, value FROM ", staged),
            "publishing the staged results"},
        std::pair{absl::StrCat("DROP TABLE ", staged), "dropping the staging table"}}) {
    if (auto r = Exec(c, sql, what); !r.ok()) return r.status();
  }
  return absl::OkStatus();
}

// The job's row in lockstep_jobs.
absl::Status RecordJob(PGconn* c, const SinkOptions& options, const JobRecord& record) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : record.params) params[k] = v;
  return Exec(c,
              "INSERT INTO lockstep_jobs (job_id, app, graph, params, out_table, vertices, "
              "supersteps, load_seconds, compute_seconds) VALUES ($1, $2, $3, $4::jsonb, $5, "
              "$6, $7, $8, $9)",
              "recording the job in lockstep_jobs", PGRES_COMMAND_OK,
              {record.job_id, record.app, record.graph, params.dump(), options.table,
               std::to_string(record.vertices), std::to_string(record.supersteps),
               absl::StrCat(record.load_seconds), absl::StrCat(record.compute_seconds)})
      .status();
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

absl::StatusOr<Publication> Publish(PGconn* c, const SinkOptions& options, const std::string& stage,
                                    uint64_t vertices, const JobRecord& record) {
  auto before = PublishedBefore(c, record);
  if (!before.ok()) return before.status();
  if (*before) {
    if (auto r = Exec(c, "ROLLBACK", "ending the publication"); !r.ok()) return r.status();
    return Publication::kPublishedBefore;
  }
  if (auto st = CheckStagedRows(c, Identifier(c, stage), vertices); !st.ok()) return st;
  if (auto st = ReplaceResults(c, options, stage); !st.ok()) return st;
  if (auto st = RecordJob(c, options, record); !st.ok()) return st;
  if (auto r = Exec(c, "COMMIT", "publishing"); !r.ok()) return r.status();
  return Publication::kPublished;
}

absl::StatusOr<Publication> PublishResults(const SinkOptions& options, const std::string& results,
                                           const JobRecord& record) {
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
  return Publish(c, options, stage, record.vertices, record);
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
