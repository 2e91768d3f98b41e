// `lockstep master --listen HOST:PORT --app APP ...`: coordinates a job over worker processes, once
// or every --every until SIGTERM; or resumes the unfinished job of --checkpoint-dir.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "command.h"
#include "database.h"
#include "exit_codes.h"
#include "flags.h"
#include "job_flags.h"
#include "lockstep/bsp/output.h"
#include "master_spec.h"
#include "process.h"
#include "server_options.h"
#include "spdlog/spdlog.h"

namespace lockstep::cli {
namespace {

// " | stragglers: A, B" for a progress line, or nothing.
std::string Stragglers(const std::vector<std::string>& stragglers) {
  std::string out;
  for (const std::string& s : stragglers) out += (out.empty() ? " | stragglers: " : ", ") + s;
  return out;
}

// A superstep of the job: into the metrics, and a line of the log.
void LogProgress(const dbsp::MasterProgress& p) {
  dbsp::Metrics& metrics = ProcessMetrics();
  metrics.superstep = p.global.superstep;
  metrics.active_vertices = p.global.active;
  metrics.messages += p.global.messages;
  metrics.bytes_sent += p.relayed_bytes;
  metrics.AddPhase(dbsp::JobPhase::kCompute, p.seconds);
  for (const std::string& line : p.trace) spdlog::info("job {}: trace {}", p.job_id, line);
  spdlog::info(
      "job {}: superstep {} | active {} | messages {} | relayed {} batches, {} bytes | {:.1f} "
      "ms{}{}",
      p.job_id, p.global.superstep, p.global.active, p.global.messages, p.relayed_batches,
      p.relayed_bytes, p.seconds * 1e3,
      p.attempt > 1 ? absl::StrCat(" | attempt ", p.attempt) : std::string(),
      Stragglers(p.stragglers));
}

// A batch and its framing fit in a message (the job's: a resumed job's is its record's).
absl::Status CheckBatchFits(const dbsp::JobSpec& spec, const MasterFlags& m) {
  const uint64_t batch = spec.max_batch_bytes > 0 ? spec.max_batch_bytes : m.max_batch_bytes;
  if (batch + (64 << 10) > m.limits.max_message_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-batch-bytes ", batch, " leaves no room for framing under ",
                     "--max-message-bytes ", m.limits.max_message_bytes, " (64 KiB at least)"));
  }
  return absl::OkStatus();
}

// One job; a database graph's reads a snapshot that lives until the job ends.
absl::StatusOr<dbsp::JobResult> RunOneJob(dbsp::Master& master, dbsp::JobSpec& spec) {
  auto snapshot = ExportSnapshot(spec);
  if (!snapshot.ok()) return snapshot.status();
  return master.RunJob(spec, StopRequested());
}

