#include "job/job_attempts.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "job/spec_record.h"
#include "lockstep/dbsp/settings.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp::job {
namespace {

std::string CheckpointRoot(const JobSpec& spec, const std::string& job_id) {
  return spec.checkpoint_every > 0 || spec.checkpoint_interval.count() > 0
             ? absl::StrCat(spec.checkpoint_dir, "/", job_id)
             : "";
}

std::string From(uint64_t superstep) {
  return superstep == 0 ? std::string("the start")
                        : absl::StrCat("the checkpoint at superstep ", superstep);
}

}  // namespace

JobAttempts::JobAttempts(const JobSpec& spec, runner::JobDetails details,
                         AttemptClock::time_point started, const std::atomic<bool>& cancel,
                         std::string log_prefix)
    : spec_(spec),
      details_(std::move(details)),
      cancel_(cancel),
      job_id_(details_.work.job_id),
      log_prefix_(std::move(log_prefix)),
      started_(started),
      checkpoint_root_(CheckpointRoot(spec, job_id_)),
      staging_(spec, job_id_),
      choice_(checkpoint_root_, details_.work.app, job_id_, log_prefix_),
      recovery_from_(started) {}

absl::StatusOr<std::unique_ptr<JobAttempts>> JobAttempts::Open(const JobSpec& spec,
                                                               runner::JobDetails details,
                                                               AttemptClock::time_point started,
                                                               const std::atomic<bool>& cancel,
                                                               std::string log_prefix) {
  std::unique_ptr<JobAttempts> job(
      new JobAttempts(spec, std::move(details), started, cancel, std::move(log_prefix)));
  const bool resuming = !spec.resume_job.empty();
  if (!job->checkpoint_root_.empty()) {
    if (auto st = job->OpenRecord(resuming); !st.ok()) return st;
  }
  if (auto st = job->staging_.Prepare(job->attempt_); !st.ok()) return st;
  if (job->record_) job->remove_dir_ = job->checkpoint_root_;
  if (resuming) job->Resume();
  // --max-restarts counts the restarts after a lost worker, not a master's restarts.
  for (const nlohmann::json& r : job->restarts_) {
    if (r.value("after", std::string()) != kMasterRestarted) ++job->restarts_used_;
  }
  return job;
}

absl::Status JobAttempts::OpenRecord(bool resuming) {
  std::error_code ec;
  std::filesystem::create_directories(checkpoint_root_, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(SettingName(Setting::kCheckpointDir),
                                                      ": cannot make ", checkpoint_root_, ": ",
                                                      ec.message()));
  }
  // A new job's directory goes with it from here; a resumed job's only once it runs again (a
  // set-up error must not throw away the state another master could still resume).
  if (!resuming) remove_dir_ = checkpoint_root_;
  auto lease = Lease::TryAcquire(JobLeasePath(checkpoint_root_));
  if (!lease.ok()) {
    if (!resuming) remove_dir_.clear();  // another master's directory
    return absl::AlreadyExistsError(
        absl::StrCat("job ", job_id_, " in ", SettingName(Setting::kCheckpointDir), " ",
                     spec_.checkpoint_dir, ": ", lease.status().message()));
  }
  master_lease_ = *std::move(lease);
  JobRecord r;
  if (resuming) {
    auto read = ReadJobRecord(checkpoint_root_);
    if (!read.ok()) return read.status();
    r = *std::move(read);
    details_.work.created_at_unix_ms = r.created_at_unix_ms;
    attempt_ = r.attempt + 1;
    workers_before_ = r.workers;
    restarts_ = r.restarts;
  } else {
    r.job_id = job_id_;
    r.created_at_unix_ms = details_.work.created_at_unix_ms;
  }
  // What a later master compares a command line with, and goes on with (§7.7).
  r.job = JobOfSpec(spec_);
  r.run = RunOfSpec(spec_);
  record_.emplace(checkpoint_root_, std::move(r));
  return record_->Update([](JobRecord&) {});
}

