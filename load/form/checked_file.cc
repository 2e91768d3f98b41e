#include "form/checked_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/checksum.h"
#include "tbb/parallel_for.h"

namespace lockstep::load::form {

absl::StatusOr<Buffer> Buffer::Map(int fd, uint64_t size, const std::string& path) {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot map ", path, ": ", std::strerror(errno)));
  }
  Buffer b;
  b.map_ = static_cast<char*>(p);
  b.size_ = size;
  return b;
}

absl::StatusOr<Buffer> Buffer::Pages(uint64_t size, const std::string& path) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", size, " bytes to read ",
                                                     path, ": ", std::strerror(errno)));
  }
  Buffer b;
  b.map_ = static_cast<char*>(p);
  b.size_ = size;
  return b;
}

void Buffer::Unmap() {
  if (map_ != nullptr) ::munmap(map_, size_);
  map_ = nullptr;
}

CheckedFile::~CheckedFile() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status CheckedFile::Open() {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    return absl::NotFoundError(absl::StrCat(path_, ": cannot open (", std::strerror(errno),
                                            "); the partitioned graph in ", manifest_.dir,
                                            " is incomplete"));
  }
  struct stat info;
  if (::fstat(fd_, &info) != 0) {
    return absl::DataLossError(absl::StrCat(path_, ": cannot stat: ", std::strerror(errno)));
  }
  if (static_cast<uint64_t>(info.st_size) != entry_.size) {
    return absl::DataLossError(absl::StrCat(path_, ": ", info.st_size, " bytes, ",
                                            kFormManifestName, " says ", entry_.size,
                                            " (truncated or replaced)"));
  }
  return absl::OkStatus();
}

absl::Status CheckedFile::Read(uint64_t offset, uint64_t size, Buffer& buffer, const char*& out,
                               bool map) const {
  if (offset > entry_.size || size > entry_.size - offset) {
    return absl::DataLossError(absl::StrCat(path_, ": a section runs past the end of the file"));
  }
  if (size == 0) {
    out = nullptr;
    return absl::OkStatus();
  }
  const uint64_t b = manifest_.block_bytes;
  const uint64_t first = offset / b;
  const uint64_t last = (offset + size + b - 1) / b;
  const uint64_t begin = first * b;
  const uint64_t end = std::min(entry_.size, last * b);
  if (auto st = ReadBlocks(begin, end, map, buffer); !st.ok()) return st;
  if (auto st = CheckBlocks(first, last, begin, end, buffer); !st.ok()) return st;
  out = buffer.data() + (offset - begin);
  return absl::OkStatus();
}

absl::Status CheckedFile::ReadBlocks(uint64_t begin, uint64_t end, bool map, Buffer& buffer) const {
  if (map && begin == 0) {
    auto mapped = Buffer::Map(fd_, end, path_);
    if (!mapped.ok()) return mapped.status();
    buffer = std::move(*mapped);
    return absl::OkStatus();
  }
  auto pages = Buffer::Pages(end - begin, path_);
  if (!pages.ok()) return pages.status();
  buffer = std::move(*pages);
  uint64_t done = 0;
  while (done < end - begin) {
    const ssize_t n = ::pread(fd_, buffer.writable() + done, end - begin - done,
                              static_cast<off_t>(begin + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::DataLossError(absl::StrCat(
          path_, ": cannot read: ", n == 0 ? "unexpected end of file" : std::strerror(errno)));
    }
    done += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

absl::Status CheckedFile::CheckBlocks(uint64_t first, uint64_t last, uint64_t begin, uint64_t end,
                                      const Buffer& buffer) const {
  const uint64_t b = manifest_.block_bytes;
  std::atomic<uint64_t> bad{UINT64_MAX};
  tbb::parallel_for(first, last, [&](uint64_t k) {
    const uint64_t from = k * b - begin;
    const uint64_t len = std::min(b, end - begin - from);
    if (bsp::Crc32c(std::string_view(buffer.data() + from, len)) != entry_.crcs[k]) {
      uint64_t seen = bad.load();
      while (k < seen && !bad.compare_exchange_weak(seen, k)) {
      }
    }
  });
  if (bad.load() != UINT64_MAX) {
    const uint64_t k = bad.load();
    return absl::DataLossError(absl::StrCat(path_, ": checksum mismatch in bytes [", k * b, ", ",
                                            std::min(entry_.size, (k + 1) * b),
                                            ") (the file is corrupt)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<FileHeader> CheckedFile::Header(uint32_t kind, uint32_t part) const {
  Buffer buf;
  const char* at = nullptr;
  if (auto st = Read(0, sizeof(FileHeader), buf, at); !st.ok()) return st;
  FileHeader h;
  std::memcpy(&h, at, sizeof h);
  auto bad = [&](std::string_view what) {
    return absl::DataLossError(
        absl::StrCat(path_, ": ", absl::string_view(what.data(), what.size())));
  };
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return bad("not a lockstep-parts file");
  if (h.byte_order != kByteOrder) return bad("written with another byte order");
  if (h.version != kVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": format version ", h.version, ", this build reads ", kVersion));
  }
  if (h.graph_id != manifest_.graph_id) {
    return bad(absl::StrCat("belongs to another partitioned graph (not the one ", kFormManifestName,
                            " describes)"));
  }
  const size_t files = kind == kKindData ? manifest_.data.size() : manifest_.names.size();
  if (h.kind != kind || h.part != part || h.parts != files ||
      (kind == kKindNames && h.num_vertices != entry_.count)) {
    return bad("is not the file the manifest lists under this name");
  }
  if (h.num_vertices > kMaxCount || h.num_primary > kMaxCount || h.num_secondary > kMaxCount ||
      h.num_ends > kMaxCount || h.name_bytes > kMaxCount) {
    return bad("impossible counts in its header");
  }
  const uint64_t size = kind == kKindData ? LayoutOf(h).size : NamesSize(h);
  if (size != entry_.size) return bad("its sections do not add up to its size");
  return h;
}

}  // namespace lockstep::load::form
