// Distributed failures with real processes on 127.0.0.1: a fault injected into one worker (start,
// compute, complete, an undecodable relayed payload, a message to an ID nobody owns), a worker or
// the master killed, SIGTERM, and the worker pool. Each failure must abort the job everywhere with
// the reason in every process's log, publish nothing and leave no temporary directory beside DIR,
// and the master must then serve the next job.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/partition/range.h"

namespace lockstep::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

constexpr int kVertices = 300;

std::string FaultGraph() {
  std::ostringstream out;
  for (int i = 0; i < kVertices; ++i) {
    out << i << ' ' << (i * 7 + 1) % kVertices << '\n';
    out << i << ' ' << (i * 13 + 5) % kVertices << '\n';
    out << i << ' ' << (i + 1) % kVertices << '\n';
  }
  return out.str();
}

// The first line of `text` that holds `needle` (empty if none).
std::string LineWith(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) return line;
  }
  return "";
}

std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) lines.push_back(line);
  }
  return lines;
}

// "[..] [error] job 1234-...: aborted: ..." -> "1234-..."
std::string JobIdOf(const std::string& line) {
  const size_t at = line.find("job ");
  if (at == std::string::npos) return "";
  const size_t start = at + 4;
  const size_t end = line.find_first_of(": ", start);
  return line.substr(start, end - start);
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    graph_ = dir_ / "graph.el";
    WriteFile(graph_, FaultGraph());
    fs::create_directories(dir_ / "res");
    out_ = dir_ / "res" / "out";
    marker_ = dir_ / "once.marker";
  }

  // Master arguments: the fault app on the test graph, faults firing for the first job only.
  std::vector<std::string> MasterArgs(const std::vector<std::string>& extra,
                                      const std::string& app = "fault",
                                      const std::string& marker = "") const {
    std::vector<std::string> args = {
        "--app", app,           "--graph", graph_.string(),
        "--out", out_.string(), "--once",  marker.empty() ? marker_.string() : marker};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // Names beside DIR (DIR itself included).
  std::set<std::string> Beside() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_ / "res")) {
      names.insert(e.path().filename().string());
    }
    return names;
  }

  // DIR and the job directory it points to: a published result and nothing temporary.
  void ExpectOnlyPublished(const std::set<std::string>& extra_allowed = {}) {
    ASSERT_TRUE(fs::is_symlink(fs::symlink_status(out_))) << "nothing published";
    std::set<std::string> expected = {"out", fs::read_symlink(out_).filename().string()};
    std::set<std::string> names = Beside();
    for (const auto& name : extra_allowed) names.erase(name);
    EXPECT_EQ(names, expected) << "temporary or stale directories beside DIR";
  }

  // The master's first job failed with `master_reason`, every worker logged why (with
  // `worker_reason`), nothing of it was published or left behind, and the master served the next
  // job. `workers` are the processes that must have logged the failure.
  std::string ExpectFailedThenServed(const std::vector<Process*>& workers,
                                     const std::string& master_reason,
                                     const std::string& worker_reason) {
    Process& master = cluster_.master();
    if (!master.WaitForLog("aborted: ", 30s)) {
      ADD_FAILURE() << "the master's job did not fail";
      return "";
    }
    const std::string aborted = LineWith(master.Log(), "aborted: ");
    const std::string failed = JobIdOf(aborted);
    // Logged after the job's staging directory was removed (the next job may have begun since).
    for (const std::string& name : Beside()) {
      EXPECT_EQ(name.find(failed), std::string::npos) << "the failed job left " << name;
    }
    EXPECT_FALSE(fs::exists(fs::symlink_status(out_)) &&
                 fs::read_symlink(out_).string().find(failed) != std::string::npos)
        << "the failed job was published";
    EXPECT_THAT(aborted, HasSubstr(master_reason));
    for (Process* w : workers) {
      const std::string tag = "job " + failed + " worker ";
      EXPECT_TRUE(w->WaitForLog("failed: ", 15s)) << w->command() << " logged no failure";
      std::string line;
      for (const std::string& l : LinesWith(w->Log(), "failed: ")) {
        if (l.find(tag) != std::string::npos) line = l;
      }
      EXPECT_THAT(line, HasSubstr(worker_reason)) << w->log_path().filename() << ":\n" << w->Log();
    }
    // The master serves the next job, on the same workers, and publishes it.
    EXPECT_TRUE(master.WaitForLog(": completed: ", 60s)) << "no job completed after the failure";
    const std::string completed = LineWith(master.Log(), ": completed: ");
    EXPECT_NE(JobIdOf(completed), failed);
    EXPECT_THAT(master.Log(), Not(HasSubstr("job " + failed + ": completed")));
    return failed;
  }

  // SIGTERM to everything; all exit 0; DIR holds a complete result that is not `failed`'s.
  void StopAndCheckPublished(const std::string& failed, size_t parts) {
    cluster_.Stop();
    EXPECT_EQ(cluster_.master().exit_code(), 0) << cluster_.master().Log();
    for (Process* w : cluster_.workers()) {
      if (w->exit_code() == 128 + SIGKILL) continue;  // killed by the test
      EXPECT_EQ(w->exit_code(), 0) << w->command();
    }
    ExpectOnlyPublished();
    auto published = ReadPublished(out_, parts);
    ASSERT_TRUE(published.has_value());
    EXPECT_NE(published->job_id, failed);
    EXPECT_EQ(published->lines.size(), static_cast<size_t>(kVertices));
    EXPECT_THAT(cluster_.master().Log(), HasSubstr("job " + published->job_id + ": completed"));
  }

  TempDir dir_{"lockstep-fault"};
  fs::path graph_, out_, marker_;
  Cluster cluster_{FAULT_BINARY, dir_.path(), {"LOCKSTEP_LOG=debug"}};
};

