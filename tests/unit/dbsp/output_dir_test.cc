// Atomic publishing of a distributed job's result directory (docs/design.md §6): parts go to a
// staging directory that carries a lease, the master checks every part, adds _SUCCESS and swaps the
// DIR symlink over to the job's directory; the next master removes what dead masters left.
#include "job/output_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/dbsp/settings.h"
#include "util/temp_dir.h"

namespace lockstep::dbsp::job {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class OutputDirTest : public ::testing::Test {
 protected:
  // The names in `dir`, leases apart (they have tests of their own below).
  std::vector<std::string> List(const fs::path& dir) const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (!name.ends_with(".lease")) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  static void Write(const fs::path& file, const std::string& contents) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << contents;
    if (!out) throw std::runtime_error("cannot write " + file.string());
  }
  static std::string Read(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // PrepareOutput, holding the job's lease until the fixture ends.
  absl::StatusOr<JobOutput> Prepare(const std::string& dir, const std::string& job_id) {
    auto prepared = PrepareOutput(dir, job_id);
    if (!prepared.ok()) return prepared.status();
    leases_.push_back(std::move(prepared->lease));
    return prepared->output;
  }

  // A whole job: prepare, one part per worker, publish.
  JobOutput Publish(const std::string& job_id, const std::string& part) {
    auto out = Prepare(dir_, job_id);
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    Write(fs::path(out->staging) / ResultFileName(0), part);
    const absl::Status st = PublishOutput(*out, "{\"job_id\": \"" + job_id + "\"}\n");
    EXPECT_TRUE(st.ok()) << st;
    return *out;
  }

  test::TempDir temp_{"dbsp_output"};
  const fs::path root_ = temp_.path();
  std::string dir_ = (root_ / "result").string();
  std::vector<std::unique_ptr<Lease>> leases_;
};

TEST_F(OutputDirTest, PartNames) {
  EXPECT_EQ(ResultFileName(3), "part-00003");
  EXPECT_EQ(ResultFileName(0), "part-00000");
  EXPECT_EQ(ResultFileName(12345), "part-12345");
  EXPECT_EQ(ResultFileName(123456), "part-123456");
}

TEST_F(OutputDirTest, FreshPathStagesThenPublishesBehindASymlink) {
  auto out = Prepare(dir_, "job1");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->link, dir_);
  EXPECT_TRUE(fs::is_directory(out->staging));
  EXPECT_TRUE(fs::is_empty(out->staging));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_))) << "nothing is visible before the publish";
  EXPECT_FALSE(fs::exists(out->final));
  // Staging and final directories are hidden siblings of DIR.
  EXPECT_EQ(fs::path(out->staging).parent_path(), root_);
  EXPECT_EQ(fs::path(out->final).parent_path(), root_);
  EXPECT_TRUE(fs::path(out->final).filename().string().starts_with("."));

  Write(fs::path(out->staging) / ResultFileName(0), "a 1\n");
  Write(fs::path(out->staging) / ResultFileName(1), "");
  const std::string success = "{\"job_id\": \"job1\"}\n";
  ASSERT_TRUE(PublishOutput(*out, success).ok());

  ASSERT_TRUE(fs::is_symlink(dir_));
  EXPECT_EQ(fs::read_symlink(dir_), fs::path(out->final).filename())
      << "a relative link keeps the result movable";
  EXPECT_EQ(Read(fs::path(dir_) / "_SUCCESS"), success);
  EXPECT_EQ(Read(fs::path(dir_) / "part-00000"), "a 1\n");
  EXPECT_THAT(List(dir_), ElementsAre("_SUCCESS", "part-00000", "part-00001"));
  EXPECT_FALSE(fs::exists(out->staging));
  EXPECT_THAT(List(root_), ElementsAre(fs::path(out->final).filename().string(), "result"));
}

