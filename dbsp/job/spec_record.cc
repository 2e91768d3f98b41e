#include "job/spec_record.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "job/job_record.h"
#include "job/output_dir.h"
#include "lockstep/dbsp/settings.h"

namespace lockstep::dbsp {
namespace job {

// A job as its record keeps it (§7.7): what decides its answer and where it goes, compared with a
// command line's, and how it is run, which a master resuming it without one goes on with.
nlohmann::json JobOfSpec(const JobSpec& spec) {
  const runner::JobDetails& d = spec.details;
  std::error_code ec;
  // A graph or an output that is not a file (a database, §10) is named as given.
  const bool graph_file = d.work.graph.options.empty();
  std::map<std::string, std::string> options = d.work.graph.options;
  for (const std::string& key : spec.ephemeral_graph_options) options.erase(key);
  nlohmann::json job = {
      {"app", d.work.app},
      {"params", d.work.params},
      {"graph",
       {{"path", graph_file ? std::filesystem::absolute(d.work.graph.path, ec).string()
                            : d.work.graph.path},
        {"format", d.work.graph.format},
        {"undirected", d.work.graph.undirected}}},
      {"output", spec.sink ? d.work.output : std::filesystem::absolute(d.work.output, ec).string()},
      {"save_parts", d.save_form},
      {"max_supersteps", d.work.max_supersteps}};
  if (!options.empty()) job["graph"]["options"] = options;
  if (!d.work.output_options.empty()) job["output_options"] = d.work.output_options;
  return job;
}
nlohmann::json RunOfSpec(const JobSpec& spec) {
  return {{"min_workers", spec.pool.min_workers},
          {"max_workers", spec.pool.max_workers},
          {"acquire_timeout_ms", spec.pool.acquire_timeout.count()},
          {"last_call_ms", spec.pool.last_call.count()},
          {"peer_timeout_ms", spec.peer_timeout.count()},
          {"relay_direct", spec.relay_direct},
          {"max_batch_bytes", spec.max_batch_bytes},
          {"checkpoint_every", spec.checkpoint_every},
          {"checkpoint_interval_ms", spec.checkpoint_interval.count()},
          {"checkpoint_keep", spec.checkpoint_keep},
          {"max_restarts", spec.max_restarts},
          {"recovery_timeout_ms", spec.recovery_timeout.count()},
          {"straggler_timeout_ms", spec.straggler_timeout.count()},
          {"replace_stragglers", spec.replace_stragglers},
          {"every_ms", spec.every.count()},
          {"trace_vertices", spec.details.work.trace_vertices}};
}

}  // namespace job

namespace {

using job::JobOfSpec;
using job::RunOfSpec;

// The spec a record holds, for a master given only the checkpoint directory.
absl::StatusOr<JobSpec> SpecOfRecord(const job::JobRecord& r, const std::string& checkpoint_dir,
                                     const catalogue::AppRegistry& apps) {
  JobSpec spec;
  try {
    const nlohmann::json& j = r.job;
    const nlohmann::json& run = r.run;
    runner::JobDetails& d = spec.details;
    d.work.app = j.at("app").get<std::string>();
    d.work.params = j.at("params").get<std::map<std::string, std::string>>();
    d.work.graph.path = j.at("graph").at("path").get<std::string>();
    d.work.graph.format = j.at("graph").at("format").get<std::string>();
    d.work.graph.undirected = j.at("graph").at("undirected").get<bool>();
    if (j.at("graph").contains("options")) {
      d.work.graph.options = j.at("graph").at("options").get<std::map<std::string, std::string>>();
    }
    d.work.output = j.at("output").get<std::string>();
    if (j.contains("output_options")) {
      d.work.output_options = j.at("output_options").get<std::map<std::string, std::string>>();
    }
    d.save_form = j.at("save_parts").get<std::string>();
    d.work.max_supersteps = j.at("max_supersteps").get<uint64_t>();
    using ms = std::chrono::milliseconds;
    spec.pool.min_workers = run.at("min_workers").get<uint32_t>();
    spec.pool.max_workers = run.at("max_workers").get<uint32_t>();
    spec.pool.acquire_timeout = ms(run.at("acquire_timeout_ms").get<int64_t>());
    spec.pool.last_call = ms(run.at("last_call_ms").get<int64_t>());
    spec.peer_timeout = ms(run.at("peer_timeout_ms").get<int64_t>());
    spec.relay_direct = run.at("relay_direct").get<bool>();
    spec.max_batch_bytes = run.at("max_batch_bytes").get<uint64_t>();
    spec.checkpoint_every = run.at("checkpoint_every").get<uint64_t>();
    spec.checkpoint_interval = ms(run.at("checkpoint_interval_ms").get<int64_t>());
    spec.checkpoint_keep = run.at("checkpoint_keep").get<uint32_t>();
    spec.max_restarts = run.at("max_restarts").get<uint32_t>();
    spec.recovery_timeout = ms(run.at("recovery_timeout_ms").get<int64_t>());
    spec.straggler_timeout = ms(run.at("straggler_timeout_ms").get<int64_t>());
    spec.replace_stragglers = run.at("replace_stragglers").get<bool>();
    spec.every = ms(run.at("every_ms").get<int64_t>());
    spec.details.work.trace_vertices =
        run.value("trace_vertices", std::vector<std::string>());  // not in older records
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(
        absl::StrCat("job record ", job::JobRecordPath(checkpoint_dir + "/" + r.job_id),
                     " lacks a field or has one of the wrong type: ", e.what()));
  }
  spec.app = apps.Find(spec.details.work.app);
  if (spec.app == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("job ", r.job_id, " in ", checkpoint_dir,
                                                      " is of app '", spec.details.work.app,
                                                      "', which this build lacks"));
  }
  if (spec.checkpoint_every == 0 && spec.checkpoint_interval.count() == 0) {
    return absl::DataLossError(absl::StrCat("job record of job ", r.job_id, " in ", checkpoint_dir,
                                            " has no checkpoint interval"));
  }
  spec.checkpoint_dir = checkpoint_dir;
  spec.resume_job = r.job_id;
  return spec;
}

// How two jobs' records differ: "params.damping: recorded 0.85, given 0.5; ...".
std::string JobDifferences(const nlohmann::json& recorded, const nlohmann::json& given,
                           const std::string& prefix = "") {
  std::vector<std::string> out;
  std::vector<std::string> keys;
  for (const auto& [k, v] : recorded.items()) keys.push_back(k);
  for (const auto& [k, v] : given.items()) {
    if (!recorded.contains(k)) keys.push_back(k);
  }
  for (const std::string& k : keys) {
    const nlohmann::json a = recorded.value(k, nlohmann::json()),
                         b = given.value(k, nlohmann::json());
    if (a == b) continue;
    if (a.is_object() && b.is_object()) {
      out.push_back(JobDifferences(a, b, prefix + k + "."));
    } else {
      out.push_back(absl::StrCat(prefix, k, ": recorded ", a.dump(), ", given ", b.dump()));
    }
  }
  return absl::StrJoin(out, "; ");
}

// "pagerank on GRAPH to OUT", for errors naming a job.
std::string DescribeJob(const nlohmann::json& job) {
  return absl::StrCat(
      job.value("app", std::string("?")), " on ",
      job.contains("graph") ? job["graph"].value("path", std::string("?")) : std::string("?"),
      " to ", job.value("output", std::string("?")));
}

}  // namespace

