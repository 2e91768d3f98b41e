#include "text/input_files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "lockstep/load/input_form.h"

namespace lockstep::load::text {

bool IsDirectory(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

absl::StatusOr<std::vector<InputFile>> ListEdgeFiles(const std::string& path) {
  if (!IsDirectory(path)) return std::vector<InputFile>{{path, 0}};
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::vector<std::string> names;
  bool manifest = false, parts = false;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name.empty() || name[0] == '.') continue;
    if (name == kFormManifestName) manifest = true;
    if (IsFormFileName(name)) parts = true;
    names.emplace_back(name);
  }
  const int read_errno = errno;
  ::closedir(dir);
  if (read_errno != 0) {
    return absl::DataLossError(absl::StrCat("cannot read ", path, ": ", std::strerror(read_errno)));
  }
  if (manifest) {
    // The partitioned binary form (its reader branches before the edge-list loaders): its files
    // are not text, and reading them as edges would only give a confusing parse error.
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": holds ", kFormManifestName,
                     ", a graph in partitioned binary form, not edge lists"));
  }
  if (parts) {
    // What an interrupted writer leaves: its manifest, written last, is missing.
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": holds the files of a graph in partitioned binary form but no ", kFormManifestName,
        ": the partitioned graph is incomplete (its writing was interrupted); write it again"));
  }
  std::sort(names.begin(), names.end());  // std::string compares bytes as unsigned char
  const std::string dir_prefix = path.ends_with('/') ? path : path + "/";
  std::vector<InputFile> files;
  for (const std::string& name : names) {
    InputFile f{dir_prefix + name, 0};
    struct stat info;
    if (::stat(f.path.c_str(), &info) != 0) {
      return absl::NotFoundError(absl::StrCat("cannot open ", f.path, ": ", std::strerror(errno)));
    }
    if (!S_ISREG(info.st_mode)) continue;  // only the files directly in the directory
    f.size = static_cast<uint64_t>(info.st_size);
    files.push_back(std::move(f));
  }
  if (files.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": the directory holds no input files (names starting with '.' are "
                     "skipped)"));
  }
  return files;
}

std::pair<const std::string*, uint64_t> Locate(const std::string& path,
                                               const std::vector<FilePiece>& pieces,
                                               uint64_t line) {
  for (const FilePiece& piece : pieces) {
    if (line <= piece.lines) return {&piece.path, line};
    line -= piece.lines;
  }
  // Past the last line (not a line of any file): the last file, counted on.
  if (!pieces.empty()) return {&pieces.back().path, pieces.back().lines + line};
  return {&path, line};
}

}  // namespace lockstep::load::text