TEST_F(OutputDirTest, SecondJobReplacesThePreviousResultAndRemovesIt) {
  const JobOutput first = Publish("job1", "first\n");
  auto second = Prepare(dir_, "job2");
  ASSERT_TRUE(second.ok()) << second.status() << ": a previous result link must be accepted";
  EXPECT_NE(second->final, first.final);
  Write(fs::path(second->staging) / ResultFileName(0), "second\n");
  // Until the publish, readers still see the first result, complete.
  EXPECT_EQ(Read(fs::path(dir_) / "part-00000"), "first\n");
  EXPECT_THAT(Read(fs::path(dir_) / "_SUCCESS"), HasSubstr("job1"));

  ASSERT_TRUE(PublishOutput(*second, "{\"job_id\": \"job2\"}\n").ok());
  EXPECT_EQ(fs::read_symlink(dir_), fs::path(second->final).filename());
  EXPECT_EQ(Read(fs::path(dir_) / "part-00000"), "second\n");
  EXPECT_THAT(Read(fs::path(dir_) / "_SUCCESS"), HasSubstr("job2"));
  EXPECT_FALSE(fs::exists(first.final)) << "the previous job directory must be removed";
  EXPECT_THAT(List(root_), ElementsAre(fs::path(second->final).filename().string(), "result"));
}

TEST_F(OutputDirTest, TheLinkIsNeverMissingWhileJobsArePublished) {
  Publish("job0", "0\n");
  std::set<std::string> targets;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> missing{0}, reads{0};
  std::set<std::string> seen;
  std::thread reader([&] {
    while (!done.load()) {
      std::error_code ec;
      const fs::path target = fs::read_symlink(dir_, ec);
      ++reads;
      if (ec) {
        ++missing;
      } else {
        seen.insert(target.string());
      }
    }
  });
  for (int i = 1; i <= 30; ++i) {
    const JobOutput out = Publish("job" + std::to_string(i), std::to_string(i) + "\n");
    targets.insert(fs::path(out.final).filename().string());
  }
  done.store(true);
  reader.join();
  EXPECT_EQ(missing.load(), 0u) << "of " << reads.load() << " reads";
  targets.insert(".result.job0");
  for (const std::string& t : seen) EXPECT_TRUE(targets.count(t)) << t;
  EXPECT_EQ(Read(fs::path(dir_) / "part-00000"), "30\n");
  EXPECT_EQ(List(root_).size(), 2u) << "every previous job directory must be gone";
}

TEST_F(OutputDirTest, ExistingNonEmptyDirectoryIsRefusedNamingThePath) {
  fs::create_directory(dir_);
  Write(fs::path(dir_) / "precious.txt", "keep me");
  auto out = Prepare(dir_, "job1");
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(out.status().message()),
              AllOf(HasSubstr(SettingName(Setting::kOut) + ":"), HasSubstr(dir_)));
  EXPECT_THAT(List(root_), ElementsAre("result")) << "no staging directory is left behind";
  EXPECT_EQ(Read(fs::path(dir_) / "precious.txt"), "keep me");
}

TEST_F(OutputDirTest, ExistingFileIsRefused) {
  Write(dir_, "a file");
  auto out = Prepare(dir_, "job1");
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr(dir_));
  EXPECT_EQ(Read(dir_), "a file");
}

TEST_F(OutputDirTest, EmptyDirectoryIsAllowedAndReplacedByTheLink) {
  fs::create_directory(dir_);
  auto out = Prepare(dir_, "job1");
  ASSERT_TRUE(out.ok()) << out.status();
  Write(fs::path(out->staging) / ResultFileName(0), "x\n");
  ASSERT_TRUE(PublishOutput(*out, "{}\n").ok());
  ASSERT_TRUE(fs::is_symlink(dir_));
  EXPECT_EQ(Read(fs::path(dir_) / "part-00000"), "x\n");
}

