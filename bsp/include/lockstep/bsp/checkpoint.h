#pragma once

// Checkpoints of a job's state between supersteps (docs/design.md §7.6): each partition writes its
// own vertices' state, keyed by UUID, so that any number of partitions, split any way, can read it
// back. One file per partition:
//
//   magic "LSCKPT" 0x00 0x01 | version u32 | superstep u64 | part u32 | parts u32
//   | app (u32 length, bytes) | job (u32 length, bytes)
//   | aggregators: count u32, then (name, value) as (u32 length, bytes) pairs
//   | records: count u64, then kind u8 | UUID 16 bytes | payload (u32 length, bytes)
//   | CRC-32C of everything before it, u32
//
// Integers are little-endian. A record is a vertex's state ('V': flags, value, its published
// value or pending messages; Engine::WriteCheckpoint) or a value held back for a remote vertex
// ('H'). The whole file is checked (its length, CRC, magic, version and header against what the
// reader expects) before any record is used: a truncated, corrupt or foreign file is refused with
// an error naming it.

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

inline constexpr uint32_t kCheckpointVersion = 1;

struct CheckpointHeader {
  std::string app;         // the program, as the job names it
  std::string job;         // the job's ID: another job's checkpoint is refused
  uint64_t superstep = 0;  // the superstep the job resumes at
  uint32_t part = 0;       // the partition that wrote the file, of `parts`
  uint32_t parts = 1;
};

enum class CheckpointRecord : uint8_t { kVertex = 'V', kHeld = 'H' };

// A vertex record's flags, its first payload byte.
inline constexpr uint8_t kCheckpointHalted = 1;
inline constexpr uint8_t kCheckpointPublished = 2;  // its published value follows the value
inline constexpr uint8_t kCheckpointMessages = 4;   // a u32 count and its messages follow

class CheckpointWriter {
 public:
  explicit CheckpointWriter(CheckpointHeader header) : header_(std::move(header)) {}

  // Aggregators go before the records (the first Record call).
  void Aggregator(std::string_view name, std::string_view value);
  // Starts a record; the caller appends its payload (only) to the string returned, until the next
  // call.
  std::string& Record(CheckpointRecord kind, const VertexId& id);
  // Room for about this many bytes of records.
  void Reserve(size_t bytes) { records_.reserve(bytes); }
  // The file's bytes. The writer is spent.
  std::string Finish();
  // The records written (after Finish, all of them), and (after Finish) the file's CRC-32C, its
  // last four bytes.
  uint64_t records() const { return count_; }
  uint32_t crc32c() const { return crc32c_; }

  const CheckpointHeader& header() const { return header_; }

 private:
  void EndRecord();
  void BeginRecords();

  CheckpointHeader header_;
  std::vector<std::pair<std::string, std::string>> aggregators_;
  std::string records_;
  uint64_t count_ = 0;
  uint32_t crc32c_ = 0;
  bool begun_ = false;   // the header is in records_
  size_t count_at_ = 0;  // where the record count goes
  bool open_ = false;    // a record whose payload is still being appended
  size_t open_at_ = 0;   // where its length goes
};

// One partition's checkpoint file, checked whole.
class CheckpointFile {
 public:
  // Checks `bytes` (named `name` in errors) and, if `expect` is given, that it is a checkpoint of
  // that app and job at that superstep.
  static absl::StatusOr<CheckpointFile> Parse(std::string bytes, std::string name,
                                              const CheckpointHeader* expect = nullptr);

  const CheckpointHeader& header() const { return header_; }
  const std::string& name() const { return name_; }
  const std::vector<std::pair<std::string, std::string>>& aggregators() const {
    return aggregators_;
  }
  uint64_t num_records() const { return num_records_; }
  // The whole file's size, and its CRC-32C (of everything before it, its last four bytes).
  uint64_t size() const { return bytes_.size(); }
  uint32_t crc32c() const;

