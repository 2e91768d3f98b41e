#include "job/output_dir.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lockstep/bsp/output.h"
#include "lockstep/dbsp/settings.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp::job {
namespace fs = std::filesystem;

// --- Lease

namespace {

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// "host boot-id pid-namespace": the processes whose PIDs this process can judge.
std::string ProcessSpace() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::string boot = ReadSmallFile("/proc/sys/kernel/random/boot_id");
  while (!boot.empty() && (boot.back() == '\n' || boot.back() == ' ')) boot.pop_back();
  std::error_code ec;
  const std::string pidns = fs::read_symlink("/proc/self/ns/pid", ec).string();
  return absl::StrCat(host, " ", boot.empty() ? "-" : boot, " ", pidns.empty() ? "-" : pidns);
}

// What a new lease's file holds: the process space, the PID (which IsDead reads), then a nonce, so
// that two leases of one process (two masters in one) differ.
std::string NewHolder() {
  static std::atomic<uint64_t> taken{0};
  return absl::StrCat(ProcessSpace(), "\n", ::getpid(), "\n", taken.fetch_add(1), "\n");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Lease>> Lease::Acquire(const std::string& path) {
  const std::string holder = NewHolder();
  std::unique_ptr<Lease> lease(new Lease(path, holder));
  if (auto st = bsp::WriteFileAtomically(path, holder); !st.ok()) return st;
  lease->StartRenewing();
  return lease;
}

absl::StatusOr<std::unique_ptr<Lease>> Lease::TryAcquire(const std::string& path) {
  auto held = [&](const std::string& holder) {
    std::string who = holder;
    std::replace(who.begin(), who.end(), '\n', ' ');
    while (!who.empty() && who.back() == ' ') who.pop_back();
    return absl::FailedPreconditionError(absl::StrCat(
        "lease ", path, " is held by a live process (", who.substr(0, 200), "; renewed every ",
        kRenewEvery.count(), " s, dead after ", kDeadAfter.count(), " s without)"));
  };
  std::error_code ec;
  if (fs::exists(path, ec)) {
    const std::string judged = ReadSmallFile(path);
    if (!IsDead(path)) return held(judged);
    // Moved aside before it goes: if what moved is not the dead lease judged (another process took
    // it over meanwhile), it is put back and this one refuses.
    const std::string aside = absl::StrCat(path, ".dead-", ::getpid());
    if (::rename(path.c_str(), aside.c_str()) != 0) {
      if (errno != ENOENT) return absl::ErrnoToStatus(errno, "cannot take over lease " + path);
    } else {
      const std::string moved = ReadSmallFile(aside);
      if (moved != judged) {
        (void)::link(aside.c_str(), path.c_str());
        fs::remove(aside, ec);
        return held(moved);
      }
      fs::remove(aside, ec);
    }
  }
  const std::string holder = NewHolder();
  const std::string temp = absl::StrCat(path, ".new-", ::getpid());
  if (auto st = bsp::WriteFileAtomically(temp, holder); !st.ok()) return st;
  // link() fails if the name exists: only one of two processes that got here makes the lease.
  const int linked = ::link(temp.c_str(), path.c_str());
  const int err = errno;
  fs::remove(temp, ec);
  if (linked != 0) {
    if (err == EEXIST) return held(ReadSmallFile(path));
    return absl::ErrnoToStatus(err, "cannot write lease " + path);
  }
  std::unique_ptr<Lease> lease(new Lease(path, holder));
  lease->StartRenewing();
  return lease;
}

namespace {
int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void Lease::StartRenewing() {
  renewed_ms_.store(SteadyMs());
  renewer_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_.wait_for(lock, kRenewEvery, [this] { return stopping_; })) {
      // Fencing: a lease taken over by another process (its file gone or naming another) is
      // not renewed, and this one is told. A read that fails otherwise is tried again.
      std::error_code exists_ec;
      const bool exists = fs::exists(path_, exists_ec);
      const std::string content = ReadSmallFile(path_);
      if ((!exists && !exists_ec) || (!content.empty() && content != holder_)) {
        lost_.store(true);
        return;
      }
      std::error_code ec;
      fs::last_write_time(path_, fs::file_time_type::clock::now(), ec);
      if (!ec) renewed_ms_.store(SteadyMs());
    }
  });
}

bool Lease::lost() const {
  // Others judge by the file's time; a margin of two renewals keeps this side the first to know.
  const int64_t margin_ms = 2 * std::chrono::milliseconds(kRenewEvery).count();
  return lost_.load() || SteadyMs() - renewed_ms_.load() >
                             std::chrono::milliseconds(kDeadAfter).count() - margin_ms;
}