TEST_F(OutputDirTest, TrailingSlashAndMissingParentsAreFine) {
  dir_ = (root_ / "a" / "b" / "result").string();
  auto out = Prepare(dir_ + "/", "job1");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->link, dir_);
  ASSERT_TRUE(PublishOutput(*out, "{}\n").ok());
  EXPECT_TRUE(fs::is_symlink(dir_));
  EXPECT_TRUE(fs::exists(fs::path(dir_) / "_SUCCESS"));
}

TEST_F(OutputDirTest, DiscardRemovesTheStagingDirectoryAndKeepsThePreviousResult) {
  const JobOutput first = Publish("job1", "first\n");
  auto second = Prepare(dir_, "job2");
  ASSERT_TRUE(second.ok());
  Write(fs::path(second->staging) / ResultFileName(0), "half-written");
  fs::create_directory(fs::path(second->staging) / "nested");
  Write(fs::path(second->staging) / "nested" / "tmp", "x");
  DiscardOutput(*second);
  EXPECT_FALSE(fs::exists(second->staging));
  EXPECT_FALSE(fs::exists(second->final));
  EXPECT_EQ(fs::read_symlink(dir_), fs::path(first.final).filename());
  EXPECT_EQ(Read(fs::path(dir_) / "part-00000"), "first\n");
  EXPECT_THAT(List(root_), ElementsAre(fs::path(first.final).filename().string(), "result"));
}

TEST_F(OutputDirTest, FailedPublishSaysWhyAndDiscardLeavesNoJobDirectoryBehind) {
  auto out = Prepare(dir_, "job1");
  ASSERT_TRUE(out.ok());
  Write(fs::path(out->staging) / ResultFileName(0), "x\n");
  // Someone puts a real directory at DIR while the job runs: the link cannot replace it.
  fs::create_directory(dir_);
  Write(fs::path(dir_) / "theirs.txt", "keep me");
  const absl::Status st = PublishOutput(*out, "{}\n");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), AllOf(HasSubstr(dir_), Not(HasSubstr("Success"))))
      << "the reason must be the failure's, not that of the cleanup after it";
  DiscardOutput(*out);  // what the master does with a job that failed
  EXPECT_THAT(List(root_), ElementsAre("result")) << "no staging or job directory may be left";
  EXPECT_EQ(Read(fs::path(dir_) / "theirs.txt"), "keep me");
}

TEST_F(OutputDirTest, DiscardOfAFirstJobLeavesNothing) {
  auto out = Prepare(dir_, "job1");
  ASSERT_TRUE(out.ok());
  DiscardOutput(*out);
  leases_.clear();  // the master releases the job's lease once its directory is gone
  EXPECT_TRUE(fs::is_empty(root_));
}

// --- parts are checked before publishing (defect: a missing part was published as complete)

TEST_F(OutputDirTest, APartMustHoldWhatItsWorkerReported) {
  auto out = Prepare(dir_, "job1");
  ASSERT_TRUE(out.ok());
  const std::string text = "a 1\nb 2\n";
  const runner::OutputSummary written{2, text.size(), bsp::Crc32c(text)};
  const fs::path part = fs::path(out->staging) / ResultFileName(0);
  EXPECT_THAT(std::string(VerifyResultFile(part.string(), written).message()),
              AllOf(HasSubstr("part-00000 is missing"), HasSubstr("reported 2 vertices")));
  Write(part, text);
  EXPECT_TRUE(VerifyResultFile(part.string(), written).ok());
  Write(part, "a 1\n");
  EXPECT_THAT(std::string(VerifyResultFile(part.string(), written).message()),
              HasSubstr("holds 1 vertices in 4 bytes; its worker reported 2 in 8"));
  Write(part, "a 1\nb 3\n");  // same size and lines, other bytes
  EXPECT_THAT(std::string(VerifyResultFile(part.string(), written).message()),
              HasSubstr("CRC-32C"));
}

// --- staging liveness: a lease beside each staging directory

