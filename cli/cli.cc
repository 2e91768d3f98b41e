// `lockstep`'s Main: the top-level options, the commands of commands/ (one file each, listed in
// commands/commands.cc), and a dispatch to the one given. A command's flags, checks and work live
// in its own file; what several share lives beside this one (job_flags, server_options, database,
// logging, config, process, exit_codes).
#include "lockstep/cli/cli.h"

#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "commands/command.h"
#include "config.h"
#include "exit_codes.h"
#include "lockstep/bsp/text.h"
#include "lockstep/dbsp/grpc_log.h"
#include "logging.h"
#include "process.h"
#include "setting_names.h"
#include "spdlog/spdlog.h"
#include "tbb/global_control.h"

namespace lockstep::cli {
namespace {

using CommandList = std::vector<std::unique_ptr<Command>>;

// The mistakes CLI11 reports only as "A subcommand is required": a command's own (an unknown app
// of `run`), then a command that does not exist. The exit code of the error reported, or nothing.
std::optional<int> CheckCommandWords(std::span<char* const> args, const CommandList& commands) {
  for (const auto& command : commands) {
    if (auto code = command->CheckArguments(args)) return code;
  }
  if (args.size() > 1 && args[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const auto& command : commands) {
      known += (known.empty() ? "" : ", ") + command->app()->get_name();
      found = found || command->app()->check_name(args[1]);
    }
    if (!found) {
      spdlog::error("unknown command '{}' (commands: {})", args[1], known);
      return kExitUsage;
    }
  }
  return std::nullopt;
}

// Parses the command line: nothing to go on with, or the exit code (0 after --help).
std::optional<int> Parse(CLI::App& cli, int argc, char** argv, const CLI::Option& config) {
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    return ConfigError(config, e);
  } catch (const CLI::ParseError& e) {
    // Prints the help (exit 0) or the error; CLI11's own codes (105, 109, ...) mean nothing to a
    // caller, so every error is 2.
    return cli.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  return std::nullopt;
}

// Runs the command given. A job's steps turn running out of memory into a failed job
// (ProgramRunner, Executor). This is for what is left (printing a result, a thread that cannot
// start), so that no exception ends the process with an abort and exit code 134.
int Dispatch(const CommandList& commands) {
  try {
    for (const auto& command : commands) {
      if (command->app()->parsed()) return command->Run();
    }
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    spdlog::error("out of memory");
  } catch (const std::exception& e) {
    spdlog::error("{}", bsp::SanitizeForLog(e.what(), 200));
  }
  return kExitFailed;
}

}  // namespace

int Main(int argc, char** argv, const catalogue::AppRegistry& apps) {
  SkipLockOrderChecks();
  SetUpLogging();
  NameSettingsByFlag();

  CLI::App cli{"lockstep: a Pregel-style bulk synchronous parallel graph engine"};
  cli.require_subcommand(1);
  cli.set_help_all_flag("--help-all", "Print help for every command and app");
  const CLI::Option* config = AddConfigOption(cli);
  std::string log_format = "text";
  AddLogFormatOption(cli, log_format);
  int threads = 0;
  const CommandContext context{apps, threads};
  CommandList commands;
  for (const CommandFactory make : Commands()) commands.push_back(make(cli, context));

  if (auto code = CheckCommandWords(std::span<char* const>(argv, argc), commands)) return *code;
  if (auto code = Parse(cli, argc, argv, *config)) return *code;
  std::optional<tbb::global_control> parallelism;
  if (threads > 0) {
    parallelism.emplace(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
  }
  ApplyLogFormat(log_format);
  InstallSignalHandlers();
  dbsp::RouteGrpcLogs();
  return Dispatch(commands);
}

}  // namespace lockstep::cli
