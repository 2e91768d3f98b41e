#pragma once

// One `lockstep` command: its flags, declared on a CLI11 subcommand of its own, and what it does
// once the command line is parsed. A new command is a file of this folder that defines a factory
// (below) and a line in the table of commands.cc; Main (cli.cc) only dispatches.
#include <memory>
#include <optional>
#include <span>

#include "CLI/CLI.hpp"
#include "lockstep/catalogue/app.h"

namespace lockstep::cli {

// What every command may use while it declares its flags.
struct CommandContext {
  const catalogue::AppRegistry& apps;
  int& threads;  // --threads (flags.h), which Main applies
};

class Command {
 public:
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  // The subcommand its flags are declared on.
  CLI::App* app() const { return app_; }

  // A look at the arguments before CLI11 parses them, for a mistake CLI11 words poorly: the exit
  // code of the error it reported, or nothing to go on with.
  virtual std::optional<int> CheckArguments(std::span<char* const> /*args*/) const {
    return std::nullopt;
  }

  // Does the command once its flags are parsed; returns the exit code (exit_codes.h).
  virtual int Run() = 0;

 protected:
  explicit Command(CLI::App* app) : app_(app) {}

 private:
  CLI::App* const app_;
};

// Declares a command with its flags on `cli`. The flags are bound to the command's members, so a
// command stays where it was made.
using CommandFactory = std::unique_ptr<Command> (*)(CLI::App& cli, const CommandContext& context);

// The commands, in the order help lists them.
std::span<const CommandFactory> Commands();

// One per file of this folder.
std::unique_ptr<Command> MakeRunCommand(CLI::App& cli, const CommandContext& context);
std::unique_ptr<Command> MakeMasterCommand(CLI::App& cli, const CommandContext& context);
std::unique_ptr<Command> MakeWorkerCommand(CLI::App& cli, const CommandContext& context);
std::unique_ptr<Command> MakeHealthCommand(CLI::App& cli, const CommandContext& context);
std::unique_ptr<Command> MakeStatusCommand(CLI::App& cli, const CommandContext& context);
std::unique_ptr<Command> MakeGenerateCommand(CLI::App& cli, const CommandContext& context);
std::unique_ptr<Command> MakePartitionCommand(CLI::App& cli, const CommandContext& context);
std::unique_ptr<Command> MakeValidateCommand(CLI::App& cli, const CommandContext& context);

}  // namespace lockstep::cli
