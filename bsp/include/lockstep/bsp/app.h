#pragma once

// What an app's job is given: its parameters, the facts of the graph it may check them against,
// and the names of vertices to print values by. The JobRunner over its vertex program lives in
// the runner library (lockstep/runner/program_runner.h), above the load; what an app is called,
// its defaults and help in the app catalogue (lockstep/catalogue/app.h).

#include <algorithm>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/output.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

// An app's parameters by name, as the job details carry them.
using Params = std::map<std::string, std::string>;

// Parameter access. Errors about a parameter start with its name and a colon
// ("damping: expected a number, got 'x'"), so that a command line can show it as its own flag.
absl::StatusOr<double> ParamDouble(const Params& params, const std::string& name);
absl::StatusOr<int64_t> ParamInt(const Params& params, const std::string& name);
std::string ParamString(const Params& params, const std::string& name);
// An invalid-argument error about parameter `name`, worded as above.
absl::Status ParamError(std::string_view name, std::string_view problem);

// What an app may know of the graph when it makes its program: enough to check its parameters,
// without the graph itself, which no process of a distributed job holds whole.
struct GraphFacts {
  // Whether this process knows the graph. Not on the distributed master nor for a check of the
  // parameters alone, which then checks nothing about vertices; an empty graph is known, and
  // lacks every vertex.
  bool known = false;
  // The vertices of the whole input (0 where the graph is not known).
  uint64_t num_vertices = 0;
  // Graphalytics only: the graph's properties (GraphInput::properties).
  std::map<std::string, std::string> properties;
  // For each vertex the app's parameters name (App::NamedVertices), whether the graph has it.
  std::map<std::string, bool, std::less<>> named;

  // True if the graph is known and has no vertex `external`. A name the app did not declare in
  // NamedVertices counts as missing, so that a forgotten declaration fails loudly.
  bool Lacks(std::string_view external) const {
    if (!known) return false;
    auto it = named.find(external);
    return it == named.end() || !it->second;
  }
};

// Turns global vertex indexes (GraphInput order, Context::global_index) back into external IDs
// when results are written, for apps whose values are vertices (e.g. component labels).
class VertexNames {
 public:
  virtual ~VertexNames() = default;
  virtual void Append(uint32_t global_index, std::string& out) const = 0;
};

// The vertices an app's parameters name (empty if the app declares no NamedVertices).
template <class App>
std::vector<std::string> NamedVerticesOf(const Params& params) {
  if constexpr (requires { App::NamedVertices(params); }) {
    return App::NamedVertices(params);
  } else {
    return {};
  }
}

// The facts of a whole input, as local mode (and tests and benchmarks) know them.
template <class App>
GraphFacts FactsOf(const Params& params, const GraphInput& input) {
  GraphFacts facts;
  facts.known = true;
  facts.num_vertices = input.num_vertices();
  facts.properties = input.properties;
  for (const std::string& name : NamedVerticesOf<App>(params)) {
    facts.named[name] = HasVertex(input, name);
  }
  return facts;
}

// The same for a whole graph built without a GraphInput (Topology::FromRows), with the input's
// Graphalytics properties.
template <class App>
GraphFacts FactsOf(const Params& params, const Topology& whole,
                   const std::map<std::string, std::string>& properties) {
  GraphFacts facts;
  facts.known = true;
  facts.num_vertices = whole.num_global();
  facts.properties = properties;
  for (const std::string& name : NamedVerticesOf<App>(params)) {
    const uint32_t v = whole.Find(VertexIdFromExternal(name));
    facts.named[name] = v != kNoVertex && whole.external_id(v) == name;
  }
  return facts;
}

}  // namespace lockstep::bsp
