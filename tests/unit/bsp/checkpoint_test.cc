// The checkpoint file format (bsp/checkpoint.h): what is written reads back the same; a truncated,
// corrupt, foreign or newer file is refused with an error naming it, before any record is used;
// and a set of files is one whole checkpoint or is refused.
#include "lockstep/bsp/checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lockstep/bsp/checksum.h"
#include "util/temp_dir.h"

namespace lockstep::bsp {
namespace {

using ::testing::HasSubstr;

VertexId Id(uint8_t b) {
  VertexId id;
  std::memset(id.data, b, sizeof(id.data));
  return id;
}

// Two vertices' index: UUIDs 1 and 2, out-degrees 5 and 0.
std::string Index(const CheckpointHeader& h) {
  const std::vector<VertexId> ids = {Id(1), Id(2)};
  const std::vector<uint32_t> degrees = {5, 0};
  return EncodeCheckpointIndex(h, ids, degrees);
}

// The state of Index(h)'s two vertices, and a value held back for a third.
std::string Write(const CheckpointHeader& h, const std::string& agg_value = "\x01\x02") {
  CheckpointWriter w(h, CheckpointCrc(Index(h)), 2);
  w.Aggregator("a.sum", agg_value);
  w.Aggregator("b.min", "");
  w.Begin(CheckpointSection::kFlags).append("\x01\x02");
  w.Begin(CheckpointSection::kValues).append("value-1value-2");
  // No extra section: an empty one is written.
  w.Held(Id(3)).append(std::string(300, 'x'));
  return w.Finish();
}

const CheckpointHeader kHeader{"pagerank", "job-7", 12, 1, 3};

absl::StatusOr<CheckpointFile> Parse(const std::string& bytes,
                                     const CheckpointHeader* expect = nullptr,
                                     const CheckpointHeader& index_of = kHeader) {
  return CheckpointFile::Parse(bytes, "p1", Index(index_of), "i1", expect);
}

TEST(CheckpointTest, ReadsBackWhatWasWritten) {
  auto f = Parse(Write(kHeader), &kHeader);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->header().app, "pagerank");
  EXPECT_EQ(f->header().job, "job-7");
  EXPECT_EQ(f->header().superstep, 12u);
  EXPECT_EQ(f->header().part, 1u);
  EXPECT_EQ(f->header().parts, 3u);
  ASSERT_EQ(f->aggregators().size(), 2u);
  EXPECT_EQ(f->aggregators()[0].first, "a.sum");
  EXPECT_EQ(f->aggregators()[0].second, "\x01\x02");
  EXPECT_EQ(f->aggregators()[1].second, "");
  EXPECT_EQ(f->num_vertices(), 2u);
  EXPECT_EQ(f->num_held(), 1u);
  EXPECT_EQ(f->num_records(), 3u);
  EXPECT_EQ(f->id(0), Id(1));
  EXPECT_EQ(f->id(1), Id(2));
  EXPECT_EQ(f->out_degree(0), 5u);
  EXPECT_EQ(f->out_degree(1), 0u);
  EXPECT_EQ(f->section(CheckpointSection::kFlags), "\x01\x02");
  EXPECT_EQ(f->section(CheckpointSection::kValues), "value-1value-2");
  EXPECT_EQ(f->section(CheckpointSection::kExtra), "");
  EXPECT_EQ(f->section(CheckpointSection::kHeld),
            std::string(reinterpret_cast<const char*>(Id(3).data), 16) + std::string(300, 'x'));
  EXPECT_EQ(f->crc32c(), CheckpointCrc(f->bytes()));
}

TEST(CheckpointTest, RefusesEveryTruncationAndEveryFlippedByte) {
  const std::string bytes = Write(kHeader), index = Index(kHeader);
  for (size_t size = 0; size < bytes.size(); ++size) {
    auto f = CheckpointFile::Parse(bytes.substr(0, size), "p1", index, "i1");
    ASSERT_FALSE(f.ok()) << "a file cut at " << size << " bytes was taken";
    EXPECT_THAT(std::string(f.status().message()), HasSubstr("checkpoint file p1"));
  }
  for (size_t size = 0; size < index.size(); ++size) {
    auto f = CheckpointFile::Parse(bytes, "p1", index.substr(0, size), "i1");
    ASSERT_FALSE(f.ok()) << "an index cut at " << size << " bytes was taken";
    EXPECT_THAT(std::string(f.status().message()), HasSubstr("checkpoint index i1"));
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    auto f = CheckpointFile::Parse(bad, "p1", index, "i1");
    ASSERT_FALSE(f.ok()) << "a file with byte " << i << " flipped was taken";
    EXPECT_EQ(f.status().code(), absl::StatusCode::kDataLoss);
  }
  for (size_t i = 0; i < index.size(); ++i) {
    std::string bad = index;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    auto f = CheckpointFile::Parse(bytes, "p1", bad, "i1");
    ASSERT_FALSE(f.ok()) << "an index with byte " << i << " flipped was taken";
    EXPECT_EQ(f.status().code(), absl::StatusCode::kDataLoss);
  }
}

// A file whose CRC is right but whose contents are not: written by a newer build, or broken before
// the CRC was computed.
std::string Recrc(std::string bytes) {
  const uint32_t crc = Crc32c(std::string_view(bytes.data(), bytes.size() - 4));
  std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);
  return bytes;
}