// --- Faults injected into one worker: fail, then serve the next job.

TEST_F(FaultTest, StartJobFailsOnOneWorker) {
  cluster_.StartMaster(
      MasterArgs({"--every", "1s", "--min-workers", "2", "--fail-start-worker", "1"}));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  const std::string reason = "fault injected: start-job fails on worker 1";
  const std::string failed = ExpectFailedThenServed(cluster_.workers(), reason, reason);
  StopAndCheckPublished(failed, 2);
}

TEST_F(FaultTest, ComputeErrorOnOneWorker) {
  cluster_.StartMaster(
      MasterArgs({"--every", "1s", "--min-workers", "2", "--fail-compute-superstep", "2",
                  "--fail-compute-vertex", "17"}));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  const std::string reason =
      "compute failed for vertex '17': fault injected: compute fails at "
      "superstep 2";
  const std::string failed = ExpectFailedThenServed(cluster_.workers(), reason, reason);
  // Every worker that started the job released it through the runner's abort_job.
  for (Process* w : cluster_.workers()) {
    EXPECT_THAT(w->Log(), HasSubstr("fault app: abort_job of job " + failed + " on worker"))
        << w->command();
  }
  StopAndCheckPublished(failed, 2);
}

TEST_F(FaultTest, CompleteJobFailsOnOneWorker) {
  cluster_.StartMaster(
      MasterArgs({"--every", "1s", "--min-workers", "2", "--fail-complete-worker", "0"}));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  const std::string reason = "fault injected: complete-job fails on worker 0";
  const std::string failed = ExpectFailedThenServed(cluster_.workers(), reason, reason);
  StopAndCheckPublished(failed, 2);
}

TEST_F(FaultTest, RelayedPayloadThatCannotBeDecoded) {
  cluster_.StartMaster(MasterArgs({"--every", "1s", "--min-workers", "2"}, "fault-poison"));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  const std::string reason = "cannot decode a message relayed from partition";
  const std::string failed = ExpectFailedThenServed(cluster_.workers(), reason, reason);
  StopAndCheckPublished(failed, 2);
}

// A vertex of the given partition (of two) and the partition that would own "nobody".
std::pair<std::string, uint64_t> SenderFor(bool same_partition_as_nobody) {
  auto split = partition::Range::Whole(2);
  const bsp::VertexId nobody = bsp::VertexIdFromExternal("nobody");
  const uint64_t part = *split->PartitionFor(nobody);
  for (int v = 0; v < kVertices; ++v) {
    const uint64_t p = *split->PartitionFor(bsp::VertexIdFromExternal(std::to_string(v)));
    if ((p == part) == same_partition_as_nobody) return {std::to_string(v), part};
  }
  return {"", part};
}

