// Recovery with real processes on 127.0.0.1 (docs/design.md §7.5): a worker killed mid-job ends
// the attempt, not the job; the master goes on from the newest complete checkpoint (or the start)
// on the workers it has, spares first, and publishes exactly the failure-free answer. Also: a kill
// before the first checkpoint, a kill while a checkpoint is written, two workers killed at once,
// --max-restarts exhausted, and a master killed mid-job whose job the next master on the same
// checkpoint directory finishes (§7.7) while a second one refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

class RecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    graph_ = dir_ / "graph.el";
    auto gen = Process::Start(
        FAULT_BINARY,
        {"generate", "kronecker", "--scale", "11", "--degree", "8", "--out", graph_.string()},
        {dir_.path(), dir_ / "generate.log", {}});
    ASSERT_EQ(gen->Wait(60s), 0) << gen->Log();
    fs::create_directories(dir_ / "res");
    out_ = dir_ / "res" / "out";
    // The failure-free answer.
    auto run = Process::Start(
        FAULT_BINARY,
        {"run", "pagerank", "--graph", graph_.string(), "--undirected", "--tolerance", "0",
         "--max-iterations", "400", "--out", (dir_ / "local.txt").string()},
        {dir_.path(), dir_ / "local.log", {}});
    ASSERT_EQ(run->Wait(60s), 0) << run->Log();
    expected_ = SortedLines(ReadFile(dir_ / "local.txt"));
    ASSERT_GT(expected_.size(), 1000u);
  }

  Process& StartMaster(uint32_t workers, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--app",
                                     "pagerank",
                                     "--graph",
                                     graph_.string(),
                                     "--undirected",
                                     "--tolerance",
                                     "0",
                                     "--max-iterations",
                                     "400",
                                     "--out",
                                     out_.string(),
                                     "--min-workers",
                                     std::to_string(workers),
                                     "--max-workers",
                                     std::to_string(workers),
                                     "--checkpoint-dir",
                                     (dir_ / "checkpoints").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return cluster_.StartMaster(args);
  }

  // The master's one job published the failure-free answer after `attempts` attempts, from
  // `parts` workers; returns _SUCCESS.
  nlohmann::json ExpectPublishedAfter(Process& master, int attempts, size_t parts) {
    const auto code = master.Wait(90s);
    EXPECT_TRUE(code.has_value()) << "the job did not end";
    EXPECT_EQ(code.value_or(-1), 0) << master.Log();
    auto published = ReadPublished(out_, parts);
    if (!published) {
      ADD_FAILURE() << "nothing published";
      return {};
    }
    EXPECT_EQ(published->lines, expected_) << "the recovered job's answer differs";
    const nlohmann::json success = nlohmann::json::parse(published->success_json);
    EXPECT_EQ(success["attempts"], attempts);
    EXPECT_TRUE(fs::is_empty(dir_ / "checkpoints")) << "the job's checkpoints outlived it";
    return success;
  }

  // A worker that serves one job (a retried attempt does not count).
  Process& StartWorker() { return cluster_.StartWorker({"--max-jobs", "1"}); }

  // The complete checkpoints (with a manifest) in an attempt's directory, newest first.
  static std::vector<fs::path> CompleteCheckpoints(const fs::path& attempt) {
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(attempt)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("superstep-", 0) == 0 && fs::exists(entry.path() / "MANIFEST")) {
        found.push_back(entry.path());
      }
    }
    std::sort(found.rbegin(), found.rend());
    return found;
  }

  // The job's ID, from the master's log once it has started.
  std::string JobId(Process& master) {
    EXPECT_TRUE(master.WaitForLog(" on 2 workers", 60s)) << master.Log();
    std::smatch m;
    const std::string log = master.Log();
    if (!std::regex_search(log, m, std::regex("job ([0-9a-f-]{36}): pagerank on"))) return "";
    return m[1];
  }

  TempDir dir_{"lockstep-recovery"};
  fs::path graph_, out_;
  std::vector<std::string> expected_;
  Cluster cluster_{FAULT_BINARY, dir_.path()};
};