absl::StatusOr<std::optional<JobSpec>> FindUnfinishedJob(const std::string& checkpoint_dir,
                                                         const catalogue::AppRegistry& apps,
                                                         const JobSpec* given) {
  std::vector<job::JobRecord> live, dead;
  for (const std::string& dir : job::UnfinishedJobDirs(checkpoint_dir)) {
    auto r = job::ReadJobRecord(dir);
    if (r.status().code() == absl::StatusCode::kNotFound) continue;  // a job that just ended
    if (!r.ok()) return r.status();
    (job::Lease::IsDead(job::JobLeasePath(dir)) ? dead : live).push_back(*std::move(r));
  }
  std::sort(dead.begin(), dead.end(), [](const job::JobRecord& a, const job::JobRecord& b) {
    return a.created_at_unix_ms < b.created_at_unix_ms;
  });
  auto driven = [&](const job::JobRecord& r) {
    return absl::AlreadyExistsError(absl::StrCat(
        "job ", r.job_id, " (", DescribeJob(r.job), ") in ", SettingName(Setting::kCheckpointDir),
        " ", checkpoint_dir, " is driven by a live master (its lease ",
        job::JobLeasePath(checkpoint_dir + "/" + r.job_id),
        " is renewed); a second master does not drive it"));
  };
  if (given == nullptr) {
    if (!dead.empty()) return SpecOfRecord(dead.front(), checkpoint_dir, apps);
    if (!live.empty()) return driven(live.front());
    return absl::NotFoundError(absl::StrCat(
        SettingName(Setting::kCheckpointDir), " ", checkpoint_dir,
        " holds no unfinished job to resume; give the app and the job's settings to start one"));
  }
  const nlohmann::json mine = JobOfSpec(*given);
  for (const job::JobRecord& r : live) {
    if (r.job == mine) return driven(r);
  }
  for (const job::JobRecord& r : dead) {
    if (r.job == mine) {
      JobSpec spec = *given;
      spec.resume_job = r.job_id;
      return spec;
    }
  }
  for (const job::JobRecord& r : dead) {
    if (r.job != mine) {
      return absl::InvalidArgumentError(absl::StrCat(
          SettingName(Setting::kCheckpointDir), " ", checkpoint_dir, " holds unfinished job ",
          r.job_id, " (", DescribeJob(r.job), "), which is not the job on this command line (",
          JobDifferences(r.job, mine), "): resume it with a master given ",
          SettingName(Setting::kCheckpointDir), " ", checkpoint_dir, " alone, or remove ",
          checkpoint_dir, "/", r.job_id, " to drop it"));
    }
  }
  return std::nullopt;
}

}  // namespace lockstep::dbsp