TEST_F(FaultTest, MessageToAnIdNoPartitionOwnsIsRelayedAndRefused) {
  const auto [sender, owner] = SenderFor(false);
  ASSERT_FALSE(sender.empty());
  cluster_.StartMaster(MasterArgs(
      {"--every", "1s", "--min-workers", "2", "--nobody-superstep", "1", "--nobody-from", sender}));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  const std::string nobody = bsp::ToString(bsp::VertexIdFromExternal("nobody"));
  const std::string reason = "relayed a message for vertex " + nobody + ", which partition " +
                             std::to_string(owner) + " does not have";
  const std::string failed = ExpectFailedThenServed(cluster_.workers(), reason, reason);
  StopAndCheckPublished(failed, 2);
}

TEST_F(FaultTest, MessageToAnIdNoVertexHasInTheSendersOwnRange) {
  const auto [sender, owner] = SenderFor(true);
  ASSERT_FALSE(sender.empty());
  cluster_.StartMaster(MasterArgs(
      {"--every", "1s", "--min-workers", "2", "--nobody-superstep", "1", "--nobody-from", sender}));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  const std::string nobody = bsp::ToString(bsp::VertexIdFromExternal("nobody"));
  const std::string reason =
      "vertex '" + sender + "' sent a message to vertex " + nobody + ", which is not in the graph";
  const std::string failed = ExpectFailedThenServed(cluster_.workers(), reason, reason);
  StopAndCheckPublished(failed, 2);
}

// --- Processes that die or are told to stop in the middle of a superstep.

// Slow supersteps (for the first job only): 0.4 s of compute each, 30 of them.
const std::vector<std::string> kSlow = {"--sleep-ms", "400", "--iterations", "30"};

std::vector<std::string> Cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Each worker reads only its share of the input: a bad line in the last worker's share fails the
// job on every worker with the file and the line in the whole file, publishes nothing, and the
// master serves the next job (once the file is mended).
TEST_F(FaultTest, ABadLineInTheLastWorkersShareNamesTheFileAndItsLine) {
  const std::string good = FaultGraph();
  std::vector<std::string> lines;
  for (size_t at = 0; at < good.size();) {
    const size_t nl = good.find('\n', at);
    lines.push_back(good.substr(at, nl - at));
    at = nl + 1;
  }
  ASSERT_GT(lines.size(), 850u);
  lines[849] = "849";  // one ID: line 850 of the file, in the last third of its bytes
  std::string bad;
  for (const std::string& l : lines) bad += l + "\n";
  WriteFile(graph_, bad);
  Process& master = cluster_.StartMaster(
      MasterArgs({"--every", "1s", "--min-workers", "3", "--max-workers", "3"}));
  ASSERT_NE(cluster_.port(), 0);
  std::vector<Process*> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(&cluster_.StartWorker());
  ASSERT_TRUE(master.WaitForLog("aborted: ", 30s)) << master.Log();
  WriteFile(graph_, good);
  const std::string where = graph_.string() + ":850: ";
  const std::string failed = ExpectFailedThenServed(workers, where, where);
  StopAndCheckPublished(failed, 3);
}

