// `lockstep partition --graph G --out DIR [--parts K]`: a graph written once in the partitioned
// binary form, which jobs then load without parsing, each worker reading only its range.
#include <chrono>
#include <memory>
#include <string>

#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/load/input_form.h"
#include "lockstep/load/partitioned_form.h"
#include "lockstep/load/source.h"
#include "spdlog/spdlog.h"
#include "timing.h"

namespace lockstep::cli {
namespace {

class PartitionCommand final : public Command {
 public:
  PartitionCommand(CLI::App& cli, const CommandContext& context)
      : Command(cli.add_subcommand(
            "partition",
            "write a graph once in the partitioned binary form, which jobs (`run`, `master`) then "
            "load with --graph DIR without parsing, each worker reading only its range")) {
    CLI::App* partition = app();
    partition
        ->add_option("--graph", graph_,
                     "input graph: an edge list 'src dst [weight]' (a file, or a directory whose "
                     "files are read as one input), a Graphalytics .properties, or a partitioned "
                     "graph to write again with another --parts")
        ->required()
        ->check(CLI::ExistingPath);
    partition->add_option("--format", format_, "edgelist or graphalytics (default: by suffix)")
        ->check(CLI::IsMember({"edgelist", "graphalytics"}));
    AddDirectionFlags(partition, undirected_, symmetric_);
    partition
        ->add_option("--out", out_,
                     "the directory to write (new, empty, or a partitioned graph to replace)")
        ->required();
    partition
        ->add_option("--parts", parts_,
                     "UUID ranges (files) to cut the graph in; any worker count reads any number")
        ->capture_default_str()
        ->check(CLI::Range(1, 65536));
    AddThreadsOption(partition, context.threads);
  }

  // The whole graph is read once, with its weights if it has any (so that weighted apps can use
  // the result), and written as `parts` files.
  int Run() override {
    const bsp::GraphSource source{graph_, format_, undirected_ || symmetric_, symmetric_};
    if (auto st = CheckDirectionFlags(undirected_, symmetric_, graph_, format_); !st.ok()) {
      return UsageError(st);
    }
    const auto start = std::chrono::steady_clock::now();
    auto input = load::LoadGraph(source, bsp::WeightUse::kNonNegative);
    if (!input.ok()) return Fail(input.status());
    const double load_s = SecondsSince(start);
    load::PartitionedFormOptions options;
    options.shards = parts_;
    options.format = load::IsGraphalytics(source) ? "graphalytics" : "edgelist";
    if (auto st = load::WritePartitionedForm(*input, out_, options); !st.ok()) {
      return absl::IsFailedPrecondition(st) || absl::IsInvalidArgument(st) ? UsageError(st)
                                                                           : Fail(st);
    }
    spdlog::info(
        "partition: {} vertices, {} stored edges{} in {} parts, load {:.3f} s, total {:.3f} "
        "s; wrote {}",
        input->num_vertices(), input->num_stored_edges(),
        input->weights.empty() ? "" : " (weighted)", parts_, load_s, SecondsSince(start), out_);
    return kExitOk;
  }

 private:
  std::string graph_;
  std::string format_;
  bool undirected_ = false;
  bool symmetric_ = false;
  std::string out_;
  uint32_t parts_ = 8;
};

}  // namespace

std::unique_ptr<Command> MakePartitionCommand(CLI::App& cli, const CommandContext& context) {
  return std::make_unique<PartitionCommand>(cli, context);
}

}  // namespace lockstep::cli
