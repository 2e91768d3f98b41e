// `lockstep health HOST:PORT [--service NAME]`: a master's or worker's gRPC health status, for
// probes; exit 0 if SERVING.
#include "lockstep/dbsp/health.h"

#include <iostream>
#include <memory>
#include <string>

#include "command.h"
#include "exit_codes.h"
#include "lockstep/cli/duration.h"
#include "server_options.h"

namespace lockstep::cli {
namespace {

class HealthCommand final : public Command {
 public:
  explicit HealthCommand(CLI::App& cli)
      : Command(cli.add_subcommand(
            "health", "ask a master or worker for its gRPC health status (exit 0 if SERVING)")) {
    CLI::App* health = app();
    health->add_option("address", target_, "HOST:PORT of the master or of --health-port")
        ->required();
    health->add_option("--service", service_,
                       std::string("the service to ask about: '' (the process), ") +
                           dbsp::kMasterHealthService + " or " + dbsp::kWorkerHealthService);
    health->add_option("--timeout", timeout_, "give up after this long")->capture_default_str();
    AddSecurityOptions(health, security_);
  }

  int Run() override {
    auto timeout = ParseDuration(timeout_, "--timeout");
    if (!timeout.ok()) return UsageError(timeout.status());
    auto security = LoadSecurity(security_);
    if (const int* code = std::get_if<int>(&security)) return *code;
    auto status = dbsp::CheckHealth(target_, service_, *timeout,
                                    *std::get<std::shared_ptr<const dbsp::Security>>(security));
    if (!status.ok()) return Fail(status.status());
    std::cout << *status << "\n";
    return *status == "SERVING" ? kExitOk : kExitFailed;
  }

 private:
  std::string target_;
  std::string service_;
  std::string timeout_ = "2s";
  dbsp::SecurityFlags security_;
};

}  // namespace

std::unique_ptr<Command> MakeHealthCommand(CLI::App& cli, const CommandContext&) {
  return std::make_unique<HealthCommand>(cli);
}

}  // namespace lockstep::cli
