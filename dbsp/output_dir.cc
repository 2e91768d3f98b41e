#include "lockstep/dbsp/output_dir.h"

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lockstep/bsp/output.h"

namespace lockstep::dbsp {
namespace fs = std::filesystem;

std::string PartName(uint32_t worker_index) { return absl::StrFormat("part-%05u", worker_index); }

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
        "--out: ", link.string(),
        " exists and is not a lockstep result (a symlink to a job directory); remove it or "
        "choose another path"));
  }
  return absl::OkStatus();
}

absl::StatusOr<JobOutput> PrepareOutput(const std::string& dir, const std::string& job_id) {
  std::error_code ec;
  const fs::path link = LinkPath(dir);
  const fs::path parent = link.parent_path();
  fs::create_directories(parent, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("--out: cannot create ", parent.string(), ": ", ec.message()));
  }
  if (auto st = CheckOutput(dir); !st.ok()) return st;
  const std::string base = "." + link.filename().string() + "." + job_id;
  JobOutput out;
  out.link = link.string();
  out.final = (parent / base).string();
  out.staging = (parent / (base + ".staging")).string();
  fs::create_directory(out.staging, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("--out: cannot create ", out.staging, ": ", ec.message()));
  }
  return out;
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

}  // namespace lockstep::dbsp
