#pragma once

// Checkpoints of a job's state between supersteps (docs/design.md §7.6): each partition writes its
// own vertices' state, keyed by UUID, so that any number of partitions, split any way, can read it
// back. Two files per partition:
//
// - its index, once per attempt (the partition's vertices do not change within one): the UUIDs
//   and out-degrees of its vertices, in its local order,
//
//     magic "LSCKIX" 0x00 0x01 | version u32 | part u32 | parts u32 | job (u32 length, bytes)
//     | vertices u64 | UUIDs, 16 bytes each | out-degrees, u32 each | CRC-32C u32
//
// - its state, at every checkpoint, in the index's order, by column:
//
//     magic "LSCKPT" 0x00 0x02 | version u32 | superstep u64 | part u32 | parts u32
//     | app (u32 length, bytes) | job (u32 length, bytes) | the index's CRC-32C u32
//     | aggregators: count u32, then (name, value) as (u32 length, bytes) pairs
//     | vertices u64 | held u64
//     | flags, values, extra, held: each a section (u64 length, bytes)
//     | CRC-32C of everything before it, u32
//
//   flags: one byte per vertex (halted; a published value; pending messages). values: every
//   vertex's value (raw if of fixed size, else its codec's encodings one after another). extra:
//   per vertex with the flag, in order, its published value (unless the program regenerates it
//   from the value and out-degree) or a u32 count and its messages. held: per value held back for
//   a remote vertex (kAnyOrder), its UUID and the value.
//
// Integers are little-endian. Both files are checked whole (length, CRC, magic, version, header
// against what the reader expects, the state's index CRC against the index's) before anything is
// used: a truncated, corrupt or foreign file is refused with an error naming it.

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

inline constexpr uint32_t kCheckpointVersion = 2;

struct CheckpointHeader {
  std::string app;         // the program, as the job names it
  std::string job;         // the job's ID: another job's checkpoint is refused
  uint64_t superstep = 0;  // the superstep the job resumes at
  uint32_t part = 0;       // the partition that wrote the file, of `parts`
  uint32_t parts = 1;
};

// A vertex's flags, its byte of the flags column.
inline constexpr uint8_t kCheckpointHalted = 1;
inline constexpr uint8_t kCheckpointPublished = 2;  // it has a published value
inline constexpr uint8_t kCheckpointMessages = 4;   // it has pending messages (in extra)

// The CRC-32C an index or state file ends with (its last four bytes; `file` holds at least four):
// what a state file names its index by.
uint32_t CheckpointCrc(std::string_view file);

// A partition's index file (part and parts from `header`; its superstep and app are not used).
std::string EncodeCheckpointIndex(const CheckpointHeader& header, std::span<const VertexId> ids,
                                  std::span<const uint32_t> out_degrees);

// The sections of a state file, in the order they are written.
enum class CheckpointSection : uint8_t { kFlags, kValues, kExtra, kHeld };

class CheckpointWriter {
 public:
  // `index_crc`: the CRC-32C of the partition's index file (its last four bytes), of `vertices`.
  CheckpointWriter(CheckpointHeader header, uint32_t index_crc, uint64_t vertices)
      : header_(std::move(header)), index_crc_(index_crc), vertices_(vertices) {}

  // Aggregators go before the sections (the first Begin call).
  void Aggregator(std::string_view name, std::string_view value);
  // Starts section `s` (after the ones before it, each once); the caller appends its bytes to the
  // string returned, until the next call.
  std::string& Begin(CheckpointSection s);
  // In the held section: a held-back value's UUID, then (the caller appends) the value.
  std::string& Held(const VertexId& id);
  // The file's bytes. The writer is spent.
  std::string Finish();
  // The vertices and held values written, and (after Finish) the file's CRC-32C, its last four
  // bytes.
  uint64_t records() const { return vertices_ + held_; }
  uint32_t crc32c() const { return crc32c_; }

  const CheckpointHeader& header() const { return header_; }

 private:
  void EndSection();

  CheckpointHeader header_;
  uint32_t index_crc_;
  uint64_t vertices_;
  uint64_t held_ = 0;
  std::vector<std::pair<std::string, std::string>> aggregators_;
  std::string bytes_;
  uint32_t crc32c_ = 0;
  int section_ = -1;      // the open section, or -1 before the first
  size_t held_at_ = 0;    // where the held count goes
  size_t length_at_ = 0;  // where the open section's length goes
};

// One partition's checkpoint (its state and its index), checked whole.
class CheckpointFile {
 public:
  // Checks `bytes` (named `name` in errors) and `index` (named `index_name`), and, if `expect` is
  // given, that they are a checkpoint of that app and job at that superstep.
  static absl::StatusOr<CheckpointFile> Parse(std::string bytes, std::string name,
                                              std::string index, std::string index_name,
                                              const CheckpointHeader* expect = nullptr);

  const CheckpointHeader& header() const { return header_; }
  const std::string& name() const { return name_; }
  const std::vector<std::pair<std::string, std::string>>& aggregators() const {
    return aggregators_;
  }
  uint64_t num_vertices() const { return vertices_; }
  uint64_t num_held() const { return held_; }
  uint64_t num_records() const { return vertices_ + held_; }
  // The state file's size, and its CRC-32C (of everything before it, its last four bytes).
  uint64_t size() const { return bytes_.size(); }
  uint32_t crc32c() const;
  // Both files' bytes, as read.
  const std::string& bytes() const { return bytes_; }
  const std::string& index_bytes() const { return index_; }