// A directory of files is one input whose shares are byte ranges of the files' concatenation: a
// bad line in its last file, in the last worker's share, fails every worker with that file and
// the line in that file, as `run` reports it; nothing is published, and the master serves the
// next job (once the file is mended).
TEST_F(FaultTest, ABadLineInADirectoryNamesItsFileAndTheLineInIt) {
  const std::string good = FaultGraph();
  // Lines 1-100, 101-500 and 501-900: each of the 3 workers' shares (about 300 lines) but the
  // last spans two files.
  std::vector<std::string> files(3);
  size_t line = 0;
  for (size_t at = 0; at < good.size(); ++line) {
    const size_t nl = good.find('\n', at);
    files[line < 100 ? 0 : line < 500 ? 1 : 2] += good.substr(at, nl + 1 - at);
    at = nl + 1;
  }
  ASSERT_EQ(line, 900u);
  std::string bad_c = files[2];
  size_t at = 0;
  for (int l = 0; l < 349; ++l) at = bad_c.find('\n', at) + 1;
  bad_c.replace(at, bad_c.find('\n', at) - at, "849");  // line 350 of c, line 850 of the input
  graph_ = dir_ / "parts";
  fs::create_directories(graph_);
  WriteFile(graph_ / "a", files[0]);
  WriteFile(graph_ / "b", files[1]);
  WriteFile(graph_ / "c", bad_c);
  const std::string where = (graph_ / "c").string() + ":350: ";
  {
    // `run` says the same.
    Process::Options o;
    o.cwd = dir_.path();
    o.log = dir_ / "run.log";
    auto run = Process::Start(
        FAULT_BINARY,
        {"run", "pagerank", "--graph", graph_.string(), "--out", (dir_ / "run.txt").string()}, o);
    EXPECT_EQ(run->Wait(30s), 1);
    EXPECT_THAT(ReadFile(o.log), HasSubstr(where));
  }
  Process& master = cluster_.StartMaster(
      MasterArgs({"--every", "1s", "--min-workers", "3", "--max-workers", "3"}));
  ASSERT_NE(cluster_.port(), 0);
  std::vector<Process*> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(&cluster_.StartWorker());
  ASSERT_TRUE(master.WaitForLog("aborted: ", 30s)) << master.Log();
  WriteFile(graph_ / "c", files[2]);
  const std::string failed = ExpectFailedThenServed(workers, where, where);
  StopAndCheckPublished(failed, 3);
}

TEST_F(FaultTest, WorkerKilledMidSuperstepFailsTheJobWithin10sAndTheNextJobRuns) {
  Process& master =
      cluster_.StartMaster(MasterArgs(Cat({"--every", "1s", "--min-workers", "2"}, kSlow)));
  ASSERT_NE(cluster_.port(), 0);
  Process& survivor = cluster_.StartWorker();
  Process& victim = cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 1 |", 30s)) << master.Log();
  const auto killed = Clock::now();
  victim.Kill();
  ASSERT_TRUE(master.WaitForLog("aborted: ", 10s)) << "the job did not fail within 10 s";
  EXPECT_LT(SecondsSince(killed), 10.0);
  cluster_.StartWorker();  // the replacement, for the next job's two workers
  const std::string failed = ExpectFailedThenServed({&survivor}, "disconnected", "disconnected");
  StopAndCheckPublished(failed, 2);
}

TEST_F(FaultTest, WorkerKilledMidSuperstepMakesAOneJobMasterExitNonZeroWithin15s) {
  Process& master = cluster_.StartMaster(MasterArgs(Cat({"--min-workers", "2"}, kSlow)));
  ASSERT_NE(cluster_.port(), 0);
  Process& survivor = cluster_.StartWorker();
  Process& victim = cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 1 |", 30s)) << master.Log();
  EXPECT_TRUE(victim.WaitForLog("superstep 1 |", 5s));  // the worker's own progress (debug)
  const auto killed = Clock::now();
  victim.Kill();
  const auto code = master.Wait(15s);
  ASSERT_TRUE(code.has_value()) << "the master still runs 15 s after a worker was killed";
  EXPECT_LT(SecondsSince(killed), 15.0);
  EXPECT_NE(*code, 0);
  EXPECT_LT(*code, 128) << "the master died of a signal";
  EXPECT_THAT(master.Log(), AllOf(HasSubstr("aborted: "), HasSubstr("disconnected")));
  EXPECT_EQ(Beside(), std::set<std::string>{}) << "a failed job published or left something";
  EXPECT_TRUE(survivor.WaitForLog("failed: ", 10s));
  EXPECT_THAT(LineWith(survivor.Log(), "failed: "), HasSubstr("disconnected"));
  cluster_.Stop();
  EXPECT_EQ(survivor.exit_code(), 0);
}

