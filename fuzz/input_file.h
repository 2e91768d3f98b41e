#pragma once

// For targets whose code reads a file: the input written to one temporary file of the process's,
// rewritten for every input.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace lockstep::fuzz {

// The path of a file holding `data`, or "" if it cannot be written.
inline std::string InputFile(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    char name[] = "/tmp/lockstep-fuzz-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd >= 0) ::close(fd);
    return std::string(name);
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return "";
  const bool written = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && written ? path : "";
}

}  // namespace lockstep::fuzz