void JobAttempts::Resume() {
  // A graph read from a snapshot that lived with another master: its checkpoints are of a graph
  // this master cannot read again, so the job starts over on a snapshot of its own (§10).
  bool new_snapshot = false;
  for (const std::string& key : spec_.ephemeral_graph_options) {
    new_snapshot = new_snapshot || details_.work.graph.options.contains(key);
  }
  if (new_snapshot) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(checkpoint_root_, ec)) {
      if (entry.path().filename().string().starts_with("attempt-")) {
        std::filesystem::remove_all(entry.path(), ec);
      }
    }
    spdlog::warn(
        "resuming job {} from the start on a new snapshot of its graph: the snapshot it "
        "read ended with the master that exported it",
        job_id_);
  }
  // Written by another master, perhaps long ago: each candidate is read whole before it is
  // taken (§7.7), the newest intact one wins.
  resume_ = choice_.Choose(/*verify=*/true);
  restarts_.push_back({{"attempt", attempt_ + 1},
                       {"after", kMasterRestarted},
                       {"workers_before", workers_before_},
                       {"restored_superstep", resume_.superstep}});
  spdlog::info("resuming job {} from {}", job_id_,
               resume_.superstep == 0
                   ? std::string("the start")
                   : absl::StrCat("checkpoint at superstep ", resume_.superstep));
}

JobAttempts::~JobAttempts() {
  staging_.Discard();
  RemoveCheckpointDir();
}

void JobAttempts::RemoveCheckpointDir() {
  if (remove_dir_.empty()) return;
  if (lease_lost()) {
    // Another master may drive the job now: its directory is not this one's to remove.
    spdlog::warn("the lease of checkpoint directory {} was lost: left as it is", remove_dir_);
    return;
  }
  // The record first, while the lease is held: no later master takes an ended job for an
  // unfinished one, however long the rest takes to go.
  std::error_code ec;
  std::filesystem::remove(JobRecordPath(remove_dir_), ec);
  std::filesystem::remove_all(remove_dir_, ec);
  if (ec) spdlog::warn("cannot remove checkpoint directory {}: {}", remove_dir_, ec.message());
}

absl::StatusOr<AttemptPlan> JobAttempts::Next() {
  if (lease_lost()) {
    // Another master may drive the job now: no attempt more, no record written, nothing removed.
    return End(absl::AlreadyExistsError(
        "the lease on the job's checkpoint directory was lost: another master may drive the job"));
  }
  AttemptPlan plan;
  plan.details = details_;
  plan.details.resume.attempt = attempt_;
  plan.details.resume.restore_from.clear();
  plan.details.resume.superstep = 0;
  if (!checkpoint_root_.empty()) {
    // Each attempt writes its checkpoints apart: a worker of a failed attempt that still writes
    // cannot put a file where a later attempt's checkpoint is.
    plan.checkpoints = {
        absl::StrCat(checkpoint_root_, "/attempt-", attempt_ + 1),
        spec_.checkpoint_every,
        spec_.checkpoint_keep,
        details_.work.app,
        job_id_,
        spec_.checkpoint_interval,
        [this](uint64_t superstep) {
          auto st = record_->Update([superstep](JobRecord& r) { r.checkpoint = superstep; });
          if (!st.ok()) spdlog::warn("{}", std::string(st.message()));
        }};
    plan.details.resume.checkpoint_dir = plan.checkpoints.dir;
    auto st = record_->Update([&](JobRecord& r) {
      r.attempt = attempt_;
      r.checkpoint = resume_.superstep;
      r.restarts = restarts_;
    });
    if (!st.ok()) return End(st);
  }
  plan.pool = spec_.pool;
  if (attempt_ > 0) {
    // Spares and the survivors first, up to the cap (or the last attempt's size), then up to
    // --recovery-timeout for more; at least one.
    plan.pool.min_workers = 1;
    plan.pool.max_workers = spec_.pool.max_workers > 0 ? spec_.pool.max_workers : workers_before_;
    plan.pool.last_call = spec_.recovery_timeout;
    plan.details.resume.restore_from = resume_.dir;
    plan.details.resume.superstep = resume_.superstep;
  }
  plan.last_attempt = restarts_used_ >= spec_.max_restarts;
  return plan;
}

void JobAttempts::RecordWorkers(uint32_t n) {
  if (!record_) return;
  // Not fatal: a later master would only reserve another count of workers.
  if (auto st = record_->Update([n](JobRecord& r) { r.workers = n; }); !st.ok()) {
    spdlog::warn("{}{}", log_prefix_, std::string(st.message()));
  }
}