TEST_F(OutputDirTest, AStagingDirectoryCarriesALiveLeaseUntilReleased) {
  auto prepared = PrepareOutput(dir_, "job1");
  ASSERT_TRUE(prepared.ok());
  ASSERT_TRUE(prepared->lease);
  std::unique_ptr<Lease>& lease = prepared->lease;
  const JobOutput& out = prepared->output;
  EXPECT_EQ(fs::path(out.lease).parent_path(), root_);
  EXPECT_TRUE(fs::exists(out.lease));
  EXPECT_FALSE(Lease::IsDead(out.lease));
  // Renewed while held: dead after 1 s without renewal would be true of a lease not renewed.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_FALSE(Lease::IsDead(out.lease, std::chrono::seconds(1)));
  lease->Release();
  EXPECT_FALSE(fs::exists(out.lease));
  EXPECT_TRUE(Lease::IsDead(out.lease));
}

// A master killed with SIGKILL leaves its staging directory and lease; the next master publishing
// to the same DIR removes them, and never a live master's.
TEST_F(OutputDirTest, TheNextMasterRemovesDeadStagingDirectoriesNeverLiveOnes) {
  Publish("job0", "0\n");
  // The fork must find no other thread: job0's lease renews itself on a thread, which could
  // hold a lock at the fork (the allocator's, under ASan) that the child would then wait for
  // forever (seen once in CI). A master releases a job's lease once the job is published.
  leases_.clear();
  // A "master" in a child process takes job1's lease and staging directory, then dies.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto prepared = PrepareOutput(dir_, "job1");
    if (!prepared.ok()) ::_exit(1);
    const JobOutput& out = prepared->output;
    std::ofstream(fs::path(out.staging) / "part-00000") << "half";
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  const fs::path dead_staging = root_ / ".result.job1.staging";
  const fs::path dead_lease = root_ / ".result.job1.lease";
  ASSERT_TRUE(fs::exists(dead_staging));
  ASSERT_TRUE(fs::exists(dead_lease));
  EXPECT_TRUE(Lease::IsDead(dead_lease.string())) << "its holder is gone from this host";

  // A live master's job2 is under way at the same time.
  auto live = Prepare(dir_, "job2");
  ASSERT_TRUE(live.ok());
  EXPECT_FALSE(fs::exists(dead_staging)) << "the dead master's staging directory is still there";
  EXPECT_FALSE(fs::exists(dead_lease));

  // Another master's job3 must leave job2's live staging directory alone.
  auto third = Prepare(dir_, "job3");
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(fs::exists(live->staging));
  EXPECT_TRUE(fs::exists(live->lease));
}

// A master killed between publishing and releasing its lease leaves `.<name>.<job>.lease` with no
// staging directory beside it; the next master removes it as it removes dead staging directories,
// and never a live master's lease.
TEST_F(OutputDirTest, TheNextMasterRemovesDeadLeasesLeftWithoutAStagingDirectory) {
  // A "master" in a child process publishes job1, then dies before it releases the lease (no
  // other thread at the fork, as above).
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto prepared = PrepareOutput(dir_, "job1");
    if (!prepared.ok()) ::_exit(1);
    const JobOutput& out = prepared->output;
    std::ofstream(fs::path(out.staging) / "part-00000") << "a 1\n";
    if (!PublishOutput(out, "{}\n").ok()) ::_exit(1);
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  const fs::path orphan = root_ / ".result.job1.lease";
  ASSERT_TRUE(fs::exists(orphan));
  // One of another host not renewed for 31 s (dead by its age), and one renewed now (live).
  const fs::path old = root_ / ".result.job7.lease";
  Write(old, "some-other-host - -\n1\n");
  fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::seconds(31));
  const fs::path live = root_ / ".result.job8.lease";
  Write(live, "some-other-host - -\n1\n");

  ASSERT_TRUE(Prepare(dir_, "job2").ok());
  EXPECT_FALSE(fs::exists(orphan)) << "the dead master's lease is still there";
  EXPECT_FALSE(fs::exists(old)) << "a lease dead by its age is still there";
  EXPECT_TRUE(fs::exists(live));
  EXPECT_EQ(fs::read_symlink(dir_).filename(), ".result.job1");  // the published result stays
  EXPECT_EQ(Read(fs::path(dir_) / "part-00000"), "a 1\n");
  ASSERT_TRUE(Prepare(dir_, "job3").ok());
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(root_ / ".result.job2.lease"));  // job2's, held by this process
}

