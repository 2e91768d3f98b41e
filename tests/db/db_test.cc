// PostgreSQL as graph source and result sink (docs/design.md §10), against a real server started
// for the suite (util/postgres_server.h) and the `lockstep` command as a real process: every app
// reads the same graph from tables as from a file, byte for byte; results are published in one
// transaction that a concurrent reader never sees half done; bad tables, rows and servers fail
// with errors naming them and leave the previous results alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "db/libpq.h"
#include "lockstep/db/postgres.h"
#include "suite_server.h"
#include "util/lockstep_process.h"
#include "util/postgres_server.h"
#include "util/temp_dir.h"

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) { return test::ReadWholeFile(path); }

using test::PartLines;
using test::Process;
using test::SortedLines;

// The binary's one server (suite_server.h).
test::PostgresServer* server = nullptr;

class DbTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server = &test::SuiteServer(); }

  // Runs `lockstep args...` (with `env` added to the environment), waiting at most 120 s.
  Process Run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    return procs_.Run(args, env);
  }
  pid_t StartMaster(const std::string& name, std::vector<std::string> args,
                    const std::string& listen = "127.0.0.1:0",
                    const std::vector<std::string>& env = {}) {
    return procs_.StartMaster(name, std::move(args), listen, env);
  }
  std::vector<pid_t> StartWorkers(const std::string& name, uint32_t n,
                                  const std::vector<std::string>& args, uint32_t first = 0) {
    return procs_.StartWorkers(name, n, args, first);
  }
  std::vector<Process> WaitWorkers(const std::string& name, const std::vector<pid_t>& workers) {
    return procs_.WaitWorkers(name, workers);
  }
  pid_t Start(const std::vector<std::string>& args, const std::string& err_name,
              const std::vector<std::string>& env = {}) {
    return procs_.Start(args, err_name, env);
  }
  Process Wait(pid_t pid, const std::string& err_name) { return procs_.Wait(pid, err_name); }

  // A master and `n` workers running one job of `args` (the master's options after its
  // --listen); the sorted lines of the parts it publishes in `out`, and what each worker logged.
  struct Cluster {
    Process master;
    std::vector<Process> workers;
    std::vector<std::string> lines;
  };
  Cluster RunCluster(uint32_t n, std::vector<std::string> args, const std::string& out) {
    const bool files = !db::IsPostgresUri(out);
    if (files) std::filesystem::remove_all(out);
    args.insert(args.end(), {"--min-workers", std::to_string(n), "--out", out});
    const pid_t master = StartMaster("cluster", args);
    const std::vector<pid_t> workers =
        StartWorkers("cluster", n, {"--max-jobs", "1", "--threads", "1"});
    Cluster c;
    c.master = Wait(master, "cluster.err");
    c.workers = WaitWorkers("cluster", workers);
    if (c.master.exit_code == 0 && files) c.lines = PartLines(out);
    return c;
  }

  // Loads the edge list `el` ("src dst" lines) into table `name` (src, dst of `type`).
  void LoadEdges(const std::string& name, const std::string& type, const std::string& el) {
    std::string tsv = el;
    for (char& c : tsv) c = c == ' ' ? '\t' : c;
    const std::string file = server->Write(name + ".tsv", tsv);
    server->Sql("DROP TABLE IF EXISTS " + name + "; CREATE TABLE " + name + " (src " + type +
                ", dst " + type + "); COPY " + name + " FROM '" + file + "';");
  }

  // The rows of `query` as COPY prints them, tabs turned into spaces: a result file's lines.
  std::string Rows(const std::string& query) {
    std::string out = server->Sql("COPY (" + query + ") TO STDOUT;");
    for (char& c : out) c = c == '\t' ? ' ' : c;
    return out;
  }

  test::TempDir dir_{"lockstep-db"};
  test::LockstepProcesses procs_{dir_, LOCKSTEP_BINARY};
};

// libpq is opened on first use (db/libpq.h), not linked into the binary: what it opens
// works, and a library that is not there is an error naming it.
TEST(LibPqTest, OpensTheClientLibraryOrNamesTheOneItCouldNot) {
  db::LibPq lib;
  ASSERT_TRUE(db::OpenLibPq(db::kLibPqSoname, lib).ok());
  char* error = nullptr;
  PQconninfoOption* options = lib.PQconninfoParse("postgresql://someone@localhost/db", &error);
  ASSERT_NE(options, nullptr) << (error == nullptr ? "" : error);
  std::string user;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (std::string_view(o->keyword) == "user" && o->val != nullptr) user = o->val;
  }
  lib.PQconninfoFree(options);
  EXPECT_EQ(user, "someone");
  EXPECT_TRUE(db::LoadLibPq().ok());

  db::LibPq missing;
  const absl::Status st = db::OpenLibPq("libpq-not-installed.so.5", missing);
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("cannot load the client library libpq-not-installed.so.5"));
}

// A machine without libpq: a PostgreSQL --graph or --out is a configuration error (exit 2) that
// names the flag and the library, before anything is read; a job on files runs, never opening it.
TEST(LibPqTest, WithoutLibPqADatabaseFlagIsAUsageErrorAndFilesStillRun) {
  test::TempDir dir("lockstep-no-libpq");
  test::LockstepProcesses procs(dir, LOCKSTEP_BINARY);
  const std::vector<std::string> env = {std::string("LD_PRELOAD=") + NO_LIBPQ_SHIM,
                                        "ASAN_OPTIONS=verify_asan_link_order=0"};
  const std::string graph = std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el";
  const Process in = procs.Run(
      {"run", "pagerank", "--graph", "postgresql://someone@localhost/db", "--out", dir.File("a")},
      env);
  EXPECT_EQ(in.exit_code, 2) << in.err;
  EXPECT_THAT(in.err, HasSubstr("--graph: PostgreSQL: cannot load the client library libpq.so.5"));
  const Process out = procs.Run(
      {"run", "pagerank", "--graph", graph, "--out", "postgresql://someone@localhost/db"}, env);
  EXPECT_EQ(out.exit_code, 2) << out.err;
  EXPECT_THAT(out.err, HasSubstr("--out: PostgreSQL: cannot load the client library libpq.so.5"));
  const Process file =
      procs.Run({"run", "pagerank", "--graph", graph, "--out", dir.File("ranks")}, env);
  EXPECT_EQ(file.exit_code, 0) << file.err;
  EXPECT_FALSE(ReadFile(dir.File("ranks")).empty());
}

