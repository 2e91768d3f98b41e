#include "job/checkpoint_choice.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "absl/strings/numbers.h"
#include "lockstep/bsp/checkpoint.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp::job {

std::vector<ResumePoint> CompleteCheckpoints(const std::string& job_dir) {
  struct Found {
    uint64_t superstep, attempt;
    std::string dir;
  };
  std::vector<Found> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(job_dir, ec)) {
    const std::string name = entry.path().filename().string();
    uint64_t attempt = 0;
    if (name.rfind("attempt-", 0) != 0 || !absl::SimpleAtoi(name.substr(8), &attempt)) continue;
    for (uint64_t superstep : bsp::ListCheckpoints(entry.path().string())) {
      found.push_back(
          {superstep, attempt, bsp::CheckpointStepDir(entry.path().string(), superstep)});
    }
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return std::tie(a.superstep, a.attempt) > std::tie(b.superstep, b.attempt);
  });
  std::vector<ResumePoint> out;
  for (Found& f : found) out.push_back({std::move(f.dir), f.superstep});
  return out;
}

ResumePoint CheckpointChoice::Choose(bool verify) {
  for (ResumePoint& p : CompleteCheckpoints(job_dir_)) {
    if (refused_.contains(p.dir)) continue;
    if (verify) {
      const bsp::CheckpointHeader expect{app_, job_id_, p.superstep, 0, 0};
      if (auto st = bsp::VerifyCheckpoint(p.dir, expect); !st.ok()) {
        Refuse(p.dir, st);
        continue;
      }
    }
    return std::move(p);
  }
  return {};
}

void CheckpointChoice::Refuse(const std::string& dir, const absl::Status& why) {
  refused_.insert(dir);
  spdlog::warn("{}checkpoint {} is passed over: {}", log_prefix_, dir, std::string(why.message()));
}

}  // namespace lockstep::dbsp::job