TEST_F(OutputDirTest, ALeaseOfAnotherHostDiesOnlyByItsAge) {
  const fs::path lease = root_ / "x.lease";
  Write(lease, "some-other-host - -\n1\n");
  EXPECT_FALSE(Lease::IsDead(lease.string()));  // PID 1 of another host: judged by age only
  fs::last_write_time(lease, fs::file_time_type::clock::now() - std::chrono::seconds(31));
  EXPECT_TRUE(Lease::IsDead(lease.string()));
}

// The lock of the master that drives a checkpointed job (docs/design.md §7.7): refused while a
// live holder renews it; a dead one's is taken over; of many processes trying at once, one wins.
TEST_F(OutputDirTest, ALeaseAsALockHasOneLiveHolder) {
  const std::string path = (root_ / "LEASE").string();
  auto first = Lease::TryAcquire(path);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Lease::TryAcquire(path);
  ASSERT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("is held by a live process"));
  (*first)->Release();
  auto third = Lease::TryAcquire(path);
  ASSERT_TRUE(third.ok()) << third.status();
  (*third)->Release();

  // A dead holder's lease (another host's, not renewed for 31 s) is taken over.
  Write(fs::path(path), "some-other-host - -\n1\n");
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::seconds(31));
  auto taken = Lease::TryAcquire(path);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_FALSE(Lease::IsDead(path));
  (*taken)->Release();

  // Eight processes at once on a dead lease: exactly one holds it once a renewal has passed (a rare
  // race of three can make two think they won, until the loser's renewal shows it lost). Each says
  // on a pipe whether it won and, a renewal later, whether it still holds the lease; it holds it
  // until every process has said so (the parent closes `hold`).
  Write(fs::path(path), "some-other-host - -\n1\n");
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::seconds(31));
  int said[2], hold[2];
  ASSERT_EQ(::pipe(said), 0);
  ASSERT_EQ(::pipe(hold), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(said[0]);
      ::close(hold[1]);
      auto lease = Lease::TryAcquire(path);
      const char won = lease.ok() ? 'W' : 'L';
      if (::write(said[1], &won, 1) != 1) ::_exit(2);
      if (lease.ok()) {
        std::this_thread::sleep_for(Lease::kRenewEvery + std::chrono::milliseconds(500));
        const char holds = (*lease)->lost() ? 'X' : 'H';
        if (::write(said[1], &holds, 1) != 1) ::_exit(2);
      }
      char c;
      while (::read(hold[0], &c, 1) > 0) {
      }
      ::_exit(0);
    }
    children.push_back(child);
  }
  ::close(said[1]);
  ::close(hold[0]);
  int answers = 0, winners = 0, holders = 0;
  while (answers < 8 + winners) {
    char c = 0;
    ASSERT_EQ(::read(said[0], &c, 1), 1);
    ++answers;
    winners += c == 'W' ? 1 : 0;
    holders += c == 'H' ? 1 : 0;
  }
  ::close(hold[1]);
  ::close(said[0]);
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
  }
  EXPECT_GE(winners, 1);
  EXPECT_EQ(holders, 1);

  // A holder whose lease another process took over knows it has lost it, and leaves the file.
  auto held = Lease::TryAcquire((root_ / "TAKEN").string());
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_FALSE((*held)->lost());
  Write(root_ / "TAKEN", "another-host - -\n7\n");
  for (int i = 0; i < 60 && !(*held)->lost(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE((*held)->lost());
  (*held)->Release();
  EXPECT_EQ(Read(root_ / "TAKEN"), "another-host - -\n7\n");
}

}  // namespace
}  // namespace lockstep::dbsp::job
