#include "lockstep/bsp/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>

#include "absl/strings/str_cat.h"

namespace lockstep::bsp {

namespace {

absl::Status WriteError(const std::string& path, int err) {
  const std::string message = absl::StrCat("cannot write ", path, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM || err == EROFS) return absl::PermissionDeniedError(message);
  return absl::DataLossError(message);
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// The descriptor of this process that `path` names, if it is one of the names Linux gives to a
// process's own descriptors: /dev/stdout and /dev/stderr, /dev/fd/N, /proc/self/fd/N.
std::optional<int> OwnDescriptor(std::string_view path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view dir : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/")}) {
    if (!path.starts_with(dir)) continue;
    const std::string_view digits = path.substr(dir.size());
    int fd = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
    if (ec == std::errc() && end == digits.data() + digits.size() && fd >= 0) return fd;
  }
  return std::nullopt;
}

using Pieces = absl::FunctionRef<bool(std::string_view&)>;

bool WriteAll(int fd, Pieces next) {
  std::string_view p;
  while (next(p)) {
    if (!WriteAll(fd, p)) return false;
  }
  return true;
}

// Writes into what is already there: a device, a FIFO, a descriptor of this process.
absl::Status WriteInPlace(const std::string& path, Pieces bytes) {
  if (const std::optional<int> own = OwnDescriptor(path)) {
    if (!WriteAll(*own, bytes)) return WriteError(path, errno);
    return absl::OkStatus();
  }
  // No O_CREAT (it exists) and no O_TRUNC (meaningless for a device or a FIFO). A FIFO blocks
  // here until a reader opens it, as it does for any writer.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return WriteError(path, errno);
  const bool written = WriteAll(fd, bytes);
  const int err = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) return WriteError(path, written ? errno : err);
  return absl::OkStatus();
}

// Writes a temporary file beside `path` and renames it onto `path`.
absl::Status ReplaceAtomically(const std::string& path, Pieces next) {
  const std::string tmp = absl::StrCat(path, ".tmp-", ::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    const int err = errno;
    const std::string message = absl::StrCat("cannot write ", path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message) : absl::PermissionDeniedError(message);
  }
  bool written = true;
  std::string_view bytes;
  while (written && next(bytes)) {
    written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  }
  const bool flushed = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const bool closed = std::fclose(f) == 0;
  if (!written || !flushed || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return absl::DataLossError(absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<std::string>> AtomicReplaceTarget(const std::string& path) {
  if (OwnDescriptor(path)) return std::nullopt;
  struct stat link;
  if (::lstat(path.c_str(), &link) != 0) {
    if (errno != ENOENT) return WriteError(path, errno);
    return path;  // a new file
  }
  // A directory is left to the rename, which refuses to put a file in its place.
  if (S_ISREG(link.st_mode) || S_ISDIR(link.st_mode)) return path;
  if (S_ISLNK(link.st_mode)) {
    // Renaming onto a symbolic link would replace the link, not what it points to (and
    // /dev/stdout is one). Replace a regular file it leads to; write into anything else.
    struct stat target;
    const bool exists = ::stat(path.c_str(), &target) == 0;
    if (!exists && errno != ENOENT) return WriteError(path, errno);
    if (!exists || S_ISREG(target.st_mode) || S_ISDIR(target.st_mode)) {
      std::error_code ec;
      const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ec);
      if (ec) return WriteError(path, ec.value());
      return resolved.string();
    }
  }
  // A device, a FIFO, a socket: never replaced (replacing /dev/null with a regular file breaks
  // every program on the machine). Writing into it is what the user asked for (a socket refuses to
  // be opened).
  return std::nullopt;
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  return WriteFileAtomically(path, std::span<const std::string_view>(&bytes, 1));
}

absl::Status WriteFileAtomically(const std::string& path,
                                 std::span<const std::string_view> pieces) {
  size_t i = 0;
  return WriteFileAtomically(path, [&](std::string_view& p) {
    if (i == pieces.size()) return false;
    p = pieces[i++];
    return true;
  });
}

absl::Status WriteFileAtomically(const std::string& path, Pieces next) {
  auto target = AtomicReplaceTarget(path);
  if (!target.ok()) return target.status();
  if (*target) return ReplaceAtomically(**target, next);
  return WriteInPlace(path, next);
}

void AppendDouble(double value, std::string& out) {
  if (std::isinf(value)) {
    out += value > 0 ? "Infinity" : "-Infinity";
    return;
  }
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", value);
  out.append(buf, static_cast<size_t>(n));
}

void AppendInt(int64_t value, std::string& out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, end);
}

void AppendUint(uint64_t value, std::string& out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, end);
}

}  // namespace lockstep::bsp
