// The staging tables of distributed jobs and their leases (docs/design.md §10), against a real
// server (util/postgres_server.h) and `lockstep` masters and workers as real processes: a later
// job, of any master, drops the staging tables of jobs that are gone (a master killed, a master
// killed mid-publish an hour ago, a table made before leases) and never a live job's, also when
// the server restarted while that job's master could not renew its lease.
#include "lockstep/db/stage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "suite_server.h"
#include "util/lockstep_process.h"
#include "util/postgres_server.h"
#include "util/temp_dir.h"

namespace lockstep {
namespace {

using test::Process;
using ::testing::UnorderedElementsAre;
using Names = std::set<std::string>;

// The binary's one server (suite_server.h).
test::PostgresServer* server = nullptr;

class StageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server = &test::SuiteServer(); }
  // A test that stops early leaves no master waiting for workers.
  void TearDown() override {
    for (pid_t pid : waiting_) {
      ::kill(pid, SIGCONT);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }

  static Names Lines(const std::string& text) {
    Names names;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) names.insert(line);
    return names;
  }
  static Names StagingTables() {
    return Lines(server->Sql(
        "SELECT tablename FROM pg_tables WHERE left(tablename, 15) = 'lockstep_stage_'"));
  }
  static Names Leased() {
    if (server->Sql("SELECT to_regclass('lockstep_leases') IS NULL") == "t\n") return {};
    return Lines(server->Sql("SELECT stage FROM lockstep_leases"));
  }
  static bool WaitFor(const std::function<bool()>& done) {
    for (int i = 0; i < 1500 && !done(); ++i) ::usleep(20000);
    return done();
  }

  std::vector<std::string> Job(const std::string& table) const {
    return {"--app",       "pagerank",    "--graph", graph_,          "--out",
            server->Uri(), "--out-table", table,     "--min-workers", "2"};
  }
  // Starts master `name` on a job into `table` that waits for its two workers: a live job, whose
  // staging table is made before any worker comes. Its PID and staging table.
  std::pair<pid_t, std::string> StartWaitingJob(const std::string& name, const std::string& table) {
    const Names before = StagingTables();
    const pid_t pid = procs_.StartMaster(name, Job(table));
    waiting_.insert(pid);
    std::string stage;
    WaitFor([&] {
      for (const std::string& t : StagingTables()) {
        if (!before.contains(t)) stage = t;
      }
      return !stage.empty();
    });
    EXPECT_FALSE(stage.empty()) << test::ReadWholeFile(dir_.File(name + ".err"));
    return {pid, stage};
  }
  // Runs a whole job into `table` on master `name` and two workers.
  Process RunJob(const std::string& name, const std::string& table) {
    const pid_t master = procs_.StartMaster(name, Job(table));
    const std::vector<pid_t> workers = procs_.StartWorkers(name, 2, {"--max-jobs", "1"});
    Process m = procs_.Wait(master, name + ".err");
    procs_.WaitWorkers(name, workers);
    return m;
  }
  // Lets master `name` (started by StartWaitingJob) run its job to its end.
  Process FinishJob(const std::string& name, pid_t master) {
    const std::vector<pid_t> workers = procs_.StartWorkers(name, 2, {"--max-jobs", "1"});
    Process m = Wait(master, name);
    procs_.WaitWorkers(name, workers);
    return m;
  }

  Process Wait(pid_t master, const std::string& name) {
    waiting_.erase(master);
    return procs_.Wait(master, name + ".err");
  }

  // Leaves staging table `stage` as a master killed mid-publish `ago` seconds before would: the
  // whole result copied in, its lease last renewed then.
  static void PlantDead(const std::string& stage, int ago) {
    server->Sql(
        "CREATE TABLE IF NOT EXISTS lockstep_leases (stage text PRIMARY KEY, holder text NOT "
        "NULL, renewed_at timestamptz NOT NULL, server_start timestamptz NOT NULL);"
        "CREATE TABLE " +
        stage + " (id text NOT NULL, value double precision); INSERT INTO " + stage +
        " VALUES ('1', 0.3), ('2', 0.3), ('3', 0.3); INSERT INTO lockstep_leases VALUES ('" +
        stage + "', 'gone-host pid 7 0', now() - interval '" + std::to_string(ago) +
        " seconds', pg_postmaster_start_time());");
  }
  // Makes the lease of `stage` `seconds` older, as if its master had not renewed it for as long.
  static void Age(const std::string& stage, int seconds) {
    server->Sql("UPDATE lockstep_leases SET renewed_at = renewed_at - interval '" +
                std::to_string(seconds) + " seconds' WHERE stage = '" + stage + "';");
  }

