#include "job/job_record.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/checksum.h"
#include "lockstep/bsp/output.h"

namespace lockstep::dbsp::job {
namespace fs = std::filesystem;

namespace {
// Format 2 carries a CRC-32C; a format-1 record (which has none) is refused, not trusted.
constexpr char kFormat[] = "lockstep-job 2";
constexpr char kUncheckedFormat[] = "lockstep-job 1";
constexpr char kCrcKey[] = "crc32c";

// The CRC-32C of a record: of its compact JSON without the CRC member, whose keys are in order,
// so that it does not depend on how the file was laid out, only on what it says.
uint32_t RecordCrc(const nlohmann::json& without_crc) { return bsp::Crc32c(without_crc.dump()); }
}  // namespace

std::string JobRecordPath(const std::string& job_dir) { return job_dir + "/JOB"; }
std::string JobLeasePath(const std::string& job_dir) { return job_dir + "/LEASE"; }

absl::StatusOr<JobRecord> ReadJobRecord(const std::string& job_dir) {
  const std::string path = JobRecordPath(job_dir);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read job record ", path));
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  // A record that cannot be trusted is refused, and the job's directory left as it is: what the
  // job computes and where it publishes come from it (docs/design.md §7.7).
  auto bad = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat(
        "job record ", path, " ", what, "; the job is not resumed and its directory ", job_dir,
        " is left as it is: restore the record, or remove the directory to drop the job"));
  };
  if (j.is_discarded() || !j.is_object()) return bad("is damaged: it is not JSON");
  const std::string format =
      j.contains("format") && j["format"].is_string() ? j["format"].get<std::string>() : "";
  if (format == kUncheckedFormat) {
    return bad(absl::StrCat("is of format '", kUncheckedFormat,
                            "', written by an older lockstep without a CRC-32C, so it cannot be "
                            "checked (finish the job with the lockstep that wrote it)"));
  }
  if (format != kFormat) return bad(absl::StrCat("is not a '", kFormat, "' record"));
  if (!j.contains(kCrcKey) || !j[kCrcKey].is_number_unsigned()) {
    return bad("is damaged: it has no CRC-32C");
  }
  const uint64_t crc = j[kCrcKey].get<uint64_t>();
  j.erase(kCrcKey);
  if (crc != RecordCrc(j)) {
    return bad(
        "is damaged: its CRC-32C does not match what it says (it changed after it was written: "
        "a flipped bit, or an edit)");
  }
  JobRecord r;
  try {
    r.job_id = j.at("job_id").get<std::string>();
    r.created_at_unix_ms = j.at("created_at_unix_ms").get<int64_t>();
    r.job = j.at("job");
    r.run = j.at("run");
    r.attempt = j.at("attempt").get<uint32_t>();
    r.workers = j.at("workers").get<uint32_t>();
    r.checkpoint = j.at("checkpoint").get<uint64_t>();
    r.restarts = j.at("restarts");
  } catch (const nlohmann::json::exception& e) {
    return bad(absl::StrCat("lacks a field or has one of the wrong type: ", e.what()));
  }
  if (!r.job.is_object() || !r.run.is_object() || !r.restarts.is_array()) {
    return bad("has a job, run or restarts of the wrong type");
  }
  if (r.job_id != fs::path(job_dir).filename().string()) {
    return bad(absl::StrCat("names job '", r.job_id, "', not its directory's"));
  }
  return r;
}

absl::Status JobRecordFile::WriteLocked() {
  nlohmann::json j = {{"format", kFormat},
                      {"job_id", record_.job_id},
                      {"created_at_unix_ms", record_.created_at_unix_ms},
                      {"job", record_.job},
                      {"run", record_.run},
                      {"attempt", record_.attempt},
                      {"workers", record_.workers},
                      {"checkpoint", record_.checkpoint},
                      {"restarts", record_.restarts}};
  j[kCrcKey] = RecordCrc(j);
  return bsp::WriteFileAtomically(JobRecordPath(dir_), j.dump(2) + "\n");
}

std::vector<std::string> UnfinishedJobDirs(const std::string& checkpoint_dir) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir, ec)) {
    const std::string dir = entry.path().string();
    if (fs::exists(JobRecordPath(dir), ec)) dirs.push_back(dir);
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace lockstep::dbsp::job
