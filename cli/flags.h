#pragma once

// Checks and options that several commands' flags share.
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace lockstep::cli {

// A count flag: decimal digits only. CLI11 reads an unsigned option with strtoull, which takes
// "-1" as the largest value (so `--top -1` printed every vertex) and "010" as octal.
extern const CLI::Validator kCount;

// --threads on a command that loads or computes; `threads` is shared by all of them (only one
// command runs), and Main applies it once parsed (0: all cores).
void AddThreadsOption(CLI::App* command, int& threads);

// --undirected (add the reverse of every edge) and --symmetric (every edge is listed both ways:
// keep one of each pair, checked).
void AddDirectionFlags(CLI::App* command, bool& undirected, bool& symmetric);
// Once parsed: at most one of them is set, and only for an edge list (a file or a table); a
// partitioned graph may be read --undirected if it was written so (load::OpenSource checks).
absl::Status CheckDirectionFlags(bool undirected, bool symmetric, const std::string& graph,
                                 const std::string& format);

}  // namespace lockstep::cli
