// What a job is resumed from (docs/design.md §7.6, §7.7): its checkpoint, the newest intact one of
// any attempt, a damaged or refused one passed over for the one before it, down to the start. A
// worker that cannot restore its checkpoint ends the attempt so that the next one passes it over.
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
