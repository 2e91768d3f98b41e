#include "master_spec.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "database.h"
#include "exit_codes.h"
#include "lockstep/cli/duration.h"
#include "lockstep/load/input_form.h"

namespace lockstep::cli {
namespace {

// The flags that may go with --checkpoint-dir alone (a resumption): where and how this master
// serves, and tracing, which is how a job is watched, not what it answers.
const std::set<std::string>& FlagsWithResume() {
  static const std::set<std::string> kWithResume = {"--listen",
                                                    "--port-file",
                                                    "--checkpoint-dir",
                                                    "--config",
                                                    "--tls-cert",
                                                    "--tls-key",
                                                    "--tls-ca",
                                                    "--token-file",
                                                    "--insecure",
                                                    "--max-message-bytes",
                                                    "--handshake-timeout",
                                                    "--max-pool-workers",
                                                    "--max-conns-per-ip",
                                                    "--metrics-port",
                                                    "--trace-vertex"};
  return kWithResume;
}

// --save-parts: the workers write the graph's partitioned form first; a graph that already is one,
// or a periodic service, has no use for it. Sets the job's absolute path.
absl::Status SetSaveParts(const MasterFlags& m, const JobFlags& flags, runner::JobDetails& job) {
  if (m.save_parts.empty()) return absl::OkStatus();
  if (load::IsPartitionedForm(flags.graph)) {
    return absl::InvalidArgumentError(
        "--save-parts: the graph already is a partitioned graph (a directory written by "
        "`lockstep partition`)");
  }
  if (!m.every.empty()) {
    return absl::InvalidArgumentError(
        "--save-parts writes the graph once: save it in one job, then run the periodic jobs "
        "with --graph on the directory");
  }
  std::error_code ec;
  job.save_form = std::filesystem::absolute(m.save_parts, ec).string();
  return absl::OkStatus();
}

// The app's parameters on a cluster: a local-only one is refused (never ignore a flag: say where
// it works instead), and paths are made absolute, for workers elsewhere.
absl::Status SetClusterParams(const catalogue::AppInfo& app, const JobFlags& flags,
                              runner::JobDetails& job) {
  std::error_code ec;
  for (const catalogue::AppParam& p : app.params) {
    if (p.local_only && flags.params.count(p.name) > 0) {
      return absl::InvalidArgumentError(absl::StrCat("--", p.name,
                                                     " is not supported by `lockstep master` (app ",
                                                     app.name, "); use `lockstep run`"));
    }
    std::string& value = job.work.params[p.name];
    if (p.is_path && !value.empty()) value = std::filesystem::absolute(value, ec).string();
  }
  return absl::OkStatus();
}

// The job's details from --app and the job's flags, or the exit code of why not.
std::variant<int, dbsp::JobSpec> NewJobSpec(const catalogue::AppRegistry& apps,
                                            const MasterFlags& m, JobFlags flags) {
  if (flags.graph.empty()) return UsageError(absl::InvalidArgumentError("--graph is required"));
  if (flags.out.empty()) return UsageError(absl::InvalidArgumentError("--out is required"));
  if (flags.symmetric && !load::IsPartitionedForm(flags.graph)) {
    // The partitioned load reads shares of the text on many workers, where an edge and its
    // reverse are far apart; the whole-graph loader pairs them.
    return UsageError(absl::InvalidArgumentError(
        "--symmetric is read by `lockstep run` and `lockstep partition`: for a cluster, write "
        "the edge list with `lockstep partition --symmetric` and give the master that "
        "directory (a table read so runs with `lockstep run` only)"));
  }
  const bool database = db::IsPostgresUri(flags.graph);
  if (database && !m.save_parts.empty()) {
    return UsageError(absl::InvalidArgumentError(
        "--save-parts writes the partitioned form of a graph in files; a PostgreSQL --graph is "
        "read from its tables"));
  }
  const catalogue::AppInfo* app = apps.Find(m.app);
  if (app == nullptr) {
    return UsageError(
        absl::InvalidArgumentError(absl::StrCat("--app: no app named '", m.app, "'")));
  }
  std::error_code ec;
  if (!database) flags.graph = std::filesystem::absolute(flags.graph, ec).string();  // shared
  auto made = MakeJob(*app, flags);
  if (const JobError* e = std::get_if<JobError>(&made)) return Fail(e->status, e->exit_code);
  runner::JobDetails& job = std::get<MadeJob>(made).details;
  if (auto st = SetSaveParts(m, flags, job); !st.ok()) return UsageError(st);
  if (auto st = SetClusterParams(*app, flags, job); !st.ok()) return UsageError(st);
  dbsp::JobSpec spec;
  spec.app = app;
  spec.details = std::move(job);
  if (db::IsPostgresUri(flags.out)) {
    spec.details.work.output_options[kTableOption] =
        flags.out_table.empty() ? app->name : flags.out_table;
  }
  AttachDatabase(spec);
  return spec;
}

// The worker pool, the service's period and the data plane.
absl::Status SetPoolAndTimes(const MasterFlags& m, dbsp::JobSpec& spec) {
  if (m.max_workers > 0 && m.min_workers > m.max_workers) {
    // The pool would wait for the minimum and then take only the maximum.
    return absl::InvalidArgumentError(
        absl::StrCat("--min-workers ", m.min_workers, " exceeds --max-workers ", m.max_workers));
  }
  spec.pool.min_workers = m.min_workers;
  spec.pool.max_workers = m.max_workers;
  auto acquire = ParseDuration(m.acquire_timeout, "--acquire-timeout");
  if (!acquire.ok()) return acquire.status();
  auto last_call = ParseDuration(m.last_call, "--last-call");
  if (!last_call.ok()) return last_call.status();
  std::optional<std::chrono::milliseconds> every;
  if (!m.every.empty()) {
    auto e = ParseDuration(m.every, "--every");
    if (!e.ok()) return e.status();
    every = *e;
  }
  spec.every = every.value_or(std::chrono::milliseconds(0));
  spec.pool.acquire_timeout = *acquire;
  spec.pool.last_call = *last_call;
  auto peer_timeout = ParseDuration(m.peer_timeout, "--peer-timeout");
  if (!peer_timeout.ok()) return peer_timeout.status();
  spec.peer_timeout = *peer_timeout;
  spec.relay_direct = m.relay == "direct";
  spec.max_batch_bytes = m.max_batch_bytes;
  return absl::OkStatus();
}

// Checkpoints: a directory and a period go together.
absl::Status SetCheckpoints(const MasterFlags& m, dbsp::JobSpec& spec) {
  auto interval = ParseDuration(m.checkpoint_interval, "--checkpoint-interval");
  if (!interval.ok()) return interval.status();
  spec.checkpoint_interval = *interval;
  const bool checkpoints = m.checkpoint_every > 0 || interval->count() > 0;
  if (checkpoints && m.checkpoint_dir.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(m.checkpoint_every > 0 ? "--checkpoint-every" : "--checkpoint-interval",
                     " needs --checkpoint-dir: where every process writes the checkpoints"));
  }
  if (!m.checkpoint_dir.empty() && !checkpoints) {
    return absl::InvalidArgumentError(
        "--checkpoint-dir needs --checkpoint-every (how many supersteps between checkpoints) or "
        "--checkpoint-interval (how long)");
  }
  std::error_code ec;
  if (!m.checkpoint_dir.empty()) {
    spec.checkpoint_dir = std::filesystem::absolute(m.checkpoint_dir, ec).string();
  }
  spec.checkpoint_every = m.checkpoint_every;
  spec.checkpoint_keep = m.checkpoint_keep;
  return absl::OkStatus();
}

// Recovery: restarts, and how long to wait for workers and for stragglers.
absl::Status SetRecovery(const MasterFlags& m, dbsp::JobSpec& spec) {
  spec.max_restarts = m.max_restarts;
  auto recovery_timeout = ParseDuration(m.recovery_timeout, "--recovery-timeout");
  if (!recovery_timeout.ok()) return recovery_timeout.status();
  spec.recovery_timeout = *recovery_timeout;
  auto straggler_timeout = ParseDuration(m.straggler_timeout, "--straggler-timeout");
  if (!straggler_timeout.ok()) return straggler_timeout.status();
  spec.straggler_timeout = *straggler_timeout;
  spec.replace_stragglers = m.replace_stragglers;
  if (m.replace_stragglers && m.max_restarts == 0) {
    return absl::InvalidArgumentError(
        "--replace-stragglers needs --max-restarts: a straggler replaced ends the attempt, and "
        "another must follow");
  }
  return absl::OkStatus();
}

// The job on a master's command line (--app and its flags), or the exit code of its error.
std::variant<int, dbsp::JobSpec> MasterSpec(const catalogue::AppRegistry& apps,
                                            const MasterFlags& m, JobFlags flags) {
  auto made = NewJobSpec(apps, m, std::move(flags));
  if (const int* code = std::get_if<int>(&made)) return *code;
  dbsp::JobSpec& spec = std::get<dbsp::JobSpec>(made);
  for (auto set : {SetPoolAndTimes, SetCheckpoints, SetRecovery}) {
    if (auto st = set(m, spec); !st.ok()) return UsageError(st);
  }
  return made;
}

// Resume: the unfinished job in --checkpoint-dir, as its record says (docs/design.md §7.7).
std::variant<int, dbsp::JobSpec> RecordedJob(const catalogue::AppRegistry& apps,
                                             const MasterFlags& m, const JobFlags& flags,
                                             const std::vector<std::string>& given) {
  if (m.checkpoint_dir.empty()) {
    return UsageError(absl::InvalidArgumentError(
        "--app is required (or --checkpoint-dir alone, to resume the unfinished job there)"));
  }
  for (const std::string& name : given) {
    if (!FlagsWithResume().contains(name)) {
      return UsageError(absl::InvalidArgumentError(absl::StrCat(
          name,
          " without --app: --checkpoint-dir alone resumes the unfinished job there with "
          "its recorded settings (only --listen, --port-file, the security flags, "
          "--metrics-port and --trace-vertex go with it); give --app and "
          "the job's flags to name the job")));
    }
  }
  std::error_code ec;
  auto found = dbsp::FindUnfinishedJob(std::filesystem::absolute(m.checkpoint_dir, ec).string(),
                                       apps, nullptr);
  if (!found.ok()) return RefuseJob(found.status());
  dbsp::JobSpec spec = **found;
  // Tracing is how a job is watched, not what it answers: the record's, unless given here.
  if (!flags.trace_vertices.empty()) spec.details.work.trace_vertices = flags.trace_vertices;
  AttachDatabase(spec);
  return spec;
}

}  // namespace

std::variant<int, dbsp::JobSpec> ResolveMasterJob(const catalogue::AppRegistry& apps,
                                                  const MasterFlags& m, JobFlags flags,
                                                  const std::vector<std::string>& given) {
  if (m.app.empty()) return RecordedJob(apps, m, flags, given);
  auto made = MasterSpec(apps, m, std::move(flags));
  if (const int* code = std::get_if<int>(&made)) return *code;
  dbsp::JobSpec& spec = std::get<dbsp::JobSpec>(made);
  if (!spec.checkpoint_dir.empty()) {
    // The same job unfinished there is resumed with these settings.
    auto found = dbsp::FindUnfinishedJob(spec.checkpoint_dir, apps, &spec);
    if (!found.ok()) return RefuseJob(found.status());
    if (*found) {
      spec = **found;
      AttachDatabase(spec);
    }
  }
  return made;
}

int RefuseJob(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kAlreadyExists) return Fail(status, kExitDriven);
  if (status.code() == absl::StatusCode::kInvalidArgument ||
      status.code() == absl::StatusCode::kNotFound) {
    return UsageError(status);
  }
  return Fail(status);
}

}  // namespace lockstep::cli
