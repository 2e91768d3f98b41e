// The TOML configuration (--config): the input as the file a command line names, read by CLI11 as
// lockstep's command line sets it up (a [master] section, unknown keys an error) and applied to
// options of each kind the commands have. Bad files are errors, never crashes.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = lockstep::fuzz::InputFile(data, size);
  if (path.empty()) return 0;
  CLI::App app;
  app.set_config("--config");
  app.allow_config_extras(CLI::config_extras_mode::error);
  std::string text;
  uint32_t number = 0;
  double real = 0;
  bool flag = false;
  std::vector<std::string> many;
  CLI::App* master = app.add_subcommand("master");
  master->add_option("--graph", text);
  master->add_option("--min-workers", number)->check(CLI::Range(0u, 1000000u));
  master->add_option("--tolerance", real);
  master->add_flag("--undirected", flag);
  master->add_option("--data-root", many);
  std::vector<std::string> args = {"lockstep", "--config", path, "master"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {
  }
  return 0;
}
