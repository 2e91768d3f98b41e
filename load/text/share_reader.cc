#include "text/share_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "text/input_files.h"

namespace lockstep::load::text {

ShareReader::~ShareReader() {
  for (Segment& s : segments_) {
    if (s.fd >= 0) ::close(s.fd);
  }
}

absl::Status ShareReader::Open(const std::string& path, uint32_t rank, uint32_t size,
                               bool directories) {
  if (directories && IsDirectory(path)) {
    directory_ = true;
    auto files = ListEdgeFiles(path);
    if (!files.ok()) return files.status();
    for (InputFile& f : *files) {
      segments_.push_back({std::move(f.path), total_, f.size, -1});
      total_ += f.size;
    }
  } else {
    Segment one{path, 0, 0, ::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (one.fd < 0) {
      return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
    }
    segments_.push_back(std::move(one));
    struct stat info;
    if (::fstat(segments_[0].fd, &info) != 0 || !S_ISREG(info.st_mode)) {
      return absl::DataLossError(absl::StrCat("cannot read ", path));
    }
    segments_[0].size = total_ = static_cast<uint64_t>(info.st_size);
  }
  const auto cut = [&](uint64_t r) {
    // floor(total_ * r / size) without the product, which may not fit 64 bits.
    return total_ / size * r + total_ % size * r / size;
  };
  auto begin = LineStartFrom(cut(rank));
  if (!begin.ok()) return begin.status();
  auto end = LineStartFrom(cut(rank + 1));
  if (!end.ok()) return end.status();
  pos_ = *begin;
  end_ = *end;
  return absl::OkStatus();
}

absl::StatusOr<std::string> ShareReader::Next(uint64_t max_bytes) {
  if (done()) return std::string();
  auto next = LineStartFrom(pos_ + std::min(end_ - pos_, std::max<uint64_t>(1, max_bytes)));
  if (!next.ok()) return next.status();
  std::string text;
  text.reserve(*next - pos_ + 1);
  for (size_t i = SegmentAt(pos_); pos_ < *next; ++i) {
    Segment& s = segments_[i];
    const uint64_t until = std::min(*next, s.start + s.size);
    if (until <= pos_) continue;  // an empty file
    const size_t at = text.size();
    text.resize(at + (until - pos_));
    if (auto st = ReadAt(i, pos_ - s.start, text.data() + at, until - pos_); !st.ok()) return st;
    if (until == s.start + s.size) {
      // The file's last line ends with it; and the share is done with the file (a directory may
      // hold more files than a process may keep open).
      if (text.back() != '\n') text.push_back('\n');
      if (s.fd >= 0) ::close(s.fd);
      s.fd = -1;
    }
    if (directory_) {
      const auto lines = static_cast<uint64_t>(std::count(text.begin() + at, text.end(), '\n'));
      if (!lines_.empty() && lines_.back().first == i) {
        lines_.back().second += lines;
      } else {
        lines_.emplace_back(static_cast<uint32_t>(i), lines);
      }
    }
    pos_ = until;
  }
  pos_ = *next;
  return text;
}

size_t ShareReader::SegmentAt(uint64_t x) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), x,
                             [](uint64_t v, const Segment& s) { return v < s.start; });
  size_t i = static_cast<size_t>(it - segments_.begin()) - 1;
  while (i + 1 < segments_.size() && segments_[i].size == 0) ++i;
  return i;
}

absl::Status ShareReader::ReadAt(size_t segment, uint64_t offset, char* out, size_t n) {
  Segment& s = segments_[segment];
  if (s.fd < 0) {
    s.fd = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (s.fd < 0) {
      return absl::NotFoundError(absl::StrCat("cannot open ", s.path, ": ", std::strerror(errno)));
    }
  }
  while (n > 0) {
    const ssize_t got = ::pread(s.fd, out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return absl::DataLossError(absl::StrCat("cannot read ", s.path));
    out += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ShareReader::LineStartFrom(uint64_t x) {
  if (x == 0 || x >= total_) return std::min(x, total_);
  const size_t i = SegmentAt(x);
  const Segment& s = segments_[i];
  if (x == s.start) return x;
  const uint64_t end = s.start + s.size;
  char buf[1 << 16];
  uint64_t at = x - 1;
  while (at < end) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof buf, end - at));
    if (auto st = ReadAt(i, at - s.start, buf, n); !st.ok()) return st;
    const void* nl = std::memchr(buf, '\n', n);
    if (nl != nullptr) return at + static_cast<uint64_t>(static_cast<const char*>(nl) - buf) + 1;
    at += n;
  }
  return end;
}

}  // namespace lockstep::load::text
