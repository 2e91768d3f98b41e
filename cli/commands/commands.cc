#include "command.h"

namespace lockstep::cli {

std::span<const CommandFactory> Commands() {
  // A table: one line per command, in the order `lockstep --help` lists them.
  static constexpr CommandFactory kCommands[] = {
      MakeRunCommand,    MakeMasterCommand,   MakeWorkerCommand,    MakeHealthCommand,
      MakeStatusCommand, MakeGenerateCommand, MakePartitionCommand, MakeValidateCommand,
  };
  return kCommands;
}

}  // namespace lockstep::cli
