// A worker's share of a text input, read in rounds: private to the load library, used by the
// partitioned load (partitioned/) and the distributed writer of the partitioned form (form/), so
// that both cut the input at the same lines.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lockstep::load::text {

// A share of an input: the lines that start in this worker's byte range, read in rounds. The
// input is one file or the concatenation of a directory's files (ListEdgeFiles), in which
// every file starts a line: a file that does not end in a newline ends its last line there, and
// its text gets one. The byte ranges are of the whole concatenation, so a share may end one file
// and start the next; a worker opens only the files its share touches.

class ShareReader {
 public:
  ShareReader() = default;
  ShareReader(const ShareReader&) = delete;
  ShareReader& operator=(const ShareReader&) = delete;
  ~ShareReader();

  // Errors as ReadFile's, so that both loaders say the same. `directories`: a directory is read
  // as its files (an edge list), else it is a file that cannot be read (Graphalytics' .v and .e).
  absl::Status Open(const std::string& path, uint32_t rank, uint32_t size, bool directories);

  bool done() const { return pos_ >= end_; }

  // The next lines of the share: those that start in the next `max_bytes` bytes (at least one
  // line, however long).
  absl::StatusOr<std::string> Next(uint64_t max_bytes);

  // The input's files (one, for a file): their indexes are the same on every worker.
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const Segment& s : segments_) out.push_back(s.path);
    return out;
  }
  // For a directory's files, the lines read so far, per file, in input order: (file index,
  // lines). (One file's are the parser's count: no second pass over the text.)
  const std::vector<std::pair<uint32_t, uint64_t>>& lines() const { return lines_; }
  // The input is a directory's files: errors name the file and the line in it.
  bool directory() const { return directory_; }

 private:
  struct Segment {
    std::string path;
    uint64_t start = 0;  // in the concatenation
    uint64_t size = 0;
    int fd = -1;  // opened when first read
  };

  // The segment holding byte x of the concatenation (x < total_), the last if several start at x
  // (empty files before a non-empty one).
  size_t SegmentAt(uint64_t x) const;

  absl::Status ReadAt(size_t segment, uint64_t offset, char* out, size_t n);

  // The first line start at or after `x` (the input's size if none): a line belongs to the share
  // in which it starts, and every file starts a line.
  absl::StatusOr<uint64_t> LineStartFrom(uint64_t x);

  std::vector<Segment> segments_;
  bool directory_ = false;
  uint64_t total_ = 0;
  uint64_t pos_ = 0;
  uint64_t end_ = 0;
  std::vector<std::pair<uint32_t, uint64_t>> lines_;
};

}  // namespace lockstep::load::text
