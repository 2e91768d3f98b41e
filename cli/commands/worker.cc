// `lockstep worker --master HOST:PORT`: serves the jobs of a master until SIGTERM (or --max-jobs).
#include "lockstep/dbsp/worker.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "command.h"
#include "database.h"
#include "exit_codes.h"
#include "flags.h"
#include "process.h"
#include "server_options.h"
#include "spdlog/spdlog.h"

namespace lockstep::cli {
namespace {

class WorkerCommand final : public Command {
 public:
  WorkerCommand(CLI::App& cli, const CommandContext& context)
      : Command(cli.add_subcommand("worker", "serve jobs of a master until SIGTERM")),
        apps_(context.apps) {
    CLI::App* worker = app();
    worker->add_option("--master", options_.master, "the master's HOST:PORT")->required();
    AddThreadsOption(worker, context.threads);
    worker->add_option("--max-jobs", options_.max_jobs, "exit after this many jobs (0: never)")
        ->check(kCount);
    worker
        ->add_option("--peer-listen", options_.peer_listen,
                     "serve the other workers of a job on HOST:PORT (port 0: any free port)")
        ->capture_default_str();
    worker->add_option("--advertise", options_.advertise,
                       "the HOST:PORT other workers use to reach this one (default: this host as "
                       "the master sees it, with the --peer-listen port)");
    worker
        ->add_option("--health-port", health_port_,
                     "serve gRPC health checks on this port, for probes (0: any free port)")
        ->check(CLI::Range(0, 65535));
    AddSecurityOptions(worker, security_);
    AddLimitOptions(worker, limits_, handshake_timeout_, false);
    AddMetricsOption(worker, metrics_port_);
    worker
        ->add_option("--data-root", options_.data_roots,
                     "a directory every graph, output, checkpoint and partitioned-form path of a "
                     "job must lie in, symbolic links resolved (repeatable; without it: any path)")
        ->check(CLI::ExistingDirectory);
  }

  int Run() override {
    TuneWorkerMalloc();
    auto metrics = StartMetrics(metrics_port_, [] { return ProcessMetrics().Render("worker"); });
    if (const int* code = std::get_if<int>(&metrics)) return *code;
    options_.metrics = &ProcessMetrics();
    RaiseFileLimit();
    auto security = LoadSecurity(security_, limits_, handshake_timeout_);
    if (const int* code = std::get_if<int>(&security)) return *code;
    options_.security = std::get<std::shared_ptr<const dbsp::Security>>(security);
    if (health_port_ >= 0) {
      options_.health_address = "0.0.0.0:" + std::to_string(health_port_);
      options_.health_started = [](int port) { spdlog::info("health service on port {}", port); };
    }
    // A job's PostgreSQL graph is read through the db module (docs/design.md §10).
    AttachDatabase(options_);
    // The process ends here anyway: a teardown gRPC cannot finish does not keep it alive.
    options_.on_stuck_teardown = [limit = options_.teardown_limit](const absl::Status& result) {
      spdlog::warn("gRPC did not shut down within {} ms after the last job; exiting without it",
                   limit.count());
      if (!result.ok()) spdlog::error("{}", Message(result));
      spdlog::default_logger()->flush();
      std::_Exit(result.ok() ? kExitOk : kExitFailed);
    };
    auto st = dbsp::ServeWorker(apps_, options_, StopRequested());
    return st.ok() ? kExitOk : Fail(st);
  }

 private:
  const catalogue::AppRegistry& apps_;
  dbsp::WorkerOptions options_;
  int health_port_ = -1;
  dbsp::SecurityFlags security_;
  dbsp::ConnectionLimits limits_;
  std::string handshake_timeout_ = "10s";
  int metrics_port_ = -1;
};

}  // namespace

std::unique_ptr<Command> MakeWorkerCommand(CLI::App& cli, const CommandContext& context) {
  return std::make_unique<WorkerCommand>(cli, context);
}

}  // namespace lockstep::cli
