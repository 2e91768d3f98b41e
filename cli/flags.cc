#include "flags.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/load/input_form.h"

namespace lockstep::cli {

const CLI::Validator kCount(
    [](std::string& text) -> std::string {
      const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                       [](char c) { return c >= '0' && c <= '9'; });
      return digits ? std::string() : "expected a whole number >= 0, got '" + text + "'";
    },
    "COUNT");

void AddThreadsOption(CLI::App* command, int& threads) {
  command
      ->add_option("--threads", threads, "threads for loading and compute (default: all cores)")
      // Not CLI::PositiveNumber: its error for 0 reads "Value 0 not in range 0 to 1.79e308".
      ->check(CLI::Range(1, std::numeric_limits<int>::max()));
}

void AddDirectionFlags(CLI::App* command, bool& undirected, bool& symmetric) {
  command->add_flag("--undirected", undirected, "add the reverse of every edge");
  command->add_flag("--symmetric", symmetric,
                    "every edge is listed in both directions (as the GAP converter writes a "
                    "symmetric graph): keep each pair once, as an undirected edge; fails naming "
                    "the first edge listed without its reverse");
}

absl::Status CheckDirectionFlags(bool undirected, bool symmetric, const std::string& graph,
                                 const std::string& format) {
  // Checked once parsed, not with CLI11's excludes, which refuses `--symmetric=false` beside
  // --undirected and a config file's `undirected = false` beside --symmetric.
  if (undirected && symmetric) {
    return absl::InvalidArgumentError(
        "--undirected and --symmetric: give one (--undirected adds the reverse of every edge; "
        "--symmetric reads a list that already has it)");
  }
  const bsp::GraphSource source{graph, format, undirected || symmetric, symmetric};
  const char* flag = symmetric ? "--symmetric" : "--undirected";
  if (source.undirected && load::IsGraphalytics(source)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag,
                     " applies to edge lists; a Graphalytics graph says whether it is "
                     "directed in its .properties file"));
  }
  if (symmetric && load::IsPartitionedForm(graph)) {
    return absl::InvalidArgumentError(
        "--symmetric applies to edge lists; a partitioned graph was checked when `lockstep "
        "partition --symmetric` wrote it, and is read undirected as it was written");
  }
  return absl::OkStatus();
}

}  // namespace lockstep::cli
