#pragma once

// --config: a command's options from a TOML file, one section per command ([master], [worker],
// [run.pagerank]); the command line wins. Kubernetes mounts a job's ConfigMap as this file
// (k8s/README.md).
#include "CLI/CLI.hpp"

namespace lockstep::cli {

// Adds --config to the top-level command; a key the command does not have is an error.
CLI::Option* AddConfigOption(CLI::App& cli);

// Reports an error CLI11 found in the file `config` names (CLI11 names the key, not the file) and
// returns the exit code: a usage error.
int ConfigError(const CLI::Option& config, const CLI::ConfigError& error);

}  // namespace lockstep::cli
