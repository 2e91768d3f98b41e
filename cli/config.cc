#include "config.h"

#include <string>

#include "exit_codes.h"
#include "spdlog/spdlog.h"

namespace lockstep::cli {

CLI::Option* AddConfigOption(CLI::App& cli) {
  CLI::Option* config = cli.set_config("--config", "",
                                       "read options from a TOML file: a [master] section holds "
                                       "`lockstep master`'s options (before the command)");
  cli.allow_config_extras(CLI::config_extras_mode::error);
  return config;
}

int ConfigError(const CLI::Option& config, const CLI::ConfigError& error) {
  spdlog::error("--config {}: {}", config.as<std::string>(), error.what());
  return kExitUsage;
}

}  // namespace lockstep::cli