TEST(CheckpointTest, RefusesANewerVersionBadSectionsAndAnotherIndex) {
  std::string newer = Write(kHeader);
  newer[8] = 3;  // the version, after the 8-byte magic
  auto f = Parse(Recrc(newer));
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("has version 3"));

  // The values section's length, before its bytes.
  std::string length = Write(kHeader);
  const size_t at = length.find("value-1") - 8;
  ASSERT_EQ(length[at], 14);
  length[at] = 100;  // a section longer than the file
  f = Parse(Recrc(length));
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("section"));

  // A state file read with an index it was not written with: another part's, another job's.
  CheckpointHeader other = kHeader;
  other.part = 2;
  f = Parse(Write(kHeader), nullptr, other);
  ASSERT_FALSE(f.ok());
  // Both files named (the state file's name was once lost in this message).
  EXPECT_THAT(std::string(f.status().message()),
              HasSubstr("checkpoint file p1 was not written with index i1"));
  other = kHeader;
  other.job = "job-8";
  f = Parse(Write(kHeader), nullptr, other);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("was not written with index i1"));
}

TEST(CheckpointTest, RefusesAnotherJobsAppsOrSuperstepsFile) {
  const std::string bytes = Write(kHeader);
  CheckpointHeader other = kHeader;
  other.job = "job-8";
  auto f = Parse(bytes, &other);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("is of job 'job-7', not 'job-8'"));
  other = kHeader;
  other.app = "sssp";
  f = Parse(bytes, &other);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("is of app 'pagerank', not 'sssp'"));
  other = kHeader;
  other.superstep = 11;
  f = Parse(bytes, &other);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("at superstep 12, not 11"));
  f = Parse("not a checkpoint at all, but long enough");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("is not a lockstep checkpoint"));
}

std::vector<CheckpointFile> Set(std::vector<CheckpointHeader> headers,
                                std::vector<std::string> agg_values = {}) {
  std::vector<CheckpointFile> files;
  for (size_t i = 0; i < headers.size(); ++i) {
    auto f = CheckpointFile::Parse(
        Write(headers[i], i < agg_values.size() ? agg_values[i] : std::string("\x01\x02")),
        "f" + std::to_string(i), Index(headers[i]), "i" + std::to_string(i));
    EXPECT_TRUE(f.ok()) << f.status();
    files.push_back(*std::move(f));
  }
  return files;
}

TEST(CheckpointTest, ASetIsOneWholeCheckpoint) {
  auto part = [](uint32_t p) { return CheckpointHeader{"pagerank", "job-7", 12, p, 3}; };
  EXPECT_TRUE(CheckCheckpointSet(Set({part(2), part(0), part(1)})).ok());
  absl::Status st = CheckCheckpointSet(Set({part(0), part(2)}));
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(st.message()), HasSubstr("lacks part 1 of 3"));
  st = CheckCheckpointSet(Set({part(0), part(1), part(1), part(2)}));
  EXPECT_THAT(std::string(st.message()), HasSubstr("are both part 1"));
  CheckpointHeader later = part(2);
  later.superstep = 13;
  st = CheckCheckpointSet(Set({part(0), part(1), later}));
  EXPECT_THAT(std::string(st.message()), HasSubstr("their supersteps differ"));
  CheckpointHeader foreign = part(2);
  foreign.job = "job-9";
  st = CheckCheckpointSet(Set({part(0), part(1), foreign}));
  EXPECT_THAT(std::string(st.message()), HasSubstr("their jobs differ"));
  st = CheckCheckpointSet(Set({part(0), part(1), part(2)}, {"\x01\x02", "\x01\x02", "\x01\x03"}));
  EXPECT_THAT(std::string(st.message()), HasSubstr("their aggregator values differ"));
  EXPECT_EQ(CheckCheckpointSet({}).code(), absl::StatusCode::kNotFound);
}

