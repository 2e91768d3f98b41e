// The files of an input: an edge list may be a directory of files, read as their concatenation
// (docs/design.md §4.2), and errors then name the file and the line in it. Private to the load
// library.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace lockstep::load::text {

// One file of an input. Lines never span files: a file that does not end in a newline ends its
// last line there.
struct InputFile {
  std::string path;
  uint64_t size = 0;
};

bool IsDirectory(const std::string& path);

// The files of an edge-list input at `path`: `path` itself if it is not a directory (its size is
// left 0: opening it says what is wrong), else the regular files directly in it, in byte-wise name
// order, names that start with '.' skipped. A directory without any is an error naming it, and so
// is one holding a partitioned form's files (complete or not, IsFormFileName).
absl::StatusOr<std::vector<InputFile>> ListEdgeFiles(const std::string& path);

// One file's lines in the line numbering of a concatenation of files.
struct FilePiece {
  std::string path;
  uint64_t lines = 0;
};

// Line `line` (1-based) of the concatenation of `pieces` as its file and the line in that file;
// without pieces, line `line` of `path`.
std::pair<const std::string*, uint64_t> Locate(const std::string& path,
                                               const std::vector<FilePiece>& pieces, uint64_t line);

}  // namespace lockstep::load::text
