#include "form/form_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "lockstep/load/input_form.h"

namespace lockstep::load::form {
namespace {

absl::Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("cannot open ", dir, ": ", std::strerror(errno)));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0)
    return absl::InternalError(absl::StrCat("cannot sync ", dir, ": ", std::strerror(errno)));
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteWhole(const std::string& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  // On disk before the manifest names it.
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status PrepareDir(const std::string& dir, std::vector<std::string>& old_files) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    if (!std::filesystem::is_directory(dir, ec)) {
      return absl::FailedPreconditionError(absl::StrCat(dir, " exists and is not a directory"));
    }
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      // A directory holding nothing but the writers' files may be written over.
      if (!IsFormFileName(name)) {
        return absl::FailedPreconditionError(
            absl::StrCat(dir, " exists and is not a partitioned graph (it holds ", name,
                         "; give a new or empty directory)"));
      }
      if (name != kFormManifestName) old_files.push_back(name);
    }
    if (ec) return absl::InternalError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
    if (IsPartitionedForm(dir)) {
      // The old manifest goes first: from here until the new one is in place, the directory is
      // not a partitioned graph, so no reader takes a mix of old and new files.
      if (::unlink(ManifestPath(dir).c_str()) != 0) {
        return absl::InternalError(
            absl::StrCat("cannot remove ", ManifestPath(dir), ": ", std::strerror(errno)));
      }
      if (auto st = SyncDir(dir); !st.ok()) return st;
    }
  } else if (!std::filesystem::create_directories(dir, ec)) {
    return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  }

  return absl::OkStatus();
}

absl::Status CommitManifest(const Manifest& m, const std::vector<std::string>& old_files) {
  const std::string& dir = m.dir;
  const std::string tmp = ManifestPath(dir) + ".tmp";
  if (auto st = WriteWhole(tmp, EncodeManifest(m)); !st.ok()) return st;
  if (::rename(tmp.c_str(), ManifestPath(dir).c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot rename ", tmp, " to ", ManifestPath(dir), ": ", std::strerror(errno)));
  }
  if (auto st = SyncDir(dir); !st.ok()) return st;
  std::error_code ec;
  for (const std::string& name : old_files) {
    auto named = [&](const FileEntry& f) { return f.name == name; };
    const bool used = std::any_of(m.data.begin(), m.data.end(), named) ||
                      std::any_of(m.names.begin(), m.names.end(), named);
    if (!used) std::filesystem::remove(dir + "/" + name, ec);
  }
  return absl::OkStatus();
}

uint64_t RandomGraphId() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd();
}

}  // namespace lockstep::load::form