TEST_F(RecoveryTest, AKilledWorkerIsReplacedByASpareFromTheNewestCheckpoint) {
  Process& master = StartMaster(
      3, {"--checkpoint-every", "10", "--max-restarts", "1", "--recovery-timeout", "30s"});
  ASSERT_NE(cluster_.port(), 0);
  std::vector<Process*> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(&StartWorker());
  ASSERT_TRUE(master.WaitForLog("checkpoint before superstep 20 is complete", 60s)) << master.Log();
  workers[1]->Kill();
  StartWorker();  // the spare
  const nlohmann::json success = ExpectPublishedAfter(master, 2, 3);
  ASSERT_EQ(success["restarts"].size(), 1u) << success.dump();
  const nlohmann::json& restart = success["restarts"][0];
  EXPECT_EQ(restart["workers_before"], 3);
  EXPECT_EQ(restart["workers"], 3);
  EXPECT_GE(restart["restored_superstep"].get<int>(), 20);
  EXPECT_EQ(restart["restored_superstep"].get<int>() % 10, 0);
  EXPECT_THAT(restart["after"].get<std::string>(), HasSubstr("disconnected"));
  EXPECT_LT(restart["recovery_seconds"].get<double>(), 10.0);
  EXPECT_THAT(master.Log(), HasSubstr("recovering from the checkpoint at superstep"));
  EXPECT_THAT(master.Log(), HasSubstr("ms | attempt 2\n"));  // the progress lines say so
  // The survivors served the job to its end: the aborted attempt did not count as their one job.
  for (Process* w : {workers[0], workers[2]}) {
    EXPECT_EQ(w->Wait(30s), 0) << w->Log();
    EXPECT_THAT(w->Log(), HasSubstr(": completed;"));
  }
}

TEST_F(RecoveryTest, WithoutASpareTheJobGoesOnWithFewerWorkers) {
  Process& master = StartMaster(
      3, {"--checkpoint-every", "10", "--max-restarts", "1", "--recovery-timeout", "1s"});
  ASSERT_NE(cluster_.port(), 0);
  std::vector<Process*> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(&StartWorker());
  ASSERT_TRUE(master.WaitForLog("checkpoint before superstep 20 is complete", 60s)) << master.Log();
  workers[0]->Kill();
  const nlohmann::json success = ExpectPublishedAfter(master, 2, 2);
  EXPECT_EQ(success["workers"], 2);
  EXPECT_EQ(success["restarts"][0]["workers"], 2);
  EXPECT_THAT(master.Log(), HasSubstr("attempt 2 on 2 workers"));
}

// SIGTERM (a pod evicted, a node drained) is a worker lost, not an error of the job.
TEST_F(RecoveryTest, AWorkerThatLeavesOnSigtermIsRecoveredFrom) {
  Process& master = StartMaster(
      2, {"--checkpoint-every", "10", "--max-restarts", "1", "--recovery-timeout", "30s"});
  ASSERT_NE(cluster_.port(), 0);
  Process& leaving = StartWorker();
  StartWorker();
  ASSERT_TRUE(master.WaitForLog("checkpoint before superstep 20 is complete", 60s)) << master.Log();
  leaving.Signal(SIGTERM);
  EXPECT_EQ(leaving.Wait(10s), 0) << leaving.Log();
  StartWorker();
  const nlohmann::json success = ExpectPublishedAfter(master, 2, 2);
  EXPECT_THAT(success["restarts"][0]["after"].get<std::string>(),
              HasSubstr("is leaving: the worker is shutting down (SIGTERM)"));
}

TEST_F(RecoveryTest, AKillBeforeTheFirstCheckpointStartsOver) {
  Process& master = StartMaster(2, {"--checkpoint-every", "1000", "--max-restarts", "1"});
  ASSERT_NE(cluster_.port(), 0);
  Process& victim = StartWorker();
  StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 3 |", 60s)) << master.Log();
  victim.Kill();
  StartWorker();
  const nlohmann::json success = ExpectPublishedAfter(master, 2, 2);
  EXPECT_EQ(success["restarts"][0]["restored_superstep"], 0);
  EXPECT_THAT(master.Log(), HasSubstr("recovering from the start"));
}

// --checkpoint-interval: checkpoints by time, not by supersteps.
TEST_F(RecoveryTest, CheckpointsByTimeAreRecoveredFrom) {
  Process& master = StartMaster(
      2, {"--checkpoint-interval", "50ms", "--max-restarts", "1", "--recovery-timeout", "30s"});
  ASSERT_NE(cluster_.port(), 0);
  Process& victim = StartWorker();
  StartWorker();
  ASSERT_TRUE(master.WaitForLogCount(" is complete", 2, 60s)) << master.Log();
  victim.Kill();
  StartWorker();
  const nlohmann::json success = ExpectPublishedAfter(master, 2, 2);
  EXPECT_GT(success["restarts"][0]["restored_superstep"].get<int>(), 0) << success.dump();
}

