#include "job/result_staging.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace lockstep::dbsp::job {

absl::Status ResultStaging::Prepare(uint32_t attempt) {
  Discard();
  const std::string name = attempt == 0 ? job_id_ : absl::StrCat(job_id_, "-", attempt + 1);
  if (spec_.sink) {
    auto made = spec_.sink->prepare(name);
    if (!made.ok()) return made.status();
    staged_ = *std::move(made);
    return absl::OkStatus();
  }
  auto prepared = PrepareOutput(spec_.details.work.output, name);
  if (!prepared.ok()) return prepared.status();
  output_ = std::move(prepared->output);
  lease_ = std::move(prepared->lease);
  return absl::OkStatus();
}

runner::JobDetails ResultStaging::ForWorker(uint32_t w, runner::JobDetails details) const {
  if (staged_) {
    // details.work.output names the sink; the staging place goes with its options.
    for (const auto& [k, v] : *staged_) details.work.output_options[k] = v;
  } else if (output_) {
    details.work.output = output_->staging + "/" + ResultFileName(w);
  }
  return details;
}

std::function<absl::Status(uint32_t, const runner::OutputSummary&)> ResultStaging::PartCheck()
    const {
  if (!output_) return nullptr;
  return [staging = output_->staging](uint32_t w, const runner::OutputSummary& part) {
    return VerifyResultFile(staging + "/" + ResultFileName(w), part);
  };
}

absl::StatusOr<std::string> ResultStaging::Publish(const nlohmann::json& success,
                                                   uint64_t vertices) {
  std::string published;
  if (staged_) {
    if (auto st = spec_.sink->publish(*staged_, vertices, success.dump()); !st.ok()) return st;
    published = spec_.details.work.output;
  } else if (output_) {
    if (auto st = PublishOutput(*output_, success.dump(2) + "\n"); !st.ok()) return st;
    published = output_->final;
  } else {
    return absl::InternalError("the job's results were never staged");
  }
  // Published: nothing staged is left to drop.
  output_.reset();
  staged_.reset();
  if (lease_) lease_->Release();
  return published;
}

void ResultStaging::Discard() {
  if (output_) DiscardOutput(*output_);
  if (staged_) spec_.sink->discard(*staged_);
  if (lease_) lease_->Release();
  output_.reset();
  staged_.reset();
}

}  // namespace lockstep::dbsp::job