Lease::~Lease() { Release(); }

void Lease::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_.notify_all();
  if (renewer_.joinable()) renewer_.join();
  // Only its own: a lease another process took over stays with it. Moved aside first and checked,
  // so that a takeover between the check and the removal is not undone.
  if (lost() || ReadSmallFile(path_) != holder_) return;
  const std::string aside = absl::StrCat(path_, ".released-", ::getpid());
  if (::rename(path_.c_str(), aside.c_str()) != 0) return;
  if (ReadSmallFile(aside) != holder_) (void)::link(aside.c_str(), path_.c_str());
  std::error_code ec;
  fs::remove(aside, ec);
}

bool Lease::IsDead(const std::string& path, std::chrono::seconds dead_after) {
  std::error_code ec;
  const auto written = fs::last_write_time(path, ec);
  if (ec) return true;  // no lease: nobody holds it
  if (fs::file_time_type::clock::now() - written > dead_after) return true;
  // A holder in this very process space that no longer runs is dead now.
  std::istringstream in(ReadSmallFile(path));
  std::string space;
  long pid = 0;
  std::getline(in, space);
  if (!(in >> pid) || pid <= 0 || space != ProcessSpace()) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

std::string ResultFileName(uint32_t worker_index) {
  return absl::StrFormat("part-%05u", worker_index);
}

namespace {

fs::path LinkPath(const std::string& dir) {
  std::error_code ec;
  fs::path link = fs::absolute(fs::path(dir), ec).lexically_normal();
  if (!link.has_filename()) link = link.parent_path();
  return link;
}

}  // namespace

absl::Status CheckOutput(const std::string& dir) {
  std::error_code ec;
  const fs::path link = LinkPath(dir);
  const fs::file_status st = fs::symlink_status(link, ec);
  if (fs::exists(st) && !fs::is_symlink(st) && !(fs::is_directory(st) && fs::is_empty(link, ec))) {
    return absl::FailedPreconditionError(absl::StrCat(
        SettingName(Setting::kOut), ": ", link.string(),
        " exists and is not a lockstep result (a symlink to a job directory); remove it or "
        "choose another path"));
  }
  return absl::OkStatus();
}

namespace {

// Removes the lease file `lease` if it is dead. Moved aside and checked first: a lease a master
// wrote there meanwhile (a resumed job's) is put back.
bool RemoveDeadLease(const fs::path& lease) {
  const std::string judged = ReadSmallFile(lease.string());
  if (!Lease::IsDead(lease.string())) return false;
  const std::string aside = absl::StrCat(lease.string(), ".swept-", ::getpid());
  if (::rename(lease.c_str(), aside.c_str()) != 0) return false;
  const bool removed = ReadSmallFile(aside) == judged;
  if (!removed) (void)::link(aside.c_str(), lease.c_str());
  std::error_code ec;
  fs::remove(aside, ec);
  return removed;
}

// Removes what dead masters left beside DIR: staging directories `.<name>.<job>.staging`, and job
// directories `.<name>.<job>` that DIR does not point to (a master killed between the rename
// and the swap), each only when the lease `.<name>.<job>.lease` beside it is dead; then the dead
// leases left without either (a master killed between its publication and its lease's release).
void SweepDeadStaging(const fs::path& link) {
  const std::string prefix = "." + link.filename().string() + ".";
  std::error_code ec;
  fs::path current;
  if (fs::is_symlink(fs::symlink_status(link, ec))) current = fs::read_symlink(link, ec).filename();
  for (const auto& entry : fs::directory_iterator(link.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || name.ends_with(".lease") || name.ends_with(".link")) continue;
    std::error_code type_ec;
    if (!entry.is_directory(type_ec) || name == current.string()) continue;
    const std::string base =
        name.ends_with(".staging") ? name.substr(0, name.size() - 8) : name;  // ".staging"
    const fs::path lease = link.parent_path() / (base + ".lease");
    // A directory younger than the lease timeout may be one whose lease is being written.
    const auto age = fs::file_time_type::clock::now() - fs::last_write_time(entry.path(), type_ec);
    if (!Lease::IsDead(lease.string()) || (!fs::exists(lease) && age < Lease::kDeadAfter)) continue;
    std::error_code rm;
    fs::remove_all(entry.path(), rm);
    RemoveDeadLease(lease);
    if (!rm) spdlog::info("removed {}, left by a master that is gone", entry.path().string());
  }
  for (const auto& entry : fs::directory_iterator(link.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(".lease") && RemoveDeadLease(entry.path())) {
      spdlog::info("removed {}, left by a master that is gone", entry.path().string());
    }
  }
}

}  // namespace

absl::StatusOr<PreparedOutput> PrepareOutput(const std::string& dir, const std::string& job_id) {
  std::error_code ec;
  const fs::path link = LinkPath(dir);
  const fs::path parent = link.parent_path();
  fs::create_directories(parent, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat(SettingName(Setting::kOut), ": cannot create ",
                                                    parent.string(), ": ", ec.message()));
  }
  if (auto st = CheckOutput(dir); !st.ok()) return st;
  SweepDeadStaging(link);
  const std::string base = "." + link.filename().string() + "." + job_id;
  PreparedOutput prepared;
  JobOutput& out = prepared.output;
  out.link = link.string();
  out.final = (parent / base).string();
  out.staging = (parent / (base + ".staging")).string();
  out.lease = (parent / (base + ".lease")).string();
  auto taken = Lease::Acquire(out.lease);  // first: a staging directory never lacks its lease
  if (!taken.ok()) return taken.status();
  prepared.lease = *std::move(taken);
  fs::create_directory(out.staging, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat(SettingName(Setting::kOut), ": cannot create ",
                                                    out.staging, ": ", ec.message()));
  }
  return prepared;
}

