// `lockstep status HOST:PORT [--json]`: where a master's running job is.
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "command.h"
#include "exit_codes.h"
#include "lockstep/cli/duration.h"
#include "lockstep/dbsp/master.h"
#include "nlohmann/json.hpp"
#include "server_options.h"

namespace lockstep::cli {
namespace {

// The worker whose last superstep took longest.
size_t Slowest(const dbsp::JobStatus& s) {
  size_t slowest = 0;
  for (size_t w = 1; w < s.workers.size(); ++w) {
    if (s.workers[w].second > s.workers[slowest].second) slowest = w;
  }
  return slowest;
}

void PrintJson(const dbsp::JobStatus& s) {
  const size_t slowest = Slowest(s);
  nlohmann::json j = {{"running", s.running},
                      {"job_id", s.job_id},
                      {"app", s.app},
                      {"superstep", s.superstep},
                      {"active_vertices", s.active},
                      {"elapsed_seconds", s.elapsed_seconds},
                      {"max_supersteps", s.max_supersteps},
                      {"workers_connected", s.workers_connected},
                      {"workers", nlohmann::json::array()}};
  j["remaining_seconds"] =
      s.remaining_seconds < 0 ? nlohmann::json(nullptr) : nlohmann::json(s.remaining_seconds);
  for (size_t w = 0; w < s.workers.size(); ++w) {
    j["workers"].push_back({{"name", s.workers[w].first},
                            {"last_superstep_seconds", s.workers[w].second},
                            {"slowest", w == slowest}});
  }
  std::cout << j.dump() << "\n";
}

// The job, its progress, and each worker's time in the last superstep with the slowest marked.
void PrintText(const dbsp::JobStatus& s) {
  if (s.job_id.empty()) {
    std::cout << "no job yet; " << s.workers_connected << " workers connected\n";
    return;
  }
  std::cout << absl::StrFormat(
      "job %s (%s): %s, superstep %d%s, %d active vertices\n", s.job_id, s.app,
      s.running ? "running" : "ended", s.superstep,
      s.max_supersteps > 0 ? absl::StrCat(" of at most ", s.max_supersteps) : std::string(),
      s.active);
  std::cout << absl::StrFormat("elapsed %.1f s%s; %d workers connected\n", s.elapsed_seconds,
                               s.remaining_seconds >= 0
                                   ? absl::StrFormat(", about %.1f s to go", s.remaining_seconds)
                                   : std::string(),
                               s.workers_connected);
  const size_t slowest = Slowest(s);
  for (size_t w = 0; w < s.workers.size(); ++w) {
    std::cout << absl::StrFormat("  %s: %.1f ms%s\n", s.workers[w].first, s.workers[w].second * 1e3,
                                 w == slowest && s.workers.size() > 1 ? "  <- slowest" : "");
  }
}

class StatusCommand final : public Command {
 public:
  explicit StatusCommand(CLI::App& cli)
      : Command(cli.add_subcommand("status",
                                   "show where a master's running job is (the master's port, "
                                   "workers' credentials)")) {
    CLI::App* status = app();
    status->add_option("address", target_, "HOST:PORT of the master")->required();
    status->add_flag("--json", json_, "one JSON object, for machines");
    status->add_option("--timeout", timeout_, "give up after this long")->capture_default_str();
    AddSecurityOptions(status, security_);
  }

  int Run() override {
    auto timeout = ParseDuration(timeout_, "--timeout");
    if (!timeout.ok()) return UsageError(timeout.status());
    auto security = LoadSecurity(security_);
    if (const int* code = std::get_if<int>(&security)) return *code;
    auto s = dbsp::QueryStatus(target_, *timeout,
                               *std::get<std::shared_ptr<const dbsp::Security>>(security));
    if (!s.ok()) return Fail(s.status());
    if (json_) {
      PrintJson(*s);
    } else {
      PrintText(*s);
    }
    return kExitOk;
  }

 private:
  std::string target_;
  std::string timeout_ = "2s";
  bool json_ = false;
  dbsp::SecurityFlags security_;
};

}  // namespace

std::unique_ptr<Command> MakeStatusCommand(CLI::App& cli, const CommandContext&) {
  return std::make_unique<StatusCommand>(cli);
}

}  // namespace lockstep::cli