// A straggler (here a worker stopped for 1.5 s) is reported in the log and the progress lines, and
// the job goes on with it.
TEST_F(RecoveryTest, AStragglerIsReported) {
  Process& master = StartMaster(2, {"--checkpoint-every", "1000", "--straggler-timeout", "300ms"});
  ASSERT_NE(cluster_.port(), 0);
  Process& slow = StartWorker();
  StartWorker();
  ASSERT_TRUE(master.WaitForLog("superstep 5 |", 60s)) << master.Log();
  slow.Signal(SIGSTOP);
  std::this_thread::sleep_for(1500ms);
  slow.Signal(SIGCONT);
  ExpectPublishedAfter(master, 1, 2);
  EXPECT_THAT(master.Log(), HasSubstr("after the other workers (--straggler-timeout)"));
  EXPECT_THAT(master.Log(), HasSubstr("| stragglers: worker "));
}

// With --replace-stragglers a straggler is lost: the job goes on from its checkpoint without it.
TEST_F(RecoveryTest, AStragglerIsReplacedWhenAskedTo) {
  Process& master =
      StartMaster(2, {"--checkpoint-every", "10", "--max-restarts", "1", "--recovery-timeout",
                      "30s", "--straggler-timeout", "300ms", "--replace-stragglers"});
  ASSERT_NE(cluster_.port(), 0);
  Process& slow = StartWorker();
  StartWorker();
  ASSERT_TRUE(master.WaitForLog("checkpoint before superstep 20 is complete", 60s)) << master.Log();
  slow.Signal(SIGSTOP);
  StartWorker();  // the spare
  const nlohmann::json success = ExpectPublishedAfter(master, 2, 2);
  EXPECT_THAT(success["restarts"][0]["after"].get<std::string>(),
              HasSubstr("replaced (--replace-stragglers)"));
  slow.Signal(SIGCONT);
}

// A checkpoint damaged on disk (here truncated after its manifest was written) is refused with an
// error naming its file when an attempt would restore it, never half loaded, and passed over: the
// next attempt (not counted as a restart) goes on from an older one or the start, and publishes
// the failure-free answer.
TEST_F(RecoveryTest, ACorruptCheckpointIsRefusedAndPassedOver) {
  Process& master = StartMaster(2, {"--checkpoint-every", "10", "--checkpoint-keep", "1",
                                    "--max-restarts", "1", "--recovery-timeout", "30s"});
  ASSERT_NE(cluster_.port(), 0);
  Process& victim = StartWorker();
  Process& other = StartWorker();
  const std::string job = JobId(master);
  ASSERT_FALSE(job.empty()) << master.Log();
  ASSERT_TRUE(master.WaitForLog("checkpoint before superstep 20 is complete", 60s)) << master.Log();
  // Both workers stopped: no checkpoint after 20 can complete while the file is damaged.
  victim.Signal(SIGSTOP);
  other.Signal(SIGSTOP);
  std::this_thread::sleep_for(300ms);  // a manifest the master was writing is written by then
  const fs::path attempt = dir_ / "checkpoints" / job / "attempt-1";
  std::string newest;
  for (const auto& entry : fs::directory_iterator(attempt)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("superstep-", 0) == 0 && fs::exists(entry.path() / "MANIFEST") &&
        name > newest) {
      newest = name;
    }
  }
  ASSERT_FALSE(newest.empty());
  const fs::path file = attempt / newest / "part-00001.ckpt";
  std::error_code ec;  // a checkpoint may be pruned meanwhile: it is then replaced below
  fs::resize_file(file, fs::file_size(file, ec) / 2, ec);
  // A manifest the master was still writing (its workers had both said their files were durable)
  // may list one more checkpoint: with both workers stopped, no other can follow.
  std::this_thread::sleep_for(1s);
  for (const auto& entry : fs::directory_iterator(attempt)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("superstep-", 0) == 0 && name > newest &&
        fs::exists(entry.path() / "MANIFEST")) {
      const fs::path later = entry.path() / "part-00001.ckpt";
      fs::resize_file(later, fs::file_size(later, ec) / 2, ec);
      newest = name;
    }
  }
  victim.Kill();
  other.Signal(SIGCONT);
  StartWorker();
  const nlohmann::json success = ExpectPublishedAfter(master, 3, 2);
  ASSERT_TRUE(success.is_object()) << master.Log();
  const std::string refused = "checkpoint file " + (attempt / newest / "part-00001.ckpt").string();
  EXPECT_THAT(master.Log(), HasSubstr(refused));
  EXPECT_THAT(master.Log(), HasSubstr("is corrupt or truncated"));
  EXPECT_THAT(master.Log(),
              HasSubstr("checkpoint " + (attempt / newest).string() + " is passed over: "));
  ASSERT_EQ(success["restarts"].size(), 2u) << success.dump();
  EXPECT_THAT(success["restarts"][1]["after"].get<std::string>(), HasSubstr(refused));
  EXPECT_LT(success["restarts"][1]["restored_superstep"].get<int>(),
            success["restarts"][0]["restored_superstep"].get<int>());
}

