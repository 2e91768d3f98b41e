// The table of commands (cli/commands/): each command declares its flags on a subcommand of its
// own, in the order help lists them, and only the one given is parsed, which is all Main's dispatch
// looks at. No process runs here (tests/integration/cli_test.cc runs the binary).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "commands/command.h"
#include "exit_codes.h"
#include "lockstep/cli/registry.h"
#include "lockstep/dbsp/settings.h"
#include "setting_names.h"

namespace lockstep::cli {
namespace {

class CommandsTest : public ::testing::Test {
 protected:
  CommandsTest() {
    for (const CommandFactory make : Commands()) commands_.push_back(make(cli_, context_));
  }

  // The names of the commands whose subcommand CLI11 parsed in `args`.
  std::vector<std::string> Parsed(std::vector<std::string> args) {
    std::vector<char*> argv = {name_.data()};
    for (std::string& a : args) argv.push_back(a.data());
    cli_.parse(static_cast<int>(argv.size()), argv.data());
    std::vector<std::string> parsed;
    for (const auto& command : commands_) {
      if (command->app()->parsed()) parsed.push_back(command->app()->get_name());
    }
    return parsed;
  }

  std::string name_ = "lockstep";
  const catalogue::AppRegistry apps_ = BuiltinApps();
  int threads_ = 0;
  const CommandContext context_{apps_, threads_};
  CLI::App cli_{"test"};
  std::vector<std::unique_ptr<Command>> commands_;
};

TEST_F(CommandsTest, TheTableDeclaresEachCommandOnceInHelpOrder) {
  std::vector<std::string> names;
  for (const auto& command : commands_) names.push_back(command->app()->get_name());
  EXPECT_THAT(names, ::testing::ElementsAre("run", "master", "worker", "health", "status",
                                            "generate", "partition", "validate"));
  // Nothing but the table's commands is declared on the top-level command.
  EXPECT_EQ(cli_.get_subcommands([](const CLI::App*) { return true; }).size(), names.size());
}

TEST_F(CommandsTest, OnlyTheCommandGivenIsParsed) {
  EXPECT_THAT(Parsed({"health", "127.0.0.1:1", "--timeout", "1s"}),
              ::testing::ElementsAre("health"));
}

// --threads is declared by each command that computes, into the one value Main applies.
TEST_F(CommandsTest, ACommandsThreadsOptionReachesMain) {
  EXPECT_THAT(Parsed({"worker", "--master", "127.0.0.1:1", "--threads", "3"}),
              ::testing::ElementsAre("worker"));
  EXPECT_EQ(threads_, 3);
}

// bench/kernels.py makes the field's randomly numbered graphs with it (issue 42).
TEST_F(CommandsTest, GenerateTakesAndDocumentsPermute) {
  EXPECT_THAT(Parsed({"generate", "kronecker", "--scale", "4", "--permute", "--out", "g.el"}),
              ::testing::ElementsAre("generate"));
  for (const auto& command : commands_) {
    if (command->app()->get_name() != "generate") continue;
    EXPECT_THAT(command->app()->help(), ::testing::HasSubstr("--permute"));
  }
}

TEST_F(CommandsTest, RunNamesAnUnknownAppBeforeParsing) {
  std::vector<std::string> unknown = {"lockstep", "run", "nosuchapp"};
  std::vector<std::string> known = {"lockstep", "run", "pr"};
  std::vector<std::string> other = {"lockstep", "validate", "nosuchapp"};
  for (const auto& [args, expected] :
       std::vector<std::pair<std::vector<std::string>, std::optional<int>>>{
           {unknown, kExitUsage}, {known, std::nullopt}, {other, std::nullopt}}) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    std::optional<int> code;
    for (const auto& command : commands_) {
      if (auto c = command->CheckArguments(argv)) code = c;
    }
    EXPECT_EQ(code, expected) << args[1] << " " << args[2];
  }
}

// dbsp names a setting in its messages by what cli tells it: each name is a flag that one of the
// commands declares, so a message never points the user at an option that does not exist.
TEST_F(CommandsTest, EverySettingDbspNamesIsAFlagACommandDeclares) {
  NameSettingsByFlag();
  for (size_t i = 0; i < static_cast<size_t>(dbsp::Setting::kCount); ++i) {
    const std::string& name = dbsp::SettingName(static_cast<dbsp::Setting>(i));
    ASSERT_EQ(name.rfind("--", 0), 0u) << "setting " << i << " is named '" << name << "'";
    bool declared = false;
    for (const auto& command : commands_) {
      if (command->app()->get_option_no_throw(name) != nullptr) declared = true;
    }
    EXPECT_TRUE(declared) << name << " is not a flag of any command";
  }
}

}  // namespace
}  // namespace lockstep::cli
