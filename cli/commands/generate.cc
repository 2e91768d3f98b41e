// `lockstep generate kronecker|uniform --scale S --out FILE`: a synthetic graph, as the GAP
// benchmark suite's generators make it.
#include "lockstep/generate/generate.h"

#include <memory>

#include "command.h"
#include "exit_codes.h"
#include "flags.h"

namespace lockstep::cli {
namespace {

class GenerateCommand final : public Command {
 public:
  explicit GenerateCommand(CLI::App& cli)
      : Command(cli.add_subcommand("generate",
                                   "write a synthetic graph (GAP benchmark suite generators)")) {
    CLI::App* generate = app();
    generate->add_option("kind", options_.kind, "kronecker or uniform")
        ->required()
        ->check(CLI::IsMember({"kronecker", "uniform"}));
    generate->add_option("--scale", options_.scale, "2^scale vertices")->required()->check(kCount);
    generate->add_option("--degree", options_.degree, "edges per vertex on average")
        ->capture_default_str()
        ->check(kCount);
    generate->add_option("--seed", options_.seed, "random seed")
        ->capture_default_str()
        ->check(kCount);
    generate->add_flag("--weights", options_.weights, "add integer weights in [1, 255]");
    generate->add_flag("--permute", options_.permute,
                       "relabel the vertices by a random permutation from --seed, as the GAP "
                       "suite's and Graphalytics' published graphs are");
    generate->add_option("--out", options_.out, "output edge list")->required();
  }

  int Run() override {
    auto st = generate::Generate(options_);
    // Generate checks its options first; everything after is the work failing.
    if (absl::IsInvalidArgument(st)) return UsageError(st);
    return st.ok() ? kExitOk : Fail(st);
  }

 private:
  generate::GenerateOptions options_;
};

}  // namespace

std::unique_ptr<Command> MakeGenerateCommand(CLI::App& cli, const CommandContext&) {
  return std::make_unique<GenerateCommand>(cli);
}

}  // namespace lockstep::cli