TEST(CheckpointTest, FilesGoThroughTheDisk) {
  test::TempDir dir("lockstep-checkpoint");
  const std::string path = CheckpointFileName(dir.path().string(), 1);
  const std::string index = CheckpointIndexName(dir.path().string(), 1);
  EXPECT_EQ(path, dir.path().string() + "/part-00001.ckpt");
  EXPECT_EQ(index, dir.path().string() + "/part-00001.index");
  ASSERT_TRUE(WriteCheckpointFile(path, Write(kHeader)).ok());
  ASSERT_TRUE(WriteCheckpointFile(index, Index(kHeader)).ok());
  auto f = ReadCheckpointFile(path, index, &kHeader);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->num_records(), 3u);
  EXPECT_EQ(f->name(), path);
  auto missing = ReadCheckpointFile(CheckpointFileName(dir.path().string(), 2), index);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("part-00002.ckpt"));
  missing = ReadCheckpointFile(path, CheckpointIndexName(dir.path().string(), 2));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("part-00002.index"));
}

TEST(CheckpointTest, AManifestReadsBackAndIsChecked) {
  test::TempDir dir("lockstep-checkpoint-manifest");
  const std::string step = CheckpointStepDir(dir.path().string(), 30);
  EXPECT_EQ(step, dir.path().string() + "/superstep-0000000030");
  std::filesystem::create_directories(step);
  CheckpointManifest m;
  m.header = {"pagerank", "job-7", 30, 0, 2};
  m.files = {{10, 1000, 0xabcdef01}, {12, 1200, 7}};
  m.aggregators = {{"pagerank.dangling 0", std::string("\0\x01\xff", 3)}, {"empty", ""}};
  ASSERT_TRUE(WriteCheckpointManifest(step, m).ok());
  auto back = ReadCheckpointManifest(step);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->header.app, "pagerank");
  EXPECT_EQ(back->header.job, "job-7");
  EXPECT_EQ(back->header.superstep, 30u);
  EXPECT_EQ(back->header.parts, 2u);
  EXPECT_EQ(back->files, m.files);
  EXPECT_EQ(back->aggregators, m.aggregators);
  EXPECT_EQ(ListCheckpoints(dir.path().string()), std::vector<uint64_t>{30});
  // A manifest changed by a byte is not a manifest; its checkpoint is not listed.
  const std::string path = step + "/MANIFEST";
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  text[text.find("job-7") + 4] = '8';
  std::ofstream(path, std::ios::trunc) << text;
  back = ReadCheckpointManifest(step);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss) << back.status();
  EXPECT_TRUE(ListCheckpoints(dir.path().string()).empty());
}

TEST(CheckpointTest, PruningKeepsTheNewestCompleteCheckpoints) {
  test::TempDir dir("lockstep-checkpoint-prune");
  const std::string job = dir.path().string();
  auto make = [&](uint64_t superstep, bool complete) {
    const std::string step = CheckpointStepDir(job, superstep);
    std::filesystem::create_directories(step);
    if (complete) {
      CheckpointManifest m;
      m.header = {"pagerank", "job-7", superstep, 0, 1};
      m.files = {{1, 2, 3}};
      ASSERT_TRUE(WriteCheckpointManifest(step, m).ok());
    }
  };
  make(10, true);
  make(20, false);  // a checkpoint whose master died before its manifest
  make(30, true);
  make(40, true);
  make(50, false);  // one under way
  ASSERT_TRUE(PruneCheckpoints(job, 2).ok());
  EXPECT_EQ(ListCheckpoints(job), (std::vector<uint64_t>{40, 30}));
  EXPECT_FALSE(std::filesystem::exists(CheckpointStepDir(job, 10)));
  EXPECT_FALSE(std::filesystem::exists(CheckpointStepDir(job, 20)));
  EXPECT_TRUE(std::filesystem::exists(CheckpointStepDir(job, 50)));
}