// Runs the job, or with `every` one every so often until SIGTERM; returns the exit code.
int ServeJobs(dbsp::Master& master, dbsp::JobSpec& spec,
              std::optional<std::chrono::milliseconds> every) {
  const catalogue::AppInfo& app = *spec.app;
  dbsp::Metrics& metrics = ProcessMetrics();
  const std::atomic<bool>& stop = StopRequested();
  while (true) {
    auto result = RunOneJob(master, spec);
    spec.resume_job.clear();  // a service's later jobs are new ones
    ++(result.ok() ? metrics.jobs_completed : metrics.jobs_failed);
    if (result.ok()) metrics.restarts += result->attempts - 1;
    if (!result.ok() && result.status().code() == absl::StatusCode::kAlreadyExists) {
      return RefuseJob(result.status());
    }
    if (!every) return result.ok() ? kExitOk : Fail(AsFlagError(app, result.status()));
    // A service ended by SIGTERM exits 0, also when the signal aborted a running job.
    if (!result.ok() && !stop.load()) {
      spdlog::warn("job failed: {}", Message(AsFlagError(app, result.status())));
    }
    const auto next = std::chrono::steady_clock::now() + *every;
    while (!stop.load() && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (stop.load()) return kExitOk;
  }
}

int RunMaster(const catalogue::AppRegistry& apps, const MasterFlags& m, JobFlags flags,
              const std::vector<std::string>& given) {
  // From the start: a master waiting for its workers is already worth watching.
  std::atomic<dbsp::Master*> live{nullptr};
  auto metrics = StartMetrics(m.metrics_port, [&live] {
    if (dbsp::Master* master = live.load()) ProcessMetrics().workers = master->connected_workers();
    return ProcessMetrics().Render("master");
  });
  if (const int* code = std::get_if<int>(&metrics)) return *code;
  const absl::Cleanup no_metrics = [&metrics] {
    std::get<std::unique_ptr<dbsp::MetricsServer>>(metrics).reset();
  };
  auto resolved = ResolveMasterJob(apps, m, std::move(flags), given);
  if (const int* code = std::get_if<int>(&resolved)) return *code;
  dbsp::JobSpec spec = std::get<dbsp::JobSpec>(std::move(resolved));
  std::optional<std::chrono::milliseconds> every;
  if (spec.every.count() > 0) every = spec.every;
  spec.progress = LogProgress;
  if (auto st = CheckBatchFits(spec, m); !st.ok()) return UsageError(st);
  RaiseFileLimit();
  auto security = LoadSecurity(m.security, m.limits, m.handshake_timeout);
  if (const int* code = std::get_if<int>(&security)) return *code;
  auto master =
      dbsp::Master::Start(m.listen, std::get<std::shared_ptr<const dbsp::Security>>(security));
  if (!master.ok()) return Fail(master.status());
  live = master->get();
  // The metrics server (whose thread reads `live`) stops before the master goes.
  const absl::Cleanup not_live = [&live, &metrics] {
    std::get<std::unique_ptr<dbsp::MetricsServer>>(metrics).reset();
    live = nullptr;
  };
  spdlog::info("master listening on port {}", (*master)->port());
  dbsp::LogSecurity("master", m.listen, *std::get<std::shared_ptr<const dbsp::Security>>(security));
  if (!m.port_file.empty()) {
    if (auto st = bsp::WriteFileAtomically(m.port_file, std::to_string((*master)->port()) + "\n");
        !st.ok()) {
      return Fail(st);
    }
  }
  const int exit_code = ServeJobs(**master, spec, every);
  (*master)->Shutdown();
  return exit_code;
}

class MasterCommand final : public Command {
 public:
  MasterCommand(CLI::App& cli, const CommandContext& context)
      : Command(cli.add_subcommand("master", "coordinate a job over worker processes")),
        apps_(context.apps) {
    AddJobOptions();
    AddPoolOptions();
    AddRecoveryOptions();
    AddSecurityOptions(app(), flags_.security);
    AddLimitOptions(app(), flags_.limits, flags_.handshake_timeout, true);
    AddMetricsOption(app(), flags_.metrics_port);
    for (const catalogue::AppInfo& info : apps_.apps()) {
      for (const catalogue::AppParam& p : info.params) app_options_.Add(app(), p);
    }
  }

  int Run() override {
    job_.params = app_options_.Given();
    std::vector<std::string> given;
    for (const CLI::Option* o : app()->get_options()) {
      if (o->count() > 0) given.push_back(o->get_name());
    }
    return RunMaster(apps_, flags_, job_, given);
  }

 private:
  // Where it listens, the job (--app, the graph, the output) and how its data travels.
  void AddJobOptions() {
    CLI::App* master = app();
    master->add_option("--listen", flags_.listen, "HOST:PORT to serve workers on (port 0: any)")
        ->required();
    // --app, --graph and --out are required unless --checkpoint-dir alone names a job to resume.
    master->add_option("--app", flags_.app,
                       "the app to run (without it, --checkpoint-dir resumes the unfinished job "
                       "there as recorded)");
    AddGraphOptions(master, job_);
    master->get_option("--graph")->required(false);
    master->add_option("--out", job_.out,
                       "the result directory: part-NNNNN files and _SUCCESS, replaced atomically; "
                       "or a PostgreSQL URI postgresql://..., whose table (--out-table) then holds "
                       "exactly the results, replaced in one transaction");
    master->add_option("--out-table", job_.out_table,
                       "PostgreSQL --out: the result table (default: the app's name), created with "
                       "columns id and value when missing");
  }

  // The worker pool, barriers and the data plane between workers.
  void AddPoolOptions() {
    CLI::App* master = app();
    master
        ->add_option("--min-workers", flags_.min_workers,
                     "workers to wait for (0: every connected worker, at least one)")
        ->check(kCount);
    master->add_option("--max-workers", flags_.max_workers, "at most this many (0: no cap)")
        ->check(kCount);
    master->add_option("--acquire-timeout", flags_.acquire_timeout,
                       "give up if the workers are not there within this (0: wait forever)");
    master->add_option("--last-call", flags_.last_call,
                       "once the minimum is met, wait this long for more workers");
    master
        ->add_option("--peer-timeout", flags_.peer_timeout,
                     "fail the job when a worker has not entered a barrier this long after it "
                     "opened (the first one includes loading; 0: never)")
        ->capture_default_str();
    master
        ->add_option("--relay", flags_.relay,
                     "how supersteps' messages travel: direct (worker to worker) or master "
                     "(through the master's streams)")
        ->check(CLI::IsMember({"direct", "master"}))
        ->capture_default_str();
    master
        ->add_option("--max-batch-bytes", flags_.max_batch_bytes,
                     "the largest batch a worker sends another worker")
        ->check(CLI::Range(uint64_t{4096}, uint64_t{1} << 30))
        ->capture_default_str();
    master->add_option("--save-parts", flags_.save_parts,
                       "the workers first write the graph's partitioned binary form to this "
                       "directory (shared by all; as `lockstep partition` writes it, without any "
                       "process reading the whole graph), and the job runs on it");
  }

  // Checkpoints, restarts and stragglers; then the service's period and the port file.
  void AddRecoveryOptions() {
    AddCheckpointOptions();
    CLI::App* master = app();
    master
        ->add_option("--max-restarts", flags_.max_restarts,
                     "a worker lost or silent ends the attempt, not the job, this many times: the "
                     "job goes on from its newest checkpoint (or the start) on the workers there")
        ->capture_default_str();
    master
        ->add_option("--recovery-timeout", flags_.recovery_timeout,
                     "on recovery, wait this long for workers beyond those in the pool (up to "
                     "--max-workers, or as many as before), then go on with at least one")
        ->capture_default_str();
    master
        ->add_option("--straggler-timeout", flags_.straggler_timeout,
                     "report a worker that enters a barrier this long after the others (0: three "
                     "times the median of their times, at least 1 s)")
        ->capture_default_str();
    master->add_flag("--replace-stragglers", flags_.replace_stragglers,
                     "a straggler is lost, not only reported: the attempt ends and the job goes on "
                     "from its newest checkpoint without it (needs --max-restarts)");
    master->add_option("--every", flags_.every,
                       "run a job every DURATION until SIGTERM (the periodic refresh)");
    master->add_option("--port-file", flags_.port_file,
                       "write the port the master listens on to this file");
  }

  void AddCheckpointOptions() {
    CLI::App* master = app();
    master->add_option("--checkpoint-dir", flags_.checkpoint_dir,
                       "write checkpoints of the job's state under this directory, which every "
                       "process reaches (a shared volume), in a directory per job");
    master
        ->add_option("--checkpoint-every", flags_.checkpoint_every,
                     "take a checkpoint after every this many supersteps (0: none)")
        ->capture_default_str();
    master
        ->add_option("--checkpoint-interval", flags_.checkpoint_interval,
                     "also take a checkpoint once this long has passed since the last one (0: by "
                     "supersteps only)")
        ->capture_default_str();
    master
        ->add_option("--checkpoint-keep", flags_.checkpoint_keep,
                     "keep this many of the newest complete checkpoints while the job runs")
        ->check(CLI::Range(uint32_t{1}, uint32_t{1000}))
        ->capture_default_str();
  }

  const catalogue::AppRegistry& apps_;
  MasterFlags flags_;
  JobFlags job_;
  AppOptions app_options_;
};

}  // namespace

std::unique_ptr<Command> MakeMasterCommand(CLI::App& cli, const CommandContext& context) {
  return std::make_unique<MasterCommand>(cli, context);
}

}  // namespace lockstep::cli
