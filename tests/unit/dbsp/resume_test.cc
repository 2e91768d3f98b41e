// What a job is resumed from (docs/design.md §7.6, §7.7): its record, refused when it is damaged
// or cannot be checked, never trusted; and its checkpoint, the newest intact one of any attempt,
// a damaged or refused one passed over for the one before it, down to the start. A worker that
// cannot restore its checkpoint ends the attempt so that the next one passes it over.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "job/checkpoint_choice.h"
#include "job/job_record.h"
#include "job/master_job.h"
#include "lockstep/bsp/checkpoint.h"
#include "util/temp_dir.h"

namespace lockstep::dbsp::job {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// --- the record

class JobRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(job_dir_);
    JobRecord r;
    r.job_id = "job-7";
    r.created_at_unix_ms = 1700000000123;
    r.job = {{"app", "pagerank"},
             {"params", {{"damping", "0.85"}, {"max-iterations", "400"}}},
             {"output", "/data/out"}};
    r.run = {{"checkpoint_every", 10}};
    r.attempt = 2;
    r.workers = 3;
    r.checkpoint = 20;
    r.restarts = {{{"after", "the master restarted"}, {"recovery_seconds", 0.123456789}}};
    ASSERT_TRUE(JobRecordFile(job_dir_, r).Update([](JobRecord&) {}).ok());
    written_ = ReadBytes(JobRecordPath(job_dir_));
  }
  // The record refused, with a message naming it and saying that its directory is kept.
  void ExpectRefused(const std::string& bytes, const std::string& why) {
    WriteBytes(JobRecordPath(job_dir_), bytes);
    auto r = ReadJobRecord(job_dir_);
    ASSERT_FALSE(r.ok()) << bytes;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
    const std::string message(r.status().message());
    EXPECT_THAT(message, HasSubstr("job record " + JobRecordPath(job_dir_) + " " + why));
    EXPECT_THAT(message, HasSubstr("the job is not resumed and its directory " + job_dir_ +
                                   " is left as it is"));
  }

  test::TempDir dir_{"lockstep-job-record"};
  const std::string job_dir_ = dir_.File("job-7");
  std::string written_;
};

TEST_F(JobRecordTest, ReadsBackWhatWasWritten) {
  auto r = ReadJobRecord(job_dir_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->job_id, "job-7");
  EXPECT_EQ(r->created_at_unix_ms, 1700000000123);
  EXPECT_EQ(r->job["params"]["damping"], "0.85");
  EXPECT_EQ(r->attempt, 2u);
  EXPECT_EQ(r->workers, 3u);
  EXPECT_EQ(r->checkpoint, 20u);
  EXPECT_EQ(r->restarts[0]["recovery_seconds"], 0.123456789);
  EXPECT_THAT(written_, HasSubstr("\"crc32c\": "));
}

// A flipped bit in any byte makes the record unreadable or changes what it says: refused either
// way, never read as another job (once, a flipped bit in its output path made the resumed job
// publish elsewhere). One bit a byte, each of the eight in turn, keeps the test short.
TEST_F(JobRecordTest, AFlippedBitInAnyByteIsRefused) {
  for (size_t i = 0; i < written_.size(); ++i) {
    const int bit = static_cast<int>(i % 8);
    std::string bytes = written_;
    bytes[i] = static_cast<char>(bytes[i] ^ (1 << bit));
    WriteBytes(JobRecordPath(job_dir_), bytes);
    const absl::Status st = ReadJobRecord(job_dir_).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss)
        << "byte " << i << " ('" << written_[i] << "') bit " << bit << ": " << st;
  }
}

TEST_F(JobRecordTest, AnEditedRecordIsRefused) {
  std::string edited = written_;
  edited.replace(edited.find("0.85"), 4, "0.5");  // what the job computes
  ExpectRefused(edited, "is damaged: its CRC-32C does not match what it says");
  edited = written_;
  edited.replace(edited.find("\"400\""), 5, "\"40\"");
  ExpectRefused(edited, "is damaged: its CRC-32C does not match what it says");
  edited = written_;
  edited.replace(edited.find("/data/out"), 9, "/data/ouu");  // where it publishes
  ExpectRefused(edited, "is damaged: its CRC-32C does not match what it says");
  ExpectRefused(written_.substr(0, written_.size() / 2), "is damaged: it is not JSON");
  edited = written_;
  const size_t crc = edited.find("\"crc32c\"");
  edited.replace(crc, edited.find('\n', crc) - crc + 1, "");  // the CRC line gone
  ExpectRefused(edited, "is damaged: it has no CRC-32C");
}

// A record of an older lockstep has no CRC-32C: it cannot be checked, so it is refused.
TEST_F(JobRecordTest, ARecordWithoutACrcFromAnOlderLockstepIsRefused) {
  const std::string old = R"({"format": "lockstep-job 1", "job_id": "job-7",
    "created_at_unix_ms": 1, "job": {}, "run": {}, "attempt": 0, "workers": 0, "checkpoint": 0,
    "restarts": []})";
  ExpectRefused(old,
                "is of format 'lockstep-job 1', written by an older lockstep without a "
                "CRC-32C, so it cannot be checked");
  fs::remove(JobRecordPath(job_dir_));
  EXPECT_EQ(ReadJobRecord(job_dir_).status().code(), absl::StatusCode::kNotFound);
}

// --- the checkpoint