const nlohmann::json& JobAttempts::NoteRestart(
    uint32_t workers, std::optional<AttemptClock::time_point> first_step_at) {
  if (restarts_.empty()) return restarts_;  // the first attempt
  restarts_.back()["workers"] = workers;
  if (first_step_at) {
    restarts_.back()["recovery_seconds"] =
        std::chrono::duration<double>(*first_step_at - recovery_from_).count();
  }
  return restarts_;
}

JobResult JobAttempts::Published(const AttemptOutcome& outcome) {
  if (record_) {
    std::error_code ec;
    std::filesystem::remove(JobRecordPath(checkpoint_root_), ec);
  }
  JobResult result;
  result.job_id = job_id_;
  result.workers = outcome.workers;
  result.vertices = outcome.vertices;
  result.supersteps = outcome.supersteps;
  result.seconds = outcome.seconds;
  result.output = outcome.output;
  result.attempts = attempt_ + 1;
  spdlog::info("{}completed: {} vertices, {} supersteps, {:.3f} s{}; published {}", log_prefix_,
               result.vertices, result.supersteps, result.seconds,
               attempt_ == 0 ? "" : absl::StrCat(" (", attempt_ + 1, " attempts)"),
               details_.work.output);
  return result;
}

absl::Status JobAttempts::Failed(const AttemptOutcome& outcome) {
  const absl::Status& st = outcome.status;
  NoteRestart(outcome.workers, outcome.first_step_at);
  reasons_.push_back(absl::StrCat("attempt ", attempt_ + 1, ": ", st.message()));
  // A checkpoint the workers could not restore is passed over, not counted as a restart: each
  // one is refused once, so this ends (at the start, from which nothing is restored).
  const std::string restored = attempt_ > 0 ? resume_.dir : "";
  const bool refused = outcome.checkpoint_refused && !restored.empty();
  if (refused) choice_.Refuse(restored, st);
  const bool last_attempt = restarts_used_ >= spec_.max_restarts;
  if (!(refused || (outcome.retrying && !last_attempt)) || cancel_.load()) {
    return End(reasons_.size() == 1 ? st : absl::Status(st.code(), absl::StrJoin(reasons_, "; ")));
  }
  recovery_from_ = outcome.failed_at;
  workers_before_ = outcome.workers;
  if (!refused) ++restarts_used_;
  // A fresh staging: a worker of the failed attempt still writing its part cannot put it among
  // the next attempt's.
  if (auto prepared = staging_.Prepare(attempt_ + 1); !prepared.ok()) return End(prepared);
  // The next attempt resumes from here (the failed attempt's manifest writer has ended).
  if (!checkpoint_root_.empty()) resume_ = choice_.Choose(/*verify=*/false);
  restarts_.push_back({{"attempt", attempt_ + 2},
                       {"after", std::string(st.message())},
                       {"workers_before", outcome.workers},
                       {"restored_superstep", resume_.superstep}});
  spdlog::warn(
      "{}attempt {} failed: {}; recovering {} (attempt {}; {})", log_prefix_, attempt_ + 1,
      std::string(st.message()), absl::StrCat("from ", From(resume_.superstep)), attempt_ + 2,
      refused ? std::string("its checkpoint passed over, not a restart")
              : absl::StrCat("restart ", restarts_used_, " of at most ", spec_.max_restarts));
  ++attempt_;
  return absl::OkStatus();
}

absl::Status JobAttempts::End(absl::Status reason) {
  staging_.Discard();
  if (record_ && cancel_.load()) {
    // A master stopped (SIGTERM: a pod evicted, a node drained) leaves its job, record and
    // checkpoints to the next master on the same checkpoint directory (§7.7).
    remove_dir_.clear();
    spdlog::warn("{}left unfinished in {}: a master started with {} {} resumes it", log_prefix_,
                 checkpoint_root_, SettingName(Setting::kCheckpointDir), spec_.checkpoint_dir);
  }
  // Logged once the job's staging directory is gone.
  spdlog::error("{}aborted: {}", log_prefix_, std::string(reason.message()));
  return reason;
}

}  // namespace lockstep::dbsp::job
