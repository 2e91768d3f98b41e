#pragma once

// Helpers shared by the app tests: temporary files, running an app in-process exactly as the
// `lockstep run` command does, reading its output file, and random edge lists with the awkward
// cases (integer, 64-bit and text IDs, dangling vertices, self-loops, parallel edges, several
// components).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/catalogue/app.h"
#include "util/temp_dir.h"

namespace lockstep::apps::testing {

// The whole content of a file; an empty string (and a test failure) if it cannot be read.
std::string ReadWholeFile(const std::string& path);

struct RunResult {
  absl::Status status;
  // The bytes of the output file, empty if the job failed.
  std::string output;
  // What the app printed on its report stream (e.g. the SSSP path).
  std::string report;
  // The output file as external ID -> value text; every line must be "<id> <value>".
  std::map<std::string, std::string> values;
  // The number of supersteps the executor ran.
  uint64_t supersteps = 0;

  std::string error() const { return std::string(status.message()); }
};

// Runs `app` on `graph` the way the CLI does: the app's defaults, then the Graphalytics
// properties (if the source is a .properties file), then `overrides`. With `threads` > 0 the run
// holds a tbb::global_control limiting parallelism to that many threads.
RunResult RunApp(const catalogue::AppInfo& app, const bsp::GraphSource& graph,
                 const bsp::Params& overrides = {}, size_t threads = 0);

// The values of a run as doubles ("Infinity" included), by external ID.
std::map<std::string, double> AsDoubles(const RunResult& result);

// The values of a run in the order of `input.external_ids`; a missing vertex fails the test.
std::vector<double> ByInputIndex(const RunResult& result, const bsp::GraphInput& input);

// Loads a graph as an app would see it, failing the test on error.
bsp::GraphInput LoadOrDie(const bsp::GraphSource& graph, bsp::WeightUse weights);

enum class IdKind {
  kInteger,  // small non-negative integers with gaps
  kWide,     // integers above 2^32, up to 2^64 - 1
  kText,     // names, UUIDs, non-canonical integers ("007") and canonical ones, mixed
};

struct RandomGraphOptions {
  uint64_t seed = 1;
  IdKind ids = IdKind::kInteger;
  uint32_t vertices = 100;
  uint32_t components = 3;
  double average_degree = 3;
  bool weights = false;
};

struct RandomGraph {
  // An edge list: comments, blank lines, tabs, self-loops and repeated lines included.
  std::string text;
  // Every ID that appears in an edge.
  std::vector<std::string> ids;
  // The number of edge lines.
  size_t edges = 0;
};

RandomGraph MakeRandomGraph(const RandomGraphOptions& options);

}  // namespace lockstep::apps::testing