// A one-part checkpoint of job-7 (pagerank) at `superstep` in `attempt_dir`, with its index.
void WriteCheckpoint(const std::string& attempt_dir, uint64_t superstep) {
  const std::string step = bsp::CheckpointStepDir(attempt_dir, superstep);
  fs::create_directories(step);
  const bsp::CheckpointHeader h{"pagerank", "job-7", superstep, 0, 1};
  bsp::VertexId id;
  std::memset(id.data, 1, sizeof(id.data));
  const std::vector<bsp::VertexId> ids = {id};
  const std::vector<uint32_t> degrees = {3};
  const std::string index = bsp::EncodeCheckpointIndex(h, ids, degrees);
  bsp::CheckpointWriter w(h, bsp::CheckpointCrc(index), 1);
  w.Begin(bsp::CheckpointSection::kFlags).push_back('\0');
  w.Begin(bsp::CheckpointSection::kValues).append("12345678");
  const std::string state = w.Finish();
  ASSERT_TRUE(bsp::WriteCheckpointFile(bsp::CheckpointIndexName(attempt_dir, 0), index).ok());
  ASSERT_TRUE(bsp::WriteCheckpointFile(bsp::CheckpointFileName(step, 0), state).ok());
  bsp::CheckpointManifest m;
  m.header = {"pagerank", "job-7", superstep, 0, 1};
  m.files = {{1, state.size(), bsp::CheckpointCrc(state)}};
  ASSERT_TRUE(bsp::WriteCheckpointManifest(step, m).ok());
}

TEST(CheckpointChoiceTest, TheNewestIntactCheckpointOfAnyAttemptIsChosen) {
  test::TempDir dir("lockstep-checkpoint-choice");
  const std::string job = dir.File("job-7");
  WriteCheckpoint(job + "/attempt-1", 10);
  WriteCheckpoint(job + "/attempt-1", 20);
  fs::create_directories(bsp::CheckpointStepDir(job + "/attempt-2", 30));  // no manifest
  const std::vector<ResumePoint> all = CompleteCheckpoints(job);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].superstep, 20u);
  EXPECT_EQ(all[0].dir, bsp::CheckpointStepDir(job + "/attempt-1", 20));
  EXPECT_EQ(all[1].superstep, 10u);
  // At a tie, the later attempt's.
  WriteCheckpoint(job + "/attempt-2", 20);
  EXPECT_EQ(CompleteCheckpoints(job)[0].dir, bsp::CheckpointStepDir(job + "/attempt-2", 20));
  fs::remove_all(job + "/attempt-2");

  CheckpointChoice choice(job, "pagerank", "job-7", "");
  EXPECT_EQ(choice.Choose(/*verify=*/true).superstep, 20u);
  // The newest damaged (a flipped byte): a resuming master passes it over for the one before.
  const std::string newest = bsp::CheckpointFileName(all[0].dir, 0);
  std::string bytes = ReadBytes(newest);
  bytes[bytes.size() / 2] ^= 0x04;
  WriteBytes(newest, bytes);
  EXPECT_EQ(choice.Choose(/*verify=*/false).superstep, 20u);  // a manifest alone still reads
  ResumePoint chosen = choice.Choose(/*verify=*/true);
  EXPECT_EQ(chosen.superstep, 10u);
  EXPECT_EQ(chosen.dir, all[1].dir);
  EXPECT_EQ(choice.Choose(/*verify=*/false).superstep, 10u);  // refused for good
  EXPECT_TRUE(fs::exists(newest)) << "a checkpoint passed over was removed";
  // One the workers could not restore: the start.
  choice.Refuse(all[1].dir, absl::DataLossError("a worker could not restore it"));
  chosen = choice.Choose(/*verify=*/true);
  EXPECT_EQ(chosen.superstep, 0u);
  EXPECT_TRUE(chosen.dir.empty());
  // Another job's checkpoint is not this job's.
  CheckpointChoice other(job, "pagerank", "job-8", "");
  EXPECT_EQ(other.Choose(/*verify=*/true).superstep, 0u);
}

// --- a worker's refusal, as the master's job hears it

class RecordingStream final : public transport::WorkerStream {
 public:
  const std::string& peer() const override { return name_; }
  void Enqueue(v1::MasterPayload payload, bool) override { sent.push_back(std::move(payload)); }
  void Flush() override {}
  std::vector<v1::MasterPayload> sent;

 private:
  const std::string name_ = "test";
};

TEST(CheckpointChoiceTest, AWorkerThatCannotRestoreEndsTheAttemptForAnotherToGoOn) {
  for (bool refused : {true, false}) {
    RecordingStream a, b;
    MasterJob master({&a, &b}, {"worker 0", "worker 1"}, std::chrono::milliseconds(0));
    master.SetRetryAllowed(false);  // the last attempt: a refused checkpoint is no restart
    v1::WorkerPayload failure;
    failure.mutable_failure()->set_reason("checkpoint file /c/part-00001.ckpt is corrupt");
    failure.mutable_failure()->set_checkpoint_refused(refused);
    master.OnPayload(1, failure);
    EXPECT_EQ(master.checkpoint_refused(), refused);
    EXPECT_FALSE(master.lost_worker());
    EXPECT_THAT(std::string(master.status().message()),
                HasSubstr("worker 1: failed: checkpoint file /c/part-00001.ckpt is corrupt"));
    ASSERT_EQ(a.sent.size(), 1u);
    ASSERT_TRUE(a.sent[0].has_abort());
    // The workers return to the pool when the job goes on.
    EXPECT_EQ(a.sent[0].abort().retrying(), refused);
  }
}

}  // namespace
}  // namespace lockstep::dbsp::job