TEST_F(FaultTest, MasterKilledMidJobWorkersRedialAndServeTheNextMaster) {
  Process& master = cluster_.StartMaster(MasterArgs(Cat({"--min-workers", "2"}, kSlow)));
  ASSERT_NE(cluster_.port(), 0);
  const int port = cluster_.port();
  cluster_.StartWorker();
  cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 1 |", 30s)) << master.Log();
  const std::string first_job = JobIdOf(LineWith(master.Log(), " on 2 workers"));
  master.Kill();
  for (Process* w : cluster_.workers()) {
    EXPECT_TRUE(w->WaitForLog("failed: ", 10s)) << w->command() << " did not notice";
    EXPECT_THAT(LineWith(w->Log(), "failed: "), HasSubstr("job " + first_job));
    EXPECT_TRUE(w->Running());
  }
  // A new master on the same port: the workers redial and run its job (the faults are spent).
  Process& second = cluster_.StartMasterOnPort(port, MasterArgs({"--min-workers", "2"}));
  // Redialling backs off to at most 2 s between attempts, so both are back well within 6 s.
  EXPECT_TRUE(second.WaitForLogCount(" connected", 2, 6s)) << "the workers were slow to redial";
  const auto code = second.Wait(60s);
  ASSERT_TRUE(code.has_value()) << "the new master's job did not finish";
  EXPECT_EQ(*code, 0) << second.Log();
  for (Process* w : cluster_.workers()) {
    EXPECT_TRUE(w->WaitForLog(": completed", 10s)) << w->command();
  }
  auto published = ReadPublished(out_, 2);
  ASSERT_TRUE(published.has_value());
  EXPECT_NE(published->job_id, first_job);
  // The killed master's staging directory and lease were removed by the next master (its lease
  // is dead: its holder no longer runs), so only the published result is left.
  ExpectOnlyPublished();
  EXPECT_THAT(second.Log(), HasSubstr(".out." + first_job +
                                      ".staging, left by a master that is "
                                      "gone"));
  cluster_.Stop();
}

TEST_F(FaultTest, SigtermToAPeriodicMasterAbortsTheRunningJobAndExits) {
  Process& master =
      cluster_.StartMaster(MasterArgs(Cat({"--every", "1s", "--min-workers", "2"}, kSlow)));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 1 |", 30s)) << master.Log();
  master.Signal(SIGTERM);
  const auto code = master.Wait(10s);
  ASSERT_TRUE(code.has_value()) << "the master still runs 10 s after SIGTERM";
  EXPECT_LT(*code, 128) << "the master died of the signal instead of handling it";
  EXPECT_THAT(LineWith(master.Log(), "aborted: "), HasSubstr("master is shutting down"));
  for (Process* w : cluster_.workers()) {
    EXPECT_TRUE(w->WaitForLog("failed: ", 10s)) << w->command();
    EXPECT_THAT(LineWith(w->Log(), "failed: "), HasSubstr("master is shutting down"));
    EXPECT_TRUE(w->Running()) << "a worker outlives its master";
  }
  EXPECT_EQ(Beside(), std::set<std::string>{}) << "an aborted job published or left something";
  cluster_.Stop();
  for (Process* w : cluster_.workers()) EXPECT_EQ(w->exit_code(), 0);
}

TEST_F(FaultTest, SigtermToAWorkerMidJobFailsTheJobWithTheWorkersReason) {
  Process& master =
      cluster_.StartMaster(MasterArgs(Cat({"--every", "1s", "--min-workers", "2"}, kSlow)));
  ASSERT_NE(cluster_.port(), 0);
  Process& survivor = cluster_.StartWorker();
  Process& leaving = cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 1 |", 30s)) << master.Log();
  leaving.Signal(SIGTERM);
  const auto code = leaving.Wait(10s);
  ASSERT_TRUE(code.has_value()) << "the worker still runs 10 s after SIGTERM";
  EXPECT_EQ(*code, 0) << leaving.Log();
  cluster_.StartWorker();  // the replacement
  const std::string reason = "the worker is shutting down (SIGTERM)";
  const std::string failed = ExpectFailedThenServed({&survivor, &leaving}, reason, reason);
  StopAndCheckPublished(failed, 2);
}