  test::TempDir dir_{"lockstep-stage"};
  test::LockstepProcesses procs_{dir_, LOCKSTEP_BINARY};
  const std::string graph_ = dir_.Write("g.el", "1 2\n2 3\n3 1\n");
  std::set<pid_t> waiting_;  // masters started by StartWaitingJob, not waited for yet
};

TEST_F(StageTest, ALaterJobDropsTheStagingTablesOfGoneJobsAndNeverALiveJobs) {
  // A live job on one master; a master killed mid-job a minute ago; one killed mid-publish an
  // hour ago.
  const auto [live, live_stage] = StartWaitingJob("live", "t_live");
  const auto [killed, killed_stage] = StartWaitingJob("killed", "t_killed");
  ::kill(killed, SIGKILL);
  Wait(killed, "killed");
  const std::string dead = "lockstep_stage_00000000_0000_4000_8000_000000000001";
  PlantDead(dead, 3600);
  Age(killed_stage, 60);
  ASSERT_EQ(StagingTables(), (Names{live_stage, killed_stage, dead}));

  // A later job, with an ID of its own, on another master.
  const Process later = RunJob("later", "t_later");
  ASSERT_EQ(later.exit_code, 0) << later.err;
  EXPECT_EQ(StagingTables(), Names{live_stage}) << "the staging tables of gone jobs are left";
  EXPECT_EQ(Leased(), Names{live_stage});
  EXPECT_EQ(server->Sql("SELECT count(*) FROM t_later"), "3\n");

  // The live job then runs to its end on its staging table.
  const Process m = FinishJob("live", live);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(server->Sql("SELECT count(*) FROM t_live"), "3\n");
  EXPECT_EQ(StagingTables(), Names{});
  EXPECT_EQ(Leased(), Names{});
}

TEST_F(StageTest, AfterTheServerRestartsALeaseLivesUntilItsMasterCouldHaveRenewedIt) {
  const auto [paused, paused_stage] = StartWaitingJob("paused", "t_paused");
  const std::string dead = "lockstep_stage_00000000_0000_4000_8000_000000000002";
  PlantDead(dead, 3600);
  // A staging table made by a lockstep before leases.
  const std::string unleased = "lockstep_stage_00000000_0000_4000_8000_000000000003";
  server->Sql("CREATE TABLE " + unleased + " (id text NOT NULL, value double precision);");
  // The server is down, for what looks like a minute, while the live job's master is paused: its
  // lease was last renewed a minute ago.
  ::kill(paused, SIGSTOP);
  Age(paused_stage, 60);
  server->Stop();
  server->Start();

  // A job right after the restart keeps them all: every lease has the time to be renewed since
  // the server started, and the one without a lease gets one.
  const Process after = RunJob("after", "t_after");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(StagingTables(), (Names{paused_stage, dead, unleased}));
  EXPECT_EQ(Leased(), (Names{paused_stage, dead, unleased}));

  // The master goes on, reconnects and renews its lease.
  ::kill(paused, SIGCONT);
  EXPECT_TRUE(WaitFor([&] {
    return server->Sql(
               "SELECT renewed_at > pg_postmaster_start_time() FROM lockstep_leases "
               "WHERE stage = '" +
               paused_stage + "'") == "t\n";
  }));
  // Once neither the dead lease nor the one found without a lease has been renewed for a lease's
  // life since the server started (5 s here, not 30), they go; the renewed one stays.
  EXPECT_TRUE(WaitFor([&] {
    return server->Sql(
               "SELECT clock_timestamp() - renewed_at > interval '6 s' FROM "
               "lockstep_leases WHERE stage = '" +
               unleased + "'") == "t\n";
  }));
  auto dropped = db::DropDeadStages(server->Uri(), std::chrono::seconds(5));
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_THAT(*dropped, UnorderedElementsAre(dead, unleased));
  EXPECT_EQ(StagingTables(), Names{paused_stage});

  const Process m = FinishJob("paused", paused);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(server->Sql("SELECT count(*) FROM t_paused"), "3\n");
  EXPECT_EQ(StagingTables(), Names{});
  EXPECT_EQ(Leased(), Names{});
}

}  // namespace
}  // namespace lockstep
