#pragma once

// The one temporary-directory helper of the test suite. Tests write only inside such a directory:
// the suite runs as root in CI, where a stray path would land anywhere.
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace lockstep::test {

// A fresh directory under the system's temporary directory ($TMPDIR, else /tmp), named
// `<prefix>-XXXXXX`, removed with everything in it when this goes away. Throws if it cannot be
// made, which fails the test that asked for it.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "lockstep-test") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }
  // The path of `name` in this directory, as a string.
  std::string File(std::string_view name) const { return (path_ / name).string(); }
  // Writes `contents` byte for byte to `name` in this directory and returns its path.
  std::string Write(std::string_view name, std::string_view contents) const {
    const std::string file = File(name);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) throw std::runtime_error("cannot write " + file);
    return file;
  }
  // The names of the entries of this directory, sorted.
  std::vector<std::string> List() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace lockstep::test