  // Calls f(kind, id, payload) for every record, in the order written; the first error it
  // returns ends the walk.
  template <class F>
  absl::Status ForEach(F&& f) const {
    std::string_view rest =
        std::string_view(bytes_).substr(records_at_, bytes_.size() - 4 - records_at_);
    for (uint64_t i = 0; i < num_records_; ++i) {
      const auto kind = static_cast<CheckpointRecord>(rest[0]);
      VertexId id;
      std::memcpy(id.data, rest.data() + 1, 16);
      uint32_t length = 0;
      std::memcpy(&length, rest.data() + 17, 4);
      if (absl::Status st = f(kind, id, rest.substr(21, length)); !st.ok()) return st;
      rest.remove_prefix(21 + size_t{length});
    }
    return absl::OkStatus();
  }

 private:
  CheckpointHeader header_;
  std::string name_;
  std::vector<std::pair<std::string, std::string>> aggregators_;
  std::string bytes_;
  size_t records_at_ = 0;  // where the records begin in bytes_ (an offset: the file may move)
  uint64_t num_records_ = 0;
};

// Checks that `files` are one whole checkpoint: the same app, job, superstep and part count, every
// part once, with the same aggregator values.
absl::Status CheckCheckpointSet(std::span<const CheckpointFile> files);

// A job's checkpoints: in its checkpoint directory, one directory per checkpoint,
// JOB_DIR/superstep-SSSSSSSSSS (the superstep it resumes at), holding every part's file,
// part-PPPPP.ckpt, and, written last by the master, MANIFEST: a checkpoint without one was never
// complete and is not used.
std::string CheckpointStepDir(const std::string& job_dir, uint64_t superstep);
// The file of part `part` in checkpoint directory `dir`: DIR/part-PPPPP.ckpt.
std::string CheckpointFileName(const std::string& dir, uint32_t part);

struct CheckpointPart {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint32_t crc32c = 0;  // the file's own (CheckpointFile::crc32c)
  bool operator==(const CheckpointPart&) const = default;
};
struct CheckpointManifest {
  CheckpointHeader header;            // its part is meaningless; parts: the files' count
  std::vector<CheckpointPart> files;  // by part
  // The aggregators' global values (as in every file), for the master, which reads no file.
  std::vector<std::pair<std::string, std::string>> aggregators;
};
// MANIFEST, as text: a first line "lockstep-checkpoint-manifest 1", then "app A", "job J",
// "superstep S", "parts N", a line "file PART RECORDS BYTES CRC32C" per part, "aggregators K",
// a line "aggregator NAME VALUE" per aggregator (both in hex), and a last line "crc32c C" over the
// lines before it. Written atomically.
absl::Status WriteCheckpointManifest(const std::string& step_dir,
                                     const CheckpointManifest& manifest);
absl::StatusOr<CheckpointManifest> ReadCheckpointManifest(const std::string& step_dir);
// The supersteps of a job's complete checkpoints (a readable manifest), newest first.
std::vector<uint64_t> ListCheckpoints(const std::string& job_dir);
// Keeps the newest `keep` complete checkpoints of a job and removes the others, and any incomplete
// one older than the newest complete one (a checkpoint under way is newer).
absl::Status PruneCheckpoints(const std::string& job_dir, uint32_t keep);
// Every file of the complete checkpoint in `step_dir`, each checked whole and against its
// manifest (size and CRC-32C), as a set (CheckCheckpointSet); `expect` as for Parse.
absl::StatusOr<std::vector<CheckpointFile>> ReadCheckpoint(const std::string& step_dir,
                                                           const CheckpointHeader* expect);
// Writes `bytes` to `path` atomically (a temporary file, fsync, rename).
absl::Status WriteCheckpointFile(const std::string& path, std::string_view bytes);
absl::StatusOr<CheckpointFile> ReadCheckpointFile(const std::string& path,
                                                  const CheckpointHeader* expect = nullptr);

}  // namespace lockstep::bsp