  // Vertex i's UUID and out-degree, in the index's order (i < num_vertices()).
  VertexId id(uint64_t i) const {
    VertexId id;
    std::memcpy(id.data, index_.data() + ids_at_ + 16 * i, 16);
    return id;
  }
  uint32_t out_degree(uint64_t i) const {
    uint32_t d = 0;
    std::memcpy(&d, index_.data() + ids_at_ + 16 * vertices_ + 4 * i, 4);
    return d;
  }
  // The sections (their bytes only, checked against the file's bounds, not decoded).
  std::string_view section(CheckpointSection s) const {
    const auto [at, length] = sections_[static_cast<size_t>(s)];
    return std::string_view(bytes_).substr(at, length);
  }

 private:
  CheckpointHeader header_;
  std::string name_;
  std::vector<std::pair<std::string, std::string>> aggregators_;
  std::string bytes_;
  std::string index_;
  uint64_t vertices_ = 0;
  uint64_t held_ = 0;
  size_t ids_at_ = 0;  // offsets, not pointers: the file may move
  std::pair<size_t, size_t> sections_[4] = {};
};

// Checks that `files` are one whole checkpoint: the same app, job, superstep and part count, every
// part once, with the same aggregator values.
absl::Status CheckCheckpointSet(std::span<const CheckpointFile> files);

// An attempt's checkpoints: in its checkpoint directory, every part's index, part-PPPPP.index,
// and one directory per checkpoint, DIR/superstep-SSSSSSSSSS (the superstep it resumes at),
// holding every part's state, part-PPPPP.ckpt, and, written last by the master, MANIFEST: a
// checkpoint without one was never complete and is not used.
std::string CheckpointStepDir(const std::string& job_dir, uint64_t superstep);
// The state of part `part` in checkpoint directory `dir`: DIR/part-PPPPP.ckpt.
std::string CheckpointFileName(const std::string& dir, uint32_t part);
// The index of part `part` beside the checkpoint directories in `dir`: DIR/part-PPPPP.index.
std::string CheckpointIndexName(const std::string& dir, uint32_t part);

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
// Every file of the complete checkpoint in `step_dir`, each checked whole with its index (in
// step_dir/..) and against its manifest (size and CRC-32C), as a set (CheckCheckpointSet);
// `expect` as for Parse.
absl::StatusOr<std::vector<CheckpointFile>> ReadCheckpoint(const std::string& step_dir,
                                                           const CheckpointHeader* expect);
// Reads the complete checkpoint in `step_dir` a file at a time and keeps nothing: every check a
// restore makes of its files (the manifest, each file whole with its index, against its manifest
// line and `expect`), made before a job is resumed from it.
absl::Status VerifyCheckpoint(const std::string& step_dir, const CheckpointHeader& expect);
// A restore that cannot use its checkpoint (a file refused, missing, or not of this graph) marks
// its error so: the job may then go on from an older checkpoint or the start instead of failing.
absl::Status MarkCheckpointRefused(absl::Status status);
bool IsCheckpointRefused(const absl::Status& status);
// A whole checkpoint whose parts' files are read one at a time (a restore holds one file and its
// index at once, not the whole checkpoint): from disk, its manifest read and checked first, each
// file checked whole, against its manifest line and as a part of the set when it is loaded; or
// (tests) files already in memory, checked as a set.
class CheckpointSource {
 public:
  // The complete checkpoint in `step_dir`; `expect` as for CheckpointFile::Parse.
  static absl::StatusOr<CheckpointSource> Open(const std::string& step_dir,
                                               const CheckpointHeader* expect);
  // `files` (which must outlive the source), checked with CheckCheckpointSet.
  static absl::StatusOr<CheckpointSource> InMemory(std::span<const CheckpointFile> files);

  // The set's header (part: meaningless; parts: the files' count), its aggregators and name.
  const CheckpointHeader& header() const { return header_; }
  uint32_t parts() const { return header_.parts; }
  const std::vector<std::pair<std::string, std::string>>& aggregators() const {
    return aggregators_;
  }
  const std::string& name() const { return name_; }
  // Part `part`'s file, checked.
  absl::StatusOr<CheckpointFile> Load(uint32_t part) const;

 private:
  CheckpointHeader header_;
  std::vector<std::pair<std::string, std::string>> aggregators_;
  std::string name_;
  std::string step_dir_;                        // on disk
  std::vector<CheckpointPart> listed_;          // on disk: the manifest's lines
  std::optional<CheckpointHeader> expected_;    // on disk: what the files must be of
  std::vector<const CheckpointFile*> by_part_;  // in memory
};

// Writes `bytes` to `path` atomically (a temporary file, fsync, rename).
absl::Status WriteCheckpointFile(const std::string& path, std::string_view bytes);
// The state at `path` with its index at `index_path`.
absl::StatusOr<CheckpointFile> ReadCheckpointFile(const std::string& path,
                                                  const std::string& index_path,
                                                  const CheckpointHeader* expect = nullptr);

}  // namespace lockstep::bsp