TEST_F(RecoveryTest, TwoWorkersKilledAtOnce) {
  Process& master = StartMaster(
      4, {"--checkpoint-every", "10", "--max-restarts", "2", "--recovery-timeout", "1s"});
  ASSERT_NE(cluster_.port(), 0);
  std::vector<Process*> workers;
  for (int i = 0; i < 4; ++i) workers.push_back(&StartWorker());
  ASSERT_TRUE(master.WaitForLog("checkpoint before superstep 20 is complete", 60s)) << master.Log();
  workers[1]->Kill();
  workers[3]->Kill();
  const nlohmann::json success = ExpectPublishedAfter(master, 2, 2);
  EXPECT_EQ(success["workers"], 2);
}

TEST_F(RecoveryTest, RestartsExhaustedAbortListingEveryAttempt) {
  Process& master = StartMaster(
      2, {"--checkpoint-every", "10", "--max-restarts", "1", "--recovery-timeout", "30s"});
  ASSERT_NE(cluster_.port(), 0);
  Process& first = StartWorker();
  StartWorker();
  ASSERT_TRUE(master.WaitForLog("checkpoint before superstep 20 is complete", 60s)) << master.Log();
  first.Kill();
  Process& second = StartWorker();
  ASSERT_TRUE(master.WaitForLog("attempt 2 on 2 workers", 60s)) << master.Log();
  ASSERT_TRUE(master.WaitForLogCount(" is complete", 3, 60s)) << master.Log();
  second.Kill();
  const auto code = master.Wait(60s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 1) << master.Log();
  const std::string log = master.Log();
  EXPECT_THAT(log, HasSubstr("aborted: attempt 1: "));
  EXPECT_THAT(log, HasSubstr("; attempt 2: "));
  EXPECT_FALSE(fs::exists(fs::symlink_status(out_))) << "a failed job published";
  EXPECT_TRUE(fs::is_empty(dir_ / "checkpoints"));
}

// A worker killed while it writes a checkpoint leaves nothing that is used: that checkpoint never
// gets its manifest, and the job resumes from the one before. The victim's write is held open: its
// temporary file (`<file>.tmp-<pid>`) is a FIFO that nobody reads, so it blocks in the open.
TEST_F(RecoveryTest, AWorkerKilledWhileWritingACheckpointLeavesItUnused) {
  Process& master = StartMaster(
      2, {"--checkpoint-every", "10", "--max-restarts", "1", "--recovery-timeout", "30s"});
  ASSERT_NE(cluster_.port(), 0);
  Process& victim = StartWorker();
  StartWorker();
  const std::string job = JobId(master);
  ASSERT_FALSE(job.empty()) << master.Log();
  const fs::path step = dir_ / "checkpoints" / job / "attempt-1" / "superstep-0000000390";
  fs::create_directories(step);
  for (const char* part : {"part-00000.ckpt", "part-00001.ckpt"}) {
    const fs::path fifo = step / (std::string(part) + ".tmp-" + std::to_string(victim.pid()));
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << fifo;
  }
  ASSERT_FALSE(master.Log().find("superstep 390 |") != std::string::npos)
      << "the job passed superstep 300 before the trap was set";
  ASSERT_TRUE(master.WaitForLog("checkpoint before superstep 390 taken", 60s)) << master.Log();
  // The victim's writer is in the open; the job goes on to the next checkpoint, where the victim
  // waits for it.
  ASSERT_TRUE(master.WaitForLog("superstep 395 |", 60s)) << master.Log();
  EXPECT_FALSE(fs::exists(step / "MANIFEST"));
  victim.Kill();
  StartWorker();  // the spare
  const nlohmann::json success = ExpectPublishedAfter(master, 2, 2);
  EXPECT_EQ(success["restarts"][0]["restored_superstep"], 380) << success.dump();
}

