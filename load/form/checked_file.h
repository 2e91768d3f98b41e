// Reading the partitioned form's files: each block a read touches is checked against the
// manifest's CRC-32C, and each header against the graph and the file the manifest lists, before
// anything in them is used. Private to the load library.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "form/layout.h"
#include "form/manifest.h"

namespace lockstep::load::form {

// Bytes read from a file: on the heap (8-byte aligned, not zeroed), or mapped from the page
// cache (a data file: no copy, no zeroing, which halves the cost of reading one).
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Unmap();
    map_ = std::exchange(o.map_, nullptr);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }
  ~Buffer() { Unmap(); }
  // Maps bytes [0, size) of `fd`.
  static absl::StatusOr<Buffer> Map(int fd, uint64_t size, const std::string& path);
  // `size` bytes of fresh pages to read into, mapped from the kernel rather than taken from
  // malloc, which would keep them once freed (a whole read holds one file's sections at a time,
  // and the next are of other sizes).
  static absl::StatusOr<Buffer> Pages(uint64_t size, const std::string& path);
  const char* data() const { return map_; }
  char* writable() { return map_; }
  uint64_t size() const { return size_; }

 private:
  void Unmap();
  char* map_ = nullptr;
  uint64_t size_ = 0;
};

// One file the manifest lists.
class CheckedFile {
 public:
  CheckedFile(const Manifest& m, const FileEntry& f)
      : manifest_(m), entry_(f), path_(m.dir + "/" + f.name) {}
  ~CheckedFile();
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;
  const std::string& path() const { return path_; }

  // Opens it; an error if it is missing or not the size the manifest says.
  absl::Status Open();

  // Bytes [offset, offset + size) of the file, each block they touch read and checked against
  // the manifest. `out` is set to where they start in `buffer`. With `map`, the blocks are mapped
  // instead of copied (offset must then be 0).
  absl::Status Read(uint64_t offset, uint64_t size, Buffer& buffer, const char*& out,
                    bool map = false) const;

  // Reads and checks the header: this graph's, of `kind`, file `part` of its kind.
  absl::StatusOr<FileHeader> Header(uint32_t kind, uint32_t part) const;

 private:
  // Reads the blocks [begin, end) into `buffer`; checks them (blocks [first, last)).
  absl::Status ReadBlocks(uint64_t begin, uint64_t end, bool map, Buffer& buffer) const;
  absl::Status CheckBlocks(uint64_t first, uint64_t last, uint64_t begin, uint64_t end,
                           const Buffer& buffer) const;

  const Manifest& manifest_;
  const FileEntry& entry_;
  std::string path_;
  int fd_ = -1;
};

}  // namespace lockstep::load::form