// A checkpoint of two parts on disk as a job writes it: the indexes in `job`, the states and the
// manifest in its superstep's directory.
std::string WriteOnDisk(const std::string& job, uint64_t superstep) {
  const std::string step = CheckpointStepDir(job, superstep);
  std::filesystem::create_directories(step);
  CheckpointManifest m;
  m.header = {"pagerank", "job-7", superstep, 0, 2};
  m.aggregators = {{"a.sum", "\x01\x02"}, {"b.min", ""}};
  for (uint32_t p = 0; p < 2; ++p) {
    const CheckpointHeader h{"pagerank", "job-7", superstep, p, 2};
    const std::string state = Write(h);
    EXPECT_TRUE(WriteCheckpointFile(CheckpointIndexName(job, p), Index(h)).ok());
    EXPECT_TRUE(WriteCheckpointFile(CheckpointFileName(step, p), state).ok());
    m.files.push_back({3, state.size(), CheckpointCrc(state)});
  }
  EXPECT_TRUE(WriteCheckpointManifest(step, m).ok());
  return step;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// What a master checks before it resumes from a checkpoint: every file read whole. Each way a
// newest checkpoint was found damaged after a master was killed (a flipped byte in a state or an
// index, two states swapped, a state truncated) is refused naming the file, before any use.
TEST(CheckpointTest, VerifyingReadsEveryFileAndRefusesADamagedOne) {
  test::TempDir dir("lockstep-checkpoint-verify");
  const std::string job = dir.path().string();
  const CheckpointHeader expect{"pagerank", "job-7", 20, 0, 0};
  const std::string step = WriteOnDisk(job, 20);
  ASSERT_TRUE(VerifyCheckpoint(step, expect).ok()) << VerifyCheckpoint(step, expect);
  CheckpointHeader other = expect;
  other.superstep = 30;
  EXPECT_THAT(std::string(VerifyCheckpoint(step, other).message()), HasSubstr("at superstep 20"));

  const std::string part0 = CheckpointFileName(step, 0), part1 = CheckpointFileName(step, 1);
  const std::string index1 = CheckpointIndexName(job, 1);
  auto damaged = [&](const std::string& path, const std::string& bytes) {
    const std::string good = ReadBytes(path);
    WriteBytes(path, bytes);
    const absl::Status st = VerifyCheckpoint(step, expect);
    WriteBytes(path, good);
    EXPECT_TRUE(VerifyCheckpoint(step, expect).ok());
    return st;
  };
  std::string flipped = ReadBytes(part1);
  flipped[flipped.size() / 2] ^= 0x10;
  absl::Status st = damaged(part1, flipped);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << st;
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("checkpoint file " + part1 + " is corrupt or truncated"));

  flipped = ReadBytes(index1);
  flipped[20] ^= 0x01;
  st = damaged(index1, flipped);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("checkpoint index " + index1 + " is corrupt or truncated"));

  const std::string whole = ReadBytes(part1);
  st = damaged(part1, whole.substr(0, whole.size() / 2));
  EXPECT_THAT(std::string(st.message()), HasSubstr(part1 + " is corrupt or truncated"));

  // Swapped: each file is whole, but not the one its name and index say.
  const std::string zero = ReadBytes(part0);
  WriteBytes(part0, whole);
  WriteBytes(part1, zero);
  st = VerifyCheckpoint(step, expect);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << st;
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("checkpoint file " + part0 + " was not written with index " +
                        CheckpointIndexName(job, 0)));

  std::filesystem::remove(part0);
  EXPECT_THAT(std::string(VerifyCheckpoint(step, expect).message()), HasSubstr(part0));
}

TEST(CheckpointTest, ARefusedCheckpointIsMarkedSo) {
  EXPECT_FALSE(IsCheckpointRefused(absl::DataLossError("x")));
  const absl::Status marked = MarkCheckpointRefused(absl::DataLossError("x"));
  EXPECT_TRUE(IsCheckpointRefused(marked));
  EXPECT_EQ(marked.message(), "x");
  EXPECT_TRUE(MarkCheckpointRefused(absl::OkStatus()).ok());
}

}  // namespace
}  // namespace lockstep::bsp