// A frozen process (SIGSTOP: its sockets stay open, nothing answers) is what a vanished peer looks
// like to keepalive: no answer to its ping within 10 s (pings every 2 s) is a failure. It must not
// be declared dead much sooner: a worker starved of CPU was, after 4-7 s (issue 10, defect 5).
TEST_F(FaultTest, AFrozenWorkerIsNoticedByKeepaliveWithin15s) {
  Process& master = cluster_.StartMaster(MasterArgs(Cat({"--min-workers", "2"}, kSlow)));
  ASSERT_NE(cluster_.port(), 0);
  Process& survivor = cluster_.StartWorker();
  Process& frozen = cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 1 |", 30s)) << master.Log();
  const auto stopped = Clock::now();
  ::kill(frozen.pid(), SIGSTOP);
  const auto code = master.Wait(15s);
  const double noticed = SecondsSince(stopped);
  frozen.Kill();
  ASSERT_TRUE(code.has_value()) << "the master did not notice a frozen worker within 15 s";
  EXPECT_LT(noticed, 15.0);
  EXPECT_GE(noticed, 9.0) << "a worker silent for less than keepalive's 10 s was declared dead";
  EXPECT_NE(*code, 0);
  EXPECT_THAT(LineWith(master.Log(), "aborted: "), HasSubstr("disconnected"));
  EXPECT_TRUE(survivor.WaitForLog("failed: ", 5s));
  EXPECT_EQ(Beside(), std::set<std::string>{});
  cluster_.Stop();
}

TEST_F(FaultTest, AFrozenMasterIsNoticedWithin15s) {
  Process& master = cluster_.StartMaster(MasterArgs(Cat({"--min-workers", "2"}, kSlow)));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 1 |", 30s)) << master.Log();
  ::kill(master.pid(), SIGSTOP);
  for (Process* w : cluster_.workers()) {
    EXPECT_TRUE(w->WaitForLog("failed: ", 15s)) << w->command() << " did not notice within 15 s";
    EXPECT_TRUE(w->Running());
  }
  master.Kill();
  cluster_.Stop();
  for (Process* w : cluster_.workers()) EXPECT_EQ(w->exit_code(), 0);
}

// A worker stopped for less than --peer-timeout (and keepalive's 10 s) is only slow: the job
// completes (defect 5).
TEST_F(FaultTest, AWorkerStoppedShorterThanThePeerTimeoutOnlySlowsTheJob) {
  Process& master =
      cluster_.StartMaster(MasterArgs(Cat({"--min-workers", "2", "--peer-timeout", "8s"}, kSlow)));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  Process& paused = cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 1 |", 30s)) << master.Log();
  ::kill(paused.pid(), SIGSTOP);
  std::this_thread::sleep_for(4s);
  ::kill(paused.pid(), SIGCONT);
  const auto code = master.Wait(60s);
  ASSERT_TRUE(code.has_value()) << "the job did not finish";
  EXPECT_EQ(*code, 0) << master.Log();
  auto published = ReadPublished(out_, 2);
  ASSERT_TRUE(published.has_value());
  EXPECT_EQ(published->lines.size(), static_cast<size_t>(kVertices));
  cluster_.Stop();
}

// A worker that joins a job and then says nothing (stopped before the job began) holds the first
// barrier until --peer-timeout, which fails the job naming it (defects 5 and 8), well before
// keepalive would.
TEST_F(FaultTest, AWorkerSilentPastThePeerTimeoutFailsTheJobNamingIt) {
  Process& master =
      cluster_.StartMaster(MasterArgs({"--min-workers", "2", "--peer-timeout", "2s"}));
  ASSERT_NE(cluster_.port(), 0);
  Process& silent = cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog(" connected", 10s));
  ::kill(silent.pid(), SIGSTOP);
  Process& survivor = cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog(" on 2 workers", 10s)) << master.Log();
  const auto started = Clock::now();
  ASSERT_TRUE(master.WaitForLog("aborted: ", 8s)) << "the job still waits for a silent worker";
  const double waited = SecondsSince(started);
  EXPECT_GE(waited, 1.5);
  EXPECT_LT(waited, 6.0) << "the silent worker was given a hang-up grace it cannot use";
  const auto code = master.Wait(5s);
  silent.Kill();
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  const std::string aborted = LineWith(master.Log(), "aborted: ");
  EXPECT_THAT(aborted, AllOf(HasSubstr("has not entered PRE of superstep 0 within 2 s "
                                       "(--peer-timeout)"),
                             HasSubstr("worker ")));
  // The silent one is named by its address, the one the master logged when it connected.
  const std::string connected = LineWith(master.Log(), " connected");
  const std::string address = connected.substr(
      connected.find("worker ") + 7, connected.find(" connected") - connected.find("worker ") - 7);
  EXPECT_THAT(aborted, HasSubstr("(" + address + ") has not entered")) << connected;
  EXPECT_TRUE(survivor.WaitForLog("failed: ", 5s));
  EXPECT_EQ(Beside(), std::set<std::string>{});
  cluster_.Stop();
}