// A master SIGKILLed mid-job: the next master started with only its checkpoint directory (and its
// port, where the workers redial) finds the job, resumes it from the newest checkpoint and
// publishes the failure-free answer; another job's command line on that directory is refused, and
// so is a second master while the first drives the job.
TEST_F(RecoveryTest, AKilledMastersJobIsFinishedByTheNextMaster) {
  Process& first = StartMaster(
      2, {"--checkpoint-every", "10", "--max-restarts", "1", "--recovery-timeout", "30s"});
  const int port = cluster_.port();
  ASSERT_NE(port, 0);
  std::vector<Process*> workers = {&cluster_.StartWorker(), &cluster_.StartWorker()};
  ASSERT_TRUE(first.WaitForLog("checkpoint before superstep 20 is complete", 60s)) << first.Log();
  const std::string job = JobId(first);
  ASSERT_FALSE(job.empty()) << first.Log();
  first.Kill();
  // Held still, so that the job cannot end while the masters below are tried.
  for (Process* w : workers) w->Signal(SIGSTOP);

  const std::string dir = (dir_ / "checkpoints").string();
  Process& other = cluster_.StartMaster(
      {"--app", "pagerank", "--graph", graph_.string(), "--undirected", "--tolerance", "0",
       "--max-iterations", "400", "--damping", "0.5", "--out", out_.string(), "--checkpoint-dir",
       dir, "--checkpoint-every", "10"},
      /*wait_for_port=*/false);
  const auto other_code = other.Wait(30s);
  ASSERT_TRUE(other_code.has_value());
  EXPECT_EQ(*other_code, 2) << other.Log();
  EXPECT_THAT(other.Log(), HasSubstr("holds unfinished job " + job));
  EXPECT_THAT(other.Log(), HasSubstr("which is not the job on this command line (params.damping: "
                                     "recorded \"0.85\", given \"0.5\")"));

  Process& next = cluster_.StartMasterOnPort(port, {"--checkpoint-dir", dir});
  ASSERT_TRUE(next.WaitForLog("resuming job " + job + " from checkpoint at superstep", 30s))
      << next.Log();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--checkpoint-dir", dir},
        std::vector<std::string>{"--app", "pagerank", "--graph", graph_.string(), "--undirected",
                                 "--tolerance", "0", "--max-iterations", "400", "--out",
                                 out_.string(), "--checkpoint-dir", dir, "--checkpoint-every",
                                 "10"}}) {
    Process& second = cluster_.StartMaster(args, /*wait_for_port=*/false);
    const auto code = second.Wait(30s);
    ASSERT_TRUE(code.has_value());
    EXPECT_EQ(*code, 3) << second.Log();
    EXPECT_THAT(second.Log(), HasSubstr("is driven by a live master"));
  }
  for (Process* w : workers) w->Signal(SIGCONT);
  const nlohmann::json success = ExpectPublishedAfter(next, 2, 2);
  EXPECT_EQ(success["job_id"], job);
  ASSERT_EQ(success["restarts"].size(), 1u) << success.dump();
  EXPECT_EQ(success["restarts"][0]["after"], "the master restarted");
  EXPECT_GE(success["restarts"][0]["restored_superstep"].get<int>(), 20);
  cluster_.Stop();
}