absl::Status VerifyResultFile(const std::string& path, const runner::OutputSummary& reported) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::DataLossError(absl::StrCat(fs::path(path).filename().string(),
                                            " is missing (its worker reported ", reported.vertices,
                                            " vertices in ", reported.bytes, " bytes)"));
  }
  std::string buffer(1 << 20, '\0');
  runner::OutputSummary found;
  for (size_t got; (got = std::fread(buffer.data(), 1, buffer.size(), f)) > 0;) {
    const std::string_view chunk(buffer.data(), got);
    found.bytes += got;
    found.vertices += static_cast<uint64_t>(std::count(chunk.begin(), chunk.end(), '\n'));
    found.crc32c = bsp::Crc32c(chunk, found.crc32c);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  const std::string name = fs::path(path).filename().string();
  if (failed) return absl::DataLossError(absl::StrCat("cannot read ", name));
  if (found.vertices != reported.vertices || found.bytes != reported.bytes) {
    return absl::DataLossError(absl::StrCat(name, " holds ", found.vertices, " vertices in ",
                                            found.bytes, " bytes; its worker reported ",
                                            reported.vertices, " in ", reported.bytes));
  }
  if (found.crc32c != reported.crc32c) {
    return absl::DataLossError(absl::StrFormat("%s has CRC-32C %08x; its worker reported %08x",
                                               name, found.crc32c, reported.crc32c));
  }
  return absl::OkStatus();
}

absl::Status PublishOutput(const JobOutput& out, const std::string& success_json) {
  std::error_code ec;
  if (auto st = bsp::WriteFileAtomically(out.staging + "/_SUCCESS", success_json); !st.ok()) {
    return st;
  }
  fs::rename(out.staging, out.final, ec);
  if (ec)
    return absl::DataLossError(absl::StrCat("cannot publish ", out.final, ": ", ec.message()));
  const fs::path link(out.link);
  fs::path previous;
  const fs::file_status st = fs::symlink_status(link, ec);
  if (fs::is_symlink(st)) {
    previous = fs::read_symlink(link, ec);
    if (previous.is_relative()) previous = link.parent_path() / previous;
  } else if (fs::is_directory(st)) {
    fs::remove(link, ec);  // an empty directory, checked when the job started
  }
  const fs::path tmp_link = fs::path(out.final + ".link");
  fs::remove(tmp_link, ec);
  fs::create_symlink(fs::path(out.final).filename(), tmp_link, ec);
  if (!ec) fs::rename(tmp_link, link, ec);
  if (ec) {
    const std::string reason = ec.message();
    std::error_code ignored;
    fs::remove(tmp_link, ignored);
    // Back where DiscardOutput looks, so that a failed job leaves no directory behind.
    fs::rename(out.final, out.staging, ignored);
    return absl::DataLossError(
        absl::StrCat("cannot point ", out.link, " at ", out.final, ": ", reason));
  }
  // The previous result goes once nobody can reach it through the link any more.
  if (!previous.empty() &&
      previous.filename().string().starts_with("." + link.filename().string() + ".") &&
      previous.lexically_normal() != fs::path(out.final).lexically_normal()) {
    fs::remove_all(previous, ec);
  }
  return absl::OkStatus();
}

void DiscardOutput(const JobOutput& out) {
  std::error_code ec;
  fs::remove_all(out.staging, ec);
}

}  // namespace lockstep::dbsp::job
