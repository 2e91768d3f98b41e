#pragma once

// Checks and options that several commands' flags share.
#include "CLI/CLI.hpp"

namespace lockstep::cli {

// A count flag: decimal digits only. CLI11 reads an unsigned option with strtoull, which takes
// "-1" as the largest value (so `--top -1` printed every vertex) and "010" as octal.
extern const CLI::Validator kCount;

// --threads on a command that loads or computes; `threads` is shared by all of them (only one
// command runs), and Main applies it once parsed (0: all cores).
void AddThreadsOption(CLI::App* command, int& threads);

}  // namespace lockstep::cli