constexpr const char* kApps[][2] = {{"pagerank", ""},      {"wcc", ""},      {"cdlp", ""},
                                    {"lcc", ""},           {"coloring", ""}, {"bfs", "--source=1"},
                                    {"sssp", "--source=1"}};

std::vector<std::string> AppArgs(const char* const (&app)[2], const std::string& graph,
                                 const std::string& out) {
  std::vector<std::string> args = {"run", app[0], "--graph", graph, "--out", out};
  if (app[1][0] != '\0') args.push_back(app[1]);
  return args;
}

TEST_F(DbTest, EveryAppReadsTheSameGraphFromTablesAsFromFiles) {
  // A Kronecker graph's edges in random row order, and a vertex table with three isolated
  // vertices: the same graph as a Graphalytics .v/.e pair with its edges sorted.
  LoadEdges("k_edges", "bigint", ReadFile(std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el"));
  server->Sql(
      "CREATE TEMP TABLE shuffled AS SELECT * FROM k_edges ORDER BY random();"
      "TRUNCATE k_edges; INSERT INTO k_edges SELECT * FROM shuffled;"
      "DROP TABLE IF EXISTS k_vertices; CREATE TABLE k_vertices (id bigint PRIMARY KEY);"
      "INSERT INTO k_vertices SELECT src FROM k_edges UNION SELECT dst FROM k_edges "
      "UNION VALUES (5000000), (5000001), (5000002);");
  dir_.Write("g.v", Rows("SELECT id FROM k_vertices ORDER BY id"));
  const std::string e = dir_.Write("g.e", Rows("SELECT src, dst FROM k_edges ORDER BY src, dst"));
  const std::string props =
      dir_.Write("g.properties",
                 "graph.g.vertex-file = g.v\ngraph.g.edge-file = g.e\ngraph.g.directed = true\n");
  const std::string uri = server->Uri();
  for (const auto& app : kApps) {
    SCOPED_TRACE(app[0]);
    std::vector<std::string> db = AppArgs(app, uri, dir_.File("db.out"));
    for (const char* flag : {"--db-edges-table=k_edges", "--db-vertices-table=k_vertices"}) {
      db.push_back(flag);
    }
    const Process from_db = Run(db);
    ASSERT_EQ(from_db.exit_code, 0) << from_db.err;
    const Process from_file = Run(AppArgs(app, props, dir_.File("file.out")));
    ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
    const std::string got = ReadFile(dir_.File("db.out"));
    EXPECT_EQ(got, ReadFile(dir_.File("file.out")));
    EXPECT_THAT(got, HasSubstr("\n5000002 "));  // the isolated vertices are there
  }
  // Without a vertex table the vertices are the edges' ends: the same as the sorted edge list.
  const Process db = Run({"run", "pagerank", "--graph", uri, "--db-edges-table=k_edges",
                          "--db-vertices-table=k_vertices_absent", "--out", dir_.File("x")});
  EXPECT_EQ(db.exit_code, 1);
  EXPECT_THAT(db.err, HasSubstr("no table \"k_vertices_absent\" (--db-vertices-table)"));
  server->Sql("ALTER TABLE k_vertices RENAME TO k_vertices_gone;");
  server->Sql("DROP TABLE IF EXISTS vertices;");
  const Process edges_only =
      Run({"run", "pagerank", "--graph", uri, "--db-edges-table=k_edges", "--out", dir_.File("a")});
  ASSERT_EQ(edges_only.exit_code, 0) << edges_only.err;
  ASSERT_EQ(Run({"run", "pagerank", "--graph", e, "--out", dir_.File("b")}).exit_code, 0);
  EXPECT_EQ(ReadFile(dir_.File("a")), ReadFile(dir_.File("b")));
}

TEST_F(DbTest, UuidAndTextIdsAndWeightsReadAsTheirFiles) {
  const std::string el =
      "ant bee 1.5\nbee cat 0.25\ncat ant 2\ncat dog 1e-3\ndog bee 7\nbee ant 0.5\neel eel 1\n";
  std::string tsv = el;
  for (char& c : tsv) c = c == ' ' ? '\t' : c;
  const std::string file = server->Write("words.tsv", tsv);
  server->Sql(
      "DROP TABLE IF EXISTS words; CREATE TABLE words (a text, b varchar(10), w real);"
      "COPY words FROM '" +
      file +
      "';"
      "DROP TABLE IF EXISTS uuids; CREATE TABLE uuids (s uuid, d uuid, weight numeric);"
      "INSERT INTO uuids SELECT md5(a)::uuid, md5(b)::uuid, w FROM words;");
  const std::string uri = server->Uri();
  struct Case {
    std::string table, src, dst, weight, order;
  };
  for (const Case& c : {Case{"words", "a", "b", "w", "a COLLATE \"C\", b COLLATE \"C\", w"},
                        Case{"uuids", "s", "d", "weight", "s, d, weight"}}) {
    SCOPED_TRACE(c.table);
    const std::string sorted =
        dir_.Write(c.table + ".el", Rows("SELECT " + c.src + ", " + c.dst + ", " + c.weight +
                                         "::float8 FROM " + c.table + " ORDER BY " + c.order));
    const std::string source =
        c.table == "words" ? "--source=ant"
                           : "--source=" + server->Sql("SELECT md5('ant')::uuid").substr(0, 36);
    for (const std::string app : {"pagerank", "wcc", "sssp"}) {
      std::vector<std::string> db = {"run",
                                     app,
                                     "--graph",
                                     uri,
                                     "--db-edges-table=" + c.table,
                                     "--db-src-column=" + c.src,
                                     "--db-dst-column=" + c.dst,
                                     "--db-weight-column=" + c.weight,
                                     "--out",
                                     dir_.File("db.out")};
      std::vector<std::string> fl = {"run", app, "--graph", sorted, "--out", dir_.File("f.out")};
      if (app == "sssp") {
        db.push_back(source);
        fl.push_back(source);
      }
      const Process a = Run(db);
      ASSERT_EQ(a.exit_code, 0) << a.err;
      const Process b = Run(fl);
      ASSERT_EQ(b.exit_code, 0) << b.err;
      EXPECT_EQ(ReadFile(dir_.File("db.out")), ReadFile(dir_.File("f.out"))) << app;
    }
  }
}

TEST_F(DbTest, PublishedResultsAreExactlyTheJobsAndItIsRecorded) {
  LoadEdges("p_edges", "bigint", ReadFile(std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el"));
  // Previous scores, one of a vertex that is gone from the graph.
  server->Sql(
      "DROP TABLE IF EXISTS scores; CREATE TABLE scores (id bigint PRIMARY KEY, value double "
      "precision); INSERT INTO scores VALUES (1, 0.5), (99999999, 0.5);");
  const std::string uri = server->Uri();
  const Process p = Run({"run", "pagerank", "--graph", uri, "--db-edges-table=p_edges", "--out",
                         uri, "--out-table=scores"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  ASSERT_EQ(Run({"run", "pagerank", "--graph", uri, "--db-edges-table=p_edges", "--out",
                 dir_.File("file.out")})
                .exit_code,
            0);
  // The file lists vertices in ID order, as the table's rows sorted by ID come.
  std::string table = Rows("SELECT id, value FROM scores ORDER BY id");
  std::string file = ReadFile(dir_.File("file.out"));
  // COPY prints doubles in their shortest exact form; compare as numbers.
  std::istringstream a(table), b(file);
  size_t rows = 0;
  for (std::string ia, ib; a >> ia && b >> ib; ++rows) {
    ASSERT_EQ(ia, ib);
    double va, vb;
    a >> va;
    b >> vb;
    ASSERT_EQ(va, vb) << ia;
  }
  EXPECT_EQ(server->Sql("SELECT count(*) FROM scores"), std::to_string(rows) + "\n");
  EXPECT_EQ(server->Sql("SELECT count(*) FROM scores WHERE id = 99999999"), "0\n");
  EXPECT_EQ(server->Sql("SELECT app, out_table, vertices, params->>'damping' FROM lockstep_jobs "
                        "WHERE out_table = 'scores'"),
            "pagerank|scores|" + std::to_string(rows) + "|0.85\n");
  // Integer values and label values take the column types of their kind.
  ASSERT_EQ(Run({"run", "wcc", "--graph", uri, "--db-edges-table=p_edges", "--out", uri}).exit_code,
            0);
  EXPECT_EQ(server->Sql("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid "
                        "= 'wcc'::regclass AND attnum > 0 ORDER BY attnum"),
            "bigint\nbigint\n");
  // --out-table named scores: no table pagerank was written.
  EXPECT_EQ(server->Sql("SELECT to_regclass('pagerank') IS NULL"), "t\n");
}

TEST_F(DbTest, ATableNameIsTakenAsGivenAndIdsKeepTheirBackslashes) {
  const std::string uri = server->Uri();
  server->Sql("DROP TABLE IF EXISTS \"Mixed\", mixed;");
  const std::string el = dir_.Write("b.el", "a\\b c\nc a\\b\n");
  const Process p = Run({"run", "pagerank", "--graph", el, "--out", uri, "--out-table=Mixed"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(server->Sql("SELECT id FROM \"Mixed\" ORDER BY id"), "a\\b\nc\n");
  EXPECT_EQ(server->Sql("SELECT to_regclass('mixed') IS NULL"), "t\n");
}

TEST_F(DbTest, PublishingAJobIdTwiceChangesNothing) {
  server->Sql("DROP TABLE IF EXISTS twice;");
  db::SinkOptions sink{server->Uri(), "twice", "text", "double precision"};
  db::JobRecord record;
  record.job_id = "job-twice";
  record.app = "pagerank";
  record.vertices = 2;
  record.graph = "g";
  const std::string first = dir_.Write("first", "a 0.5\nb 0.5\n");
  const std::string second = dir_.Write("second", "a 0.25\nc 0.75\n");
  auto once = db::PublishResults(sink, first, record);
  ASSERT_TRUE(once.ok()) << once.status();
  EXPECT_EQ(*once, db::Publication::kPublished);
  auto again = db::PublishResults(sink, second, record);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, db::Publication::kPublishedBefore);
  EXPECT_EQ(Rows("SELECT id, value FROM twice ORDER BY id"), "a 0.5\nb 0.5\n");
  EXPECT_EQ(server->Sql("SELECT count(*) FROM lockstep_jobs WHERE job_id = 'job-twice'"), "1\n");
}

TEST_F(DbTest, AReaderNeverSeesAMixtureOfTwoPublications) {
  server->Sql("DROP TABLE IF EXISTS mixed;");
  // Two results with no row in common: a reader must see all of one and none of the other.
  std::string a, b;
  for (int i = 0; i < 20000; ++i) {
    a += "a" + std::to_string(i) + " 1\n";
    b += "b" + std::to_string(i) + " 2\n";
  }
  const std::string fa = dir_.Write("a", a), fb = dir_.Write("b", b);
  db::SinkOptions sink{server->Uri(), "mixed", "text", "double precision"};
  db::JobRecord record;
  record.app = "pagerank";
  record.graph = "g";
  record.job_id = "mix-0";
  record.vertices = 20000;
  ASSERT_TRUE(db::PublishResults(sink, fa, record).ok());
  std::atomic<bool> done{false};
  // Two readers: one sends each query as text, the other runs one prepared statement (whose
  // plan names the table that a swap replaces).
  std::atomic<int> reads[2] = {0, 0};
  std::set<std::string> seen[2];
  const auto read = [&](int k) {
    const char* query =
        "SELECT count(*), sum(value), min(left(id, 1)), max(left(id, 1)) FROM mixed";
    PGconn* c = PQconnectdb(server->Uri().c_str());
    if (k == 1) PQclear(PQprepare(c, "poll", query, 0, nullptr));
    while (!done.load()) {
      PGresult* r =
          k == 0 ? PQexec(c, query) : PQexecPrepared(c, "poll", 0, nullptr, nullptr, nullptr, 0);
      if (PQresultStatus(r) == PGRES_TUPLES_OK) {
        seen[k].insert(std::string(PQgetvalue(r, 0, 0)) + "|" + PQgetvalue(r, 0, 1) + "|" +
                       PQgetvalue(r, 0, 2) + PQgetvalue(r, 0, 3));
        ++reads[k];
      } else {
        // A read that meets a swap waits for it and reads the new table: never an error.
        seen[k].insert(std::string("error: ") + PQresultErrorMessage(r));
      }
      PQclear(r);
    }
    PQfinish(c);
  };
  std::thread text_reader(read, 0), prepared_reader(read, 1);
  for (int i = 1; i <= 20; ++i) {
    // The first ten swap a new table in; then a view depends on the table, which is rewritten.
    if (i == 11) server->Sql("CREATE VIEW mixed_view AS SELECT id FROM mixed;");
    record.job_id = "mix-" + std::to_string(i);
    auto st = db::PublishResults(sink, i % 2 ? fb : fa, record);
    ASSERT_TRUE(st.ok()) << st.status();
  }
  done = true;
  text_reader.join();
  prepared_reader.join();
  for (int k : {0, 1}) {
    EXPECT_GT(reads[k].load(), 20);
    EXPECT_EQ(seen[k], (std::set<std::string>{"20000|20000|aa", "20000|40000|bb"}));
  }
}

TEST_F(DbTest, APlainResultTableIsSwappedWithItsGrantsAndAnyOtherIsRewrittenInPlace) {
  server->Sql(
      "DROP TABLE IF EXISTS swapped, kept_in_place CASCADE; DROP ROLE IF EXISTS front_end;"
      "CREATE ROLE front_end; CREATE TABLE swapped (id text PRIMARY KEY, value double precision);"
      "GRANT SELECT ON swapped TO front_end; GRANT INSERT ON swapped TO PUBLIC;"
      "CREATE TABLE kept_in_place (id text PRIMARY KEY, value double precision);"
      "CREATE VIEW kept_view AS SELECT id, value FROM kept_in_place;");
  const std::string results = dir_.Write("r", "a 0.25\nb 0.75\n");
  db::JobRecord record;
  record.app = "pagerank";
  record.graph = "g";
  record.vertices = 2;
  const std::string oid = "SELECT 'swapped'::regclass::oid, 'kept_in_place'::regclass::oid";
  const std::string before = server->Sql(oid);
  for (const char* table : {"swapped", "kept_in_place"}) {
    record.job_id = std::string("grants-") + table;
    auto st =
        db::PublishResults({server->Uri(), table, "text", "double precision"}, results, record);
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(Rows(std::string("SELECT id, value FROM ") + table + " ORDER BY id"),
              "a 0.25\nb 0.75\n");
  }
  // The plain table is a new one, with the old one's privileges and a primary key of its name.
  const std::string after = server->Sql(oid);
  EXPECT_NE(after.substr(0, after.find('|')), before.substr(0, before.find('|')));
  EXPECT_EQ(server->Sql("SELECT has_table_privilege('front_end', 'swapped', 'SELECT'), "
                        "has_table_privilege('front_end', 'swapped', 'UPDATE'), "
                        "has_table_privilege('public', 'swapped', 'INSERT'), "
                        "(SELECT conname FROM pg_constraint WHERE conrelid = 'swapped'::regclass)"),
            "t|f|t|swapped_pkey\n");
  // The one a view depends on is the same table, rewritten; the view reads the new rows.
  EXPECT_EQ(after.substr(after.find('|')), before.substr(before.find('|')));
  EXPECT_EQ(Rows("SELECT id, value FROM kept_view ORDER BY id"), "a 0.25\nb 0.75\n");
  EXPECT_EQ(server->Sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'lockstep_stage%'"),
            "0\n");
}

TEST_F(DbTest, BadRowsAndTablesFailNamingThemAndPublishNothing) {
  const std::string uri = server->Uri();
  server->Sql(
      "DROP TABLE IF EXISTS kept; CREATE TABLE kept (id text PRIMARY KEY, value double "
      "precision); INSERT INTO kept VALUES ('before', 1);"
      "DROP TABLE IF EXISTS bad_null; CREATE TABLE bad_null (src bigint, dst bigint);"
      "INSERT INTO bad_null VALUES (1, 2), (2, NULL);"
      "DROP TABLE IF EXISTS bad_src; CREATE TABLE bad_src (src bigint, dst bigint);"
      "INSERT INTO bad_src SELECT g, g + 1 FROM generate_series(1, 20000) g;"
      "INSERT INTO bad_src VALUES (NULL, 3);"
      "DROP TABLE IF EXISTS bad_space; CREATE TABLE bad_space (src text, dst text);"
      "INSERT INTO bad_space VALUES ('a', 'b'), ('b', 'c d');"
      "DROP TABLE IF EXISTS bad_weight; CREATE TABLE bad_weight (src int, dst int, weight float8);"
      "INSERT INTO bad_weight VALUES (1, 2, 1), (2, 3, -4);"
      "DROP TABLE IF EXISTS bad_type; CREATE TABLE bad_type (src float8, dst float8);"
      "DROP TABLE IF EXISTS listed_e; CREATE TABLE listed_e (src int, dst int);"
      "INSERT INTO listed_e VALUES (1, 2), (2, 3);"
      "DROP TABLE IF EXISTS listed_v; CREATE TABLE listed_v (id int); INSERT INTO listed_v "
      "VALUES (1), (2);");
  struct Case {
    std::vector<std::string> flags;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"--db-edges-table=bad_null"}, "table \"bad_null\", row (2, NULL): NULL in column \"dst\""},
      // A NULL source is in no share's range: the first share takes it, to refuse it.
      {{"--db-edges-table=bad_src"}, "table \"bad_src\", row (NULL, 3): NULL in column \"src\""},
      {{"--db-edges-table=bad_space"},
       "table \"bad_space\", row (b, c d): a space or carriage return"},
      {{"--db-edges-table=nope"}, "no table \"nope\" (--db-edges-table)"},
      {{"--db-edges-table=bad_null", "--db-dst-column=target"},
       "table \"bad_null\" has no column \"target\" (--db-dst-column)"},
      {{"--db-edges-table=bad_type"}, "has type float8; vertex IDs must be uuid"},
      {{"--db-edges-table=listed_e", "--db-vertices-table=listed_v"},
       "table \"listed_e\", row (2, 3): vertex 3 is not listed in table \"listed_v\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    std::vector<std::string> args = {"run",   "pagerank", "--graph",         uri,
                                     "--out", uri,        "--out-table=kept"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    const Process p = Run(args);
    EXPECT_EQ(p.exit_code, 1);
    EXPECT_THAT(p.err, HasSubstr(c.error));
  }
  const Process w = Run({"run", "sssp", "--graph", uri, "--db-edges-table=bad_weight", "--source=1",
                         "--out", uri, "--out-table=kept"});
  EXPECT_EQ(w.exit_code, 1);
  EXPECT_THAT(w.err, HasSubstr("table \"bad_weight\", row (2, 3, -4): "));
  EXPECT_EQ(Rows("SELECT * FROM kept"), "before 1\n");
  // A password in the URI is refused before anything is read (a usage error).
  const Process pw = Run({"run", "pagerank", "--graph", "postgresql://u:secret@localhost/db",
                          "--out", dir_.File("x")});
  EXPECT_EQ(pw.exit_code, 2);
  EXPECT_THAT(pw.err, HasSubstr("--graph: the URI holds a password"));
  EXPECT_THAT(pw.err, ::testing::Not(HasSubstr("secret")));
}

TEST_F(DbTest, AWrongPasswordOrNoServerFailsAndSaysSo) {
  server->Sql(
      "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pw') THEN CREATE ROLE "
      "pw LOGIN PASSWORD 'right'; END IF; END $$;"
      "DROP TABLE IF EXISTS pw_edges; CREATE TABLE pw_edges (src int, dst int);"
      "INSERT INTO pw_edges VALUES (1, 2); GRANT SELECT ON pw_edges TO pw;");
  server->AddHbaLine("local all pw scram-sha-256");
  const std::string uri = server->Uri("pw");
  const std::vector<std::string> args = {
      "run", "pagerank", "--graph", uri, "--out", dir_.File("pw.out"), "--db-edges-table=pw_edges"};
  const Process wrong = Run(args, {"PGPASSWORD=wrong"});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_THAT(wrong.err, AllOf(HasSubstr("cannot connect"), HasSubstr("password authentication "
                                                                      "failed")));
  EXPECT_THAT(wrong.err, ::testing::Not(HasSubstr("wrong")));
  const Process right = Run(args, {"PGPASSWORD=right"});
  EXPECT_EQ(right.exit_code, 0) << right.err;
  // A password file (PGPASSFILE) works as well.
  const std::string pass = dir_.Write("pgpass", "*:*:*:pw:right\n");
  std::filesystem::permissions(
      pass, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const Process file = Run(args, {"PGPASSFILE=" + pass});
  EXPECT_EQ(file.exit_code, 0) << file.err;
  // No server at the address.
  const Process down =
      Run({"run", "pagerank", "--graph", "postgresql://lockstep@%2Fnonexistent-dir:5432/postgres",
           "--out", dir_.File("down.out")});
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_THAT(down.err, HasSubstr("PostgreSQL at postgresql://lockstep@%2Fnonexistent-dir:5432/"
                                  "postgres: cannot connect"));
}

TEST_F(DbTest, AServerStoppedMidLoadOrMidPublishLeavesThePreviousResults) {
  const std::string uri = server->Uri();
  server->Sql(
      "DROP TABLE IF EXISTS slow_src CASCADE; CREATE TABLE slow_src (src int, dst int);"
      "INSERT INTO slow_src VALUES (1, 2), (2, 1);"
      // Reading the view waits 3 s before its first row: the server stops meanwhile.
      "CREATE VIEW slow_edges AS SELECT src, dst FROM slow_src WHERE (SELECT pg_sleep(3)) IS "
      "NULL;"
      "DROP TABLE IF EXISTS slow_out; CREATE TABLE slow_out (id int PRIMARY KEY, value float8);"
      "INSERT INTO slow_out VALUES (7, 0.5);"
      "CREATE OR REPLACE FUNCTION slow_down() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
      "PERFORM pg_sleep(3); RETURN NULL; END $$;"
      "CREATE TRIGGER slow_copy BEFORE INSERT ON slow_out FOR EACH STATEMENT EXECUTE FUNCTION "
      "slow_down();");
  for (const std::string table : {"slow_edges", "slow_src"}) {
    SCOPED_TRACE(table);
    // slow_edges stops the load; slow_src loads at once and the publication into slow_out stops.
    std::thread stopper([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1200));
      server->Stop();
    });
    const Process p = Run({"run", "pagerank", "--graph", uri, "--db-edges-table=" + table, "--out",
                           uri, "--out-table=slow_out"});
    stopper.join();
    server->Start();
    EXPECT_EQ(p.exit_code, 1);
    // The load stops wherever the server went (splitting the table into shares, or reading it).
    EXPECT_THAT(p.err,
                HasSubstr(table == "slow_edges" ? "slow_edges" : "publishing the staged results"));
    EXPECT_EQ(Rows("SELECT * FROM slow_out"), "7 0.5\n");
    EXPECT_EQ(server->Sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'lockstep_stage%'"),
              "0\n");
  }
}

// The rows a worker read of its share, from its log ("loaded its share: lines N | ...").
uint64_t SharedRows(const std::string& log) {
  const size_t at = log.find("loaded its share: lines ");
  return at == std::string::npos ? 0 : std::stoull(log.substr(at + 24));
}

TEST_F(DbTest, ClustersOfTwoAndThreeWorkersReadTheirSharesAndAnswerAsRunDoes) {
  // Integer IDs with a vertex table (isolated vertices), text IDs, and UUIDs: each a different
  // share predicate (a range between quantiles, a hash, the workers' own UUID ranges).
  LoadEdges("c_edges", "bigint", ReadFile(std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el"));
  server->Sql(
      "DROP TABLE IF EXISTS c_vertices; CREATE TABLE c_vertices (id bigint PRIMARY KEY);"
      "INSERT INTO c_vertices SELECT src FROM c_edges UNION SELECT dst FROM c_edges "
      "UNION VALUES (7000000), (7000001);"
      "DROP TABLE IF EXISTS c_text; CREATE TABLE c_text AS SELECT 'v' || src AS src, 'v' || dst "
      "AS dst FROM c_edges;"
      "DROP TABLE IF EXISTS c_uuid; CREATE TABLE c_uuid AS SELECT md5(src::text)::uuid AS src, "
      "md5(dst::text)::uuid AS dst FROM c_edges;");
  const uint64_t rows = std::stoull(server->Sql("SELECT count(*) FROM c_edges"));
  const std::string uri = server->Uri();
  struct Case {
    std::string table;
    std::vector<std::string> apps;
    std::string vertices;
    bool undirected = false;
  };
  const std::vector<Case> cases = {
      {"c_edges", {"pagerank", "wcc", "cdlp", "lcc", "coloring", "bfs", "sssp"}, "c_vertices"},
      {"c_edges", {"pagerank", "lcc"}, "none", true},
      {"c_text", {"pagerank", "wcc"}, "none"},
      {"c_uuid", {"pagerank", "cdlp"}, "none"}};
  for (const Case& c : cases) {
    for (const std::string& app : c.apps) {
      std::vector<std::string> flags = {"--db-edges-table=" + c.table,
                                        "--db-vertices-table=" + c.vertices};
      if (c.vertices == "none") flags.pop_back();
      if (c.undirected) flags.push_back("--undirected");
      if (app == "bfs" || app == "sssp") flags.push_back("--source=1");
      std::vector<std::string> local = {"run", app, "--graph", uri, "--out", dir_.File("local")};
      local.insert(local.end(), flags.begin(), flags.end());
      const Process l = Run(local);
      ASSERT_EQ(l.exit_code, 0) << l.err;
      const std::vector<std::string> want = SortedLines(ReadFile(dir_.File("local")));
      for (uint32_t n : {2u, 3u}) {
        SCOPED_TRACE(c.table + " " + app + " at " + std::to_string(n) + " workers");
        std::vector<std::string> args = {"--app", app, "--graph", uri};
        args.insert(args.end(), flags.begin(), flags.end());
        const Cluster cluster = RunCluster(n, args, dir_.File("out"));
        ASSERT_EQ(cluster.master.exit_code, 0) << cluster.master.err;
        EXPECT_THAT(cluster.master.err, HasSubstr("the job reads snapshot "));
        EXPECT_EQ(cluster.lines, want);
        // Each worker read its share of the rows, which the server chose: together every row
        // once, none of them all.
        uint64_t total = 0;
        for (const Process& w : cluster.workers) {
          const uint64_t mine = SharedRows(w.err);
          EXPECT_LT(mine, rows + (c.vertices == "none" ? 0 : rows)) << w.err;
          total += mine;
        }
        const uint64_t listed =
            c.vertices == "none" ? 0 : std::stoull(server->Sql("SELECT count(*) FROM c_vertices"));
        EXPECT_EQ(total, rows + listed);
      }
    }
  }
}

// A worker's --data-root confines the paths a job's database URI has libpq use (here a password
// file, whose entries libpq would send the server, and the server's socket directory), and
// refuses what no root can confine (a service, an OpenSSL engine's key): a master cannot have a
// worker read a file outside its roots. Inside them, the same job runs.
TEST_F(DbTest, AWorkerRefusesADatabaseUriNamingAPathOutsideItsDataRoot) {
  LoadEdges("confined", "bigint", "1 2\n2 3\n3 1\n");
  const std::filesystem::path root = dir_ / "root";
  std::filesystem::create_directories(root);
  const std::string socket_dir = std::filesystem::path(server->File("x")).parent_path().string();
  const std::string outside = dir_.File("pgpass"), inside = (root / "pgpass").string();
  for (const std::string& file : {outside, inside}) {
    { std::ofstream(file) << "# nothing for this server\n"; }
    ::chmod(file.c_str(), 0600);
  }
  // The master's own service file defines the service (the worker's environment has none).
  const std::string services = dir_.File("pg_service.conf");
  { std::ofstream(services) << "[anything]\nconnect_timeout=10\n"; }
  struct Case {
    std::string query;
    std::vector<std::string> roots;
    std::string refusal;  // empty: the job runs
  };
  const std::vector<Case> cases = {
      {"?passfile=" + outside,
       {root.string(), socket_dir},
       "the job's graph URI's passfile " + outside + " is outside this worker's --data-root"},
      {"?passfile=" + inside,
       {root.string()},
       "the job's graph URI's host " + socket_dir + " is outside this worker's --data-root"},
      {"?service=anything",
       {root.string(), socket_dir},
       "the job's graph URI names \"service\", which a worker's --data-root cannot confine: "
       "refused under --data-root"},
      {"?sslmode=disable&sslkey=" + root.string() + "/engine.so:key",
       {root.string(), socket_dir},
       "names its sslkey as an OpenSSL engine's"},
      {"?passfile=" + inside, {root.string(), socket_dir}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.query);
    std::filesystem::remove_all(root / "out");
    const pid_t master = StartMaster(
        "confined",
        {"--app", "pagerank", "--graph", server->Uri() + c.query, "--db-edges-table=confined",
         "--out", (root / "out").string(), "--min-workers", "1"},
        "127.0.0.1:0", {"PGSERVICEFILE=" + services});
    std::vector<std::string> worker = {"--max-jobs", "1", "--threads", "1"};
    for (const std::string& r : c.roots) worker.insert(worker.end(), {"--data-root", r});
    const std::vector<pid_t> workers = StartWorkers("confined", 1, worker);
    const Process m = Wait(master, "confined.err");
    WaitWorkers("confined", workers);
    if (c.refusal.empty()) {
      EXPECT_EQ(m.exit_code, 0) << m.err;
      EXPECT_EQ(PartLines((root / "out").string()).size(), 3u);
    } else {
      EXPECT_EQ(m.exit_code, 1) << m.err;
      EXPECT_THAT(m.err, HasSubstr(c.refusal));
      EXPECT_FALSE(std::filesystem::exists(root / "out"));
    }
  }
}

TEST_F(DbTest, AJobThatFailsStopsTheSharesStillStreaming) {
  // uuid IDs: worker 0's share is the low half of the UUIDs, worker 1's the high half. Worker 0
  // meets a NULL in its first round; worker 1's first round (40,000 rows, about 3 MB) comes at
  // once, then its rows come one per 10 ms (10 s in all) from a slow view.
  server->Sql(
      "DROP TABLE IF EXISTS streaming_src CASCADE; CREATE TABLE streaming_src (src uuid, dst "
      "uuid);"
      "INSERT INTO streaming_src SELECT ('00000000-0000-0000-0000-' || lpad(g::text, 12, "
      "'0'))::uuid, ('00000000-0000-0000-0000-' || lpad((g + 1)::text, 12, '0'))::uuid FROM "
      "generate_series(1, 1000) g;"
      "INSERT INTO streaming_src VALUES ('00000000-0000-0000-0000-000000000001', NULL);"
      "INSERT INTO streaming_src SELECT ('ffffffff-0000-0000-0000-' || lpad(g::text, 12, "
      "'0'))::uuid, ('ffffffff-0000-0000-0000-' || lpad((g + 1)::text, 12, '0'))::uuid FROM "
      "generate_series(1, 40000) g;"
      "INSERT INTO streaming_src SELECT ('ffffffff-0000-0000-0000-' || lpad(g::text, 12, "
      "'0'))::uuid, ('ffffffff-0000-0000-0000-' || lpad((g + 1)::text, 12, '0'))::uuid FROM "
      "generate_series(100001, 101000) g;"
      "CREATE OR REPLACE FUNCTION streaming_slow(id uuid) RETURNS boolean LANGUAGE plpgsql "
      "VOLATILE AS $$ BEGIN IF id > 'ffffffff-0000-0000-0000-000000100000' THEN PERFORM "
      "pg_sleep(0.01); END IF; RETURN true; END $$;"
      "CREATE VIEW streaming AS SELECT src, dst FROM streaming_src WHERE streaming_slow(src);");
  const auto start = std::chrono::steady_clock::now();
  const Cluster c =
      RunCluster(2, {"--app", "pagerank", "--graph", server->Uri(), "--db-edges-table=streaming"},
                 dir_.File("streaming.out"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(c.master.exit_code, 1);
  EXPECT_THAT(c.master.err, HasSubstr("NULL in column \"dst\""));
  // Nobody read worker 1's share to its end: the job stopped after the first round, and the
  // COPY still streaming was stopped.
  EXPECT_LT(seconds, 8.0) << c.master.err << c.workers[0].err << c.workers[1].err;
  // The server ends the COPY when it next finds the connection gone (its next buffer of rows,
  // about a second here): long before the 10 s of reading it to the end.
  std::string left;
  for (int i = 0; i < 50; ++i) {
    left = server->Sql(
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%streaming%' AND pid <> "
        "pg_backend_pid()");
    if (left == "0\n") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(left, "0\n");
}

TEST_F(DbTest, AClusterPublishesIntoATableInOneTransactionAndAFailureLeavesIt) {
  LoadEdges("s_edges", "bigint", ReadFile(std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el"));
  const std::string uri = server->Uri();
  server->Sql("DROP TABLE IF EXISTS s_local, s_dist;");
  const Process l = Run({"run", "pagerank", "--graph", uri, "--db-edges-table=s_edges", "--out",
                         uri, "--out-table=s_local"});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  const std::string want = Rows("SELECT id, value FROM s_local ORDER BY id");
  for (uint32_t n : {2u, 3u}) {
    SCOPED_TRACE(std::to_string(n) + " workers");
    // A vertex that is not in the graph: gone after the publication.
    server->Sql(
        "CREATE TABLE IF NOT EXISTS s_dist (id bigint PRIMARY KEY, value float8);"
        "INSERT INTO s_dist VALUES (99999999, 1) ON CONFLICT DO NOTHING;");
    const Cluster c = RunCluster(
        n, {"--app", "pagerank", "--graph", uri, "--db-edges-table=s_edges", "--out-table=s_dist"},
        uri);
    ASSERT_EQ(c.master.exit_code, 0) << c.master.err;
    EXPECT_EQ(Rows("SELECT id, value FROM s_dist ORDER BY id"), want);
    EXPECT_EQ(server->Sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'lockstep_stage%'"),
              "0\n");
    EXPECT_EQ(server->Sql("SELECT count(*) FROM lockstep_jobs WHERE out_table = 's_dist' AND "
                          "vertices = (SELECT count(*) FROM s_dist)"),
              std::to_string(n - 1) + "\n");
  }
  // A job that fails (a bad row found by one worker) publishes nothing and leaves no staging.
  server->Sql("INSERT INTO s_edges VALUES (5, NULL);");
  const Cluster bad = RunCluster(
      2, {"--app", "pagerank", "--graph", uri, "--db-edges-table=s_edges", "--out-table=s_dist"},
      uri);
  EXPECT_EQ(bad.master.exit_code, 1);
  EXPECT_THAT(bad.master.err,
              HasSubstr("table \"s_edges\", row (5, NULL): NULL in column \"dst\""));
  EXPECT_EQ(Rows("SELECT id, value FROM s_dist ORDER BY id"), want);
  EXPECT_EQ(server->Sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'lockstep_stage%'"),
            "0\n");
}

TEST_F(DbTest, APeriodicMasterServesTheNextJobAfterABadOneOnAFreshSnapshot) {
  const std::string uri = server->Uri();
  server->Sql(
      "DROP TABLE IF EXISTS e_edges, e_out; CREATE TABLE e_edges (src int, dst int);"
      "INSERT INTO e_edges VALUES (1, 2), (2, 3), (3, 1), (4, NULL);");
  const pid_t master = StartMaster(
      "every", {"--app", "pagerank", "--graph", uri, "--db-edges-table=e_edges", "--out", uri,
                "--out-table=e_out", "--every", "200ms", "--min-workers", "2"});
  const std::vector<pid_t> workers = StartWorkers("every", 2, {});
  // The first jobs fail on the NULL; once the row is mended, the next job (a new snapshot) runs.
  const auto wait_for = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 1500 && !done(); ++i) ::usleep(20000);
    return done();
  };
  EXPECT_TRUE(wait_for(
      [&] { return ReadFile(dir_.File("every.err")).find("job failed") != std::string::npos; }));
  server->Sql("UPDATE e_edges SET dst = 1 WHERE src = 4;");
  EXPECT_TRUE(wait_for([&] {
    // The result table is made in the publishing transaction: there once published.
    return server->Sql("SELECT count(*) FROM pg_tables WHERE tablename = 'e_out'") != "0\n";
  }));
  for (pid_t w : workers) ::kill(w, SIGTERM);
  ::kill(master, SIGTERM);
  const Process m = Wait(master, "every.err");
  WaitWorkers("every", workers);
  EXPECT_EQ(m.exit_code, 0) << m.err;
  EXPECT_THAT(m.err, HasSubstr("row (4, NULL): NULL in column \"dst\""));
  EXPECT_EQ(server->Sql("SELECT count(*) FROM e_out"), "4\n");
  EXPECT_EQ(server->Sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'lockstep_stage%'"),
            "0\n");
}

TEST_F(DbTest, AJobReadsTheSnapshotItStartedOnWhateverIsWrittenMeanwhile) {
  const std::string uri = server->Uri();
  server->Sql(
      "DROP TABLE IF EXISTS w_edges; CREATE TABLE w_edges (src int, dst int);"
      "INSERT INTO w_edges VALUES (1, 2), (2, 3), (3, 1);");
  const pid_t master =
      StartMaster("snap", {"--app", "pagerank", "--graph", uri, "--db-edges-table=w_edges", "--out",
                           dir_.File("snap.out"), "--min-workers", "2"});
  // The master exports the job's snapshot before it takes workers; the crawler writes after that
  // and before any worker reads.
  for (int i = 0; i < 1000 && ReadFile(dir_.File("snap.err")).find("the job reads snapshot") ==
                                  std::string::npos;
       ++i) {
    ::usleep(10000);
  }
  server->Sql("INSERT INTO w_edges VALUES (3, 99), (99, 1);");
  const std::vector<pid_t> workers = StartWorkers("snap", 2, {"--max-jobs", "1"});
  const Process m = Wait(master, "snap.err");
  WaitWorkers("snap", workers);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const std::vector<std::string> lines = PartLines(dir_.File("snap.out"));
  ASSERT_EQ(lines.size(), 3u);  // vertices 1, 2 and 3: not 99, written after the export
  EXPECT_EQ(lines[0].substr(0, 2), "1 ");
  EXPECT_EQ(lines[2].substr(0, 2), "3 ");
}

TEST_F(DbTest, AJobRecoveredOnANewWorkerReadsItsSnapshotStill) {
  LoadEdges("r_edges", "bigint", ReadFile(std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el"));
  const std::string uri = server->Uri();
  const std::vector<std::string> job = {
      "--graph", uri, "--db-edges-table=r_edges", "--tolerance", "0", "--max-iterations", "2000"};
  std::vector<std::string> local = {"run", "pagerank", "--out", dir_.File("rec.local")};
  local.insert(local.end(), job.begin(), job.end());
  ASSERT_EQ(Run(local).exit_code, 0);
  std::vector<std::string> args = {
      "--app",         "pagerank", "--out",          dir_.File("rec.out"),
      "--min-workers", "2",        "--max-restarts", "1"};
  args.insert(args.end(), job.begin(), job.end());
  const pid_t master = StartMaster("rec", args);
  std::vector<pid_t> workers = StartWorkers("rec", 2, {"--max-jobs", "1"});
  for (int i = 0;
       i < 3000 && ReadFile(dir_.File("rec.err")).find("superstep 20 ") == std::string::npos; ++i) {
    ::usleep(10000);
  }
  // The crawler writes, then a worker is lost: the spare that replaces it reads the job's
  // snapshot (the master's session still lives), not the new rows.
  server->Sql("INSERT INTO r_edges VALUES (1, 777777), (777777, 2);");
  ::kill(workers[1], SIGKILL);
  workers.push_back(StartWorkers("rec", 1, {"--max-jobs", "1"}, 2)[0]);
  const Process m = Wait(master, "rec.err");
  WaitWorkers("rec", workers);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_THAT(m.err, HasSubstr("attempt 2"));
  EXPECT_EQ(PartLines(dir_.File("rec.out")), SortedLines(ReadFile(dir_.File("rec.local"))));
}

TEST_F(DbTest, AMasterThatResumesAJobStartsOverOnANewSnapshotAndSaysSo) {
  LoadEdges("ck_edges", "bigint", ReadFile(std::string(LOCKSTEP_DATA_DIR) + "/kronecker-12.el"));
  server->Sql("DROP TABLE IF EXISTS ck_out, ck_local;");
  const std::string uri = server->Uri();
  const std::vector<std::string> job = {
      "--graph", uri, "--db-edges-table=ck_edges", "--tolerance", "0", "--max-iterations", "600"};
  std::vector<std::string> args = {"--app",
                                   "pagerank",
                                   "--out",
                                   uri,
                                   "--out-table=ck_out",
                                   "--min-workers",
                                   "2",
                                   "--checkpoint-dir",
                                   dir_.File("ck"),
                                   "--checkpoint-every",
                                   "5"};
  args.insert(args.end(), job.begin(), job.end());
  const pid_t first = StartMaster("ck1", args);
  const std::string port = ReadFile(dir_.File("ck1.port"));
  const std::vector<pid_t> workers = StartWorkers("ck1", 2, {});
  for (int i = 0;
       i < 3000 &&
       ReadFile(dir_.File("ck1.err")).find("checkpoint before superstep 10") == std::string::npos;
       ++i) {
    ::usleep(10000);
  }
  ::kill(first, SIGKILL);
  Wait(first, "ck1.err");
  // The crawler writes while no master runs; the next master reads a new snapshot, which holds it.
  server->Sql("INSERT INTO ck_edges VALUES (1, 888888), (888888, 2);");
  const pid_t second = StartMaster("ck2", {"--checkpoint-dir", dir_.File("ck")},
                                   "127.0.0.1:" + port.substr(0, port.find('\n')));
  const Process m = Wait(second, "ck2.err");
  for (pid_t w : workers) ::kill(w, SIGTERM);
  WaitWorkers("ck1", workers);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_THAT(m.err, HasSubstr("from the start on a new snapshot of its graph"));
  std::vector<std::string> local = {"run", "pagerank", "--out", uri, "--out-table=ck_local"};
  local.insert(local.end(), job.begin(), job.end());
  ASSERT_EQ(Run(local).exit_code, 0);
  const std::string want = Rows("SELECT id, value FROM ck_local ORDER BY id");
  EXPECT_THAT(want, HasSubstr("888888 "));
  EXPECT_EQ(Rows("SELECT id, value FROM ck_out ORDER BY id"), want);
  // The killed master's staging table went with the job.
  EXPECT_EQ(server->Sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'lockstep_stage%'"),
            "0\n");
}

TEST_F(DbTest, SavePartsIsRefusedForADatabaseGraph) {
  const std::string uri = server->Uri();
  const std::string el = dir_.Write("g.el", "1 2\n");
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  for (const Case& c :
       std::vector<Case>{{{"--graph", uri, "--out", dir_.File("o"), "--save-parts", dir_.File("p")},
                          "--save-parts writes the partitioned form"}}) {
    std::vector<std::string> args = {"master", "--listen", "127.0.0.1:0", "--app", "pagerank"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const Process p = Run(args);
    EXPECT_EQ(p.exit_code, 2);
    EXPECT_THAT(p.err, HasSubstr(c.error));
  }
}

}  // namespace
}  // namespace lockstep