// A worker that goes through the protocol but whose part is missing or damaged: the master
// checks every part before it publishes, fails the job naming the worker, publishes nothing, and
// serves the next job (defect 7).
TEST_F(FaultTest, AMissingPartFailsTheJobInsteadOfPublishingIt) {
  cluster_.StartMaster(
      MasterArgs({"--every", "1s", "--min-workers", "2", "--skip-part-worker", "1"}));
  ASSERT_NE(cluster_.port(), 0);
  Process& a = cluster_.StartWorker();
  Process& b = cluster_.StartWorker();
  const std::string failed = ExpectFailedThenServed(
      {&a, &b}, "part-00001 is missing (its worker reported", "job aborted by the master");
  StopAndCheckPublished(failed, 2);
}

TEST_F(FaultTest, ADamagedPartFailsTheJobInsteadOfPublishingIt) {
  cluster_.StartMaster(
      MasterArgs({"--every", "1s", "--min-workers", "2", "--damage-part-worker", "0"}));
  ASSERT_NE(cluster_.port(), 0);
  Process& a = cluster_.StartWorker();
  Process& b = cluster_.StartWorker();
  const std::string failed =
      ExpectFailedThenServed({&a, &b}, "part-00000 has CRC-32C", "job aborted by the master");
  StopAndCheckPublished(failed, 2);
}

TEST_F(FaultTest, AFailedJobLeavesThePreviousResultUntouched) {
  Process& first = cluster_.StartMaster(MasterArgs({"--min-workers", "2"}));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  ASSERT_EQ(first.Wait(30s), 0) << first.Log();
  auto before = ReadPublished(out_, 2);
  ASSERT_TRUE(before.has_value());
  const fs::path target = fs::read_symlink(out_);
  // The second job fails in complete-job on worker 1, after worker 0 may have written its part.
  Process& second = cluster_.StartMasterOnPort(
      cluster_.port(), MasterArgs({"--min-workers", "2", "--fail-complete-worker", "1"}, "fault",
                                  (dir_ / "second.marker").string()));
  const auto code = second.Wait(30s);
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  EXPECT_THAT(second.Log(), HasSubstr("fault injected: complete-job fails on worker 1"));
  EXPECT_EQ(fs::read_symlink(out_), target);
  auto after = ReadPublished(out_, 2);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->job_id, before->job_id);
  EXPECT_EQ(after->success_json, before->success_json);
  EXPECT_EQ(after->lines, before->lines);
  ExpectOnlyPublished();
  cluster_.Stop();
}

// --- The worker pool.

TEST_F(FaultTest, SigtermWhileWaitingForWorkersExitsCleanly) {
  Process& master = cluster_.StartMaster(MasterArgs({"--min-workers", "2"}));
  ASSERT_NE(cluster_.port(), 0);
  Process& worker = cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog(" connected", 10s));
  master.Signal(SIGTERM);
  const auto code = master.Wait(5s);
  ASSERT_TRUE(code.has_value()) << "the master still waits for workers after SIGTERM";
  EXPECT_LT(*code, 128);
  EXPECT_EQ(Beside(), std::set<std::string>{});
  EXPECT_TRUE(worker.WaitForLog("master is shutting down", 5s)) << worker.Log();
  EXPECT_TRUE(worker.Running());
  cluster_.Stop();
  EXPECT_EQ(worker.exit_code(), 0);
}