// A master killed after two checkpoints, and then the newest one damaged on disk (a flipped byte
// in a part): the next master reads the checkpoints whole before it takes one, passes the damaged
// one over and resumes from the one before it, publishing the failure-free answer. Nothing it
// could use is removed before the job ends.
TEST_F(RecoveryTest, ACorruptNewestCheckpointIsPassedOverByTheNextMaster) {
  Process& first = StartMaster(
      2, {"--checkpoint-every", "10", "--max-restarts", "1", "--recovery-timeout", "30s"});
  const int port = cluster_.port();
  ASSERT_NE(port, 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  ASSERT_TRUE(first.WaitForLog("checkpoint before superstep 20 is complete", 60s)) << first.Log();
  const std::string job = JobId(first);
  ASSERT_FALSE(job.empty()) << first.Log();
  first.Kill();
  const std::vector<fs::path> complete =
      CompleteCheckpoints(dir_ / "checkpoints" / job / "attempt-1");
  ASSERT_GE(complete.size(), 2u);
  const fs::path part = complete[0] / "part-00000.ckpt";
  std::string bytes = ReadFile(part);
  ASSERT_FALSE(bytes.empty());
  bytes[bytes.size() / 2] ^= 0x20;
  std::ofstream(part, std::ios::binary | std::ios::trunc) << bytes;
  const int older = std::stoi(complete[1].filename().string().substr(10));

  Process& next =
      cluster_.StartMasterOnPort(port, {"--checkpoint-dir", (dir_ / "checkpoints").string()});
  ASSERT_TRUE(next.WaitForLog(
      "resuming job " + job + " from checkpoint at superstep " + std::to_string(older), 30s))
      << next.Log();
  EXPECT_THAT(next.Log(),
              HasSubstr("checkpoint " + complete[0].string() + " is passed over: checkpoint file " +
                        part.string() + " is corrupt or truncated"));
  const nlohmann::json success = ExpectPublishedAfter(next, 2, 2);
  ASSERT_TRUE(success.is_object()) << next.Log();
  EXPECT_EQ(success["restarts"][0]["restored_superstep"], older) << success.dump();
  cluster_.Stop();
}

// A master killed mid-job, and then its job record damaged: a flipped bit in its output path, or
// an edit of the damping. The next master refuses it (exit 1, naming the file), whether started
// with the directory alone or with a command line that matches the edit: it publishes nothing,
// anywhere, and leaves the directory as it is, so that once the record is put back the job
// finishes as it was.
TEST_F(RecoveryTest, ADamagedJobRecordIsRefusedAndKept) {
  Process& first = StartMaster(
      2, {"--checkpoint-every", "10", "--max-restarts", "1", "--recovery-timeout", "30s"});
  const int port = cluster_.port();
  ASSERT_NE(port, 0);
  cluster_.StartWorker();
  cluster_.StartWorker();
  ASSERT_TRUE(first.WaitForLog("checkpoint before superstep 20 is complete", 60s)) << first.Log();
  const std::string job = JobId(first);
  ASSERT_FALSE(job.empty()) << first.Log();
  first.Kill();

  const std::string dir = (dir_ / "checkpoints").string();
  const fs::path record = dir_ / "checkpoints" / job / "JOB";
  const std::string good = ReadFile(record);
  std::string flipped = good;
  const size_t at = flipped.find(out_.string());
  ASSERT_NE(at, std::string::npos) << good;
  flipped[at + out_.string().size() - 1] ^= 0x01;  // ".../res/out" reads ".../res/ouu"
  std::string edited = good;
  const std::string damping = "\"damping\": \"0.85\"";
  ASSERT_NE(edited.find(damping), std::string::npos) << good;
  edited.replace(edited.find(damping), damping.size(), "\"damping\": \"0.5\"");
  // The dead master's staging directory and lease stay where they are until a master publishes.
  auto listing = [this] {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_ / "res")) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> before = listing();
  const std::vector<std::string> given = {"--app",
                                          "pagerank",
                                          "--graph",
                                          graph_.string(),
                                          "--undirected",
                                          "--tolerance",
                                          "0",
                                          "--max-iterations",
                                          "400",
                                          "--damping",
                                          "0.5",
                                          "--out",
                                          out_.string(),
                                          "--checkpoint-dir",
                                          dir,
                                          "--checkpoint-every",
                                          "10"};
  for (const auto& [bytes, args] :
       {std::pair{flipped, std::vector<std::string>{"--checkpoint-dir", dir}},
        std::pair{edited, std::vector<std::string>{"--checkpoint-dir", dir}},
        std::pair{edited, given}}) {
    std::ofstream(record, std::ios::binary | std::ios::trunc) << bytes;
    Process& refused = cluster_.StartMaster(args, /*wait_for_port=*/false);
    const auto code = refused.Wait(30s);
    ASSERT_TRUE(code.has_value()) << refused.Log();
    EXPECT_EQ(*code, 1) << refused.Log();
    EXPECT_THAT(refused.Log(), HasSubstr("job record " + record.string() + " is damaged"));
    EXPECT_THAT(refused.Log(), HasSubstr("is left as it is"));
    EXPECT_EQ(ReadFile(record), bytes) << "the record was touched";
    EXPECT_FALSE(CompleteCheckpoints(record.parent_path() / "attempt-1").empty());
    EXPECT_EQ(listing(), before) << "a refused job published or staged something";
  }

  std::ofstream(record, std::ios::binary | std::ios::trunc) << good;
  Process& next = cluster_.StartMasterOnPort(port, {"--checkpoint-dir", dir});
  ASSERT_TRUE(next.WaitForLog("resuming job " + job + " from checkpoint at superstep", 30s))
      << next.Log();
  ExpectPublishedAfter(next, 2, 2);
  cluster_.Stop();
}

}  // namespace
}  // namespace lockstep::testing