TEST_F(FaultTest, AWorkerThatConnectsDuringAJobWaitsForTheNext) {
  Process& master = cluster_.StartMaster(MasterArgs(
      {"--every", "1s", "--min-workers", "1", "--sleep-ms", "300", "--iterations", "8"}));
  ASSERT_NE(cluster_.port(), 0);
  cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 0 |", 30s)) << master.Log();
  const std::string first_job = JobIdOf(LineWith(master.Log(), " on 1 worker"));
  ASSERT_FALSE(first_job.empty()) << master.Log();
  Process& late = cluster_.StartWorker();
  EXPECT_TRUE(master.WaitForLogCount(" connected", 2, 10s)) << "the late worker did not connect";
  ASSERT_TRUE(master.WaitForLog("job " + first_job + ": completed", 30s)) << master.Log();
  EXPECT_THAT(late.Log(), Not(HasSubstr("job " + first_job)));
  // The next job takes both.
  ASSERT_TRUE(master.WaitForLog(" on 2 workers", 30s)) << master.Log();
  const std::string second_job = JobIdOf(LineWith(master.Log(), " on 2 workers"));
  ASSERT_TRUE(master.WaitForLog("job " + second_job + ": completed", 30s)) << master.Log();
  EXPECT_THAT(late.Log(), HasSubstr("job " + second_job + " worker"));
  cluster_.Stop();
  ExpectOnlyPublished();
}

TEST_F(FaultTest, MinWorkersBlocksUntilEnoughJoin) {
  Process& master = cluster_.StartMaster(MasterArgs({"--min-workers", "2"}));
  ASSERT_NE(cluster_.port(), 0);
  Process& first = cluster_.StartWorker();
  ASSERT_TRUE(master.WaitForLog(" connected", 10s));
  std::this_thread::sleep_for(1500ms);
  EXPECT_TRUE(master.Running());
  EXPECT_THAT(master.Log(), Not(HasSubstr(" on 1 worker")));
  EXPECT_THAT(first.Log(), Not(HasSubstr("started")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(out_)));
  cluster_.StartWorker();
  const auto code = master.Wait(30s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << master.Log();
  EXPECT_THAT(master.Log(), HasSubstr(" on 2 workers"));
  auto published = ReadPublished(out_, 2);
  ASSERT_TRUE(published.has_value());
  ExpectOnlyPublished();
  cluster_.Stop();
}

TEST_F(FaultTest, MaxWorkersCapsTheJob) {
  Process& master = cluster_.StartMaster(
      MasterArgs({"--min-workers", "2", "--max-workers", "2", "--last-call", "300ms"}));
  ASSERT_NE(cluster_.port(), 0);
  for (int i = 0; i < 3; ++i) cluster_.StartWorker();
  const auto code = master.Wait(30s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << master.Log();
  EXPECT_THAT(master.Log(), HasSubstr(" on 2 workers"));
  ASSERT_TRUE(ReadPublished(out_, 2).has_value());
  cluster_.Stop();
}

TEST_F(FaultTest, MinWorkersAboveMaxWorkersIsRefused) {
  Process& master =
      cluster_.StartMaster(MasterArgs({"--min-workers", "3", "--max-workers", "2"}), false);
  const auto code = master.Wait(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  EXPECT_THAT(master.Log(), HasSubstr("--min-workers 3 exceeds --max-workers 2"));
}

TEST_F(FaultTest, AcquireTimeoutWithoutWorkersFailsCleanly) {
  const auto start = Clock::now();
  Process& master = cluster_.StartMaster(MasterArgs({"--acquire-timeout", "1s"}));
  ASSERT_NE(cluster_.port(), 0);
  const auto code = master.Wait(10s);
  ASSERT_TRUE(code.has_value()) << "the master waits for ever";
  EXPECT_NE(*code, 0);
  EXPECT_LT(*code, 128);
  EXPECT_GE(SecondsSince(start), 1.0);
  EXPECT_THAT(master.Log(), HasSubstr("unable to reserve"));
  EXPECT_EQ(Beside(), std::set<std::string>{}) << "a job that never ran left something";
}

}  // namespace
}  // namespace lockstep::testing
