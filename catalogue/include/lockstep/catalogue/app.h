#pragma once

// The app catalogue: what the command line, the distributed worker and the Graphalytics validator
// know of an app besides its program. The runner runs a JobRunner over Params and knows none of
// this; whoever owns a command line turns the parameters below into flags and help text.
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/app.h"
#include "lockstep/runner/job_runner.h"

namespace lockstep::catalogue {

// How an app's result is compared with an expected output (LDBC Graphalytics output validation):
// the vertex sets must be equal, then per vertex
//   kExact        values equal (numerically when both are numbers)
//   kEquivalence  two vertices share a value in one output exactly when they do in the other
//                 (labels up to renaming, as for components)
//   kEpsilon      |expected - actual| <= epsilon * |expected|; infinity matches only infinity
enum class ValidationRule { kExact, kEquivalence, kEpsilon };

// "exact", "equivalence" or "epsilon".
std::string_view RuleName(ValidationRule rule);
// The inverse of RuleName; an error names the rules there are.
absl::StatusOr<ValidationRule> ParseRule(std::string_view name);

// What an app's result values are, which says the column type a database sink gives them.
enum class ValueKind {
  kReal,     // floating point (PageRank's rank, SSSP's distance, LCC's coefficient)
  kInteger,  // an integer (BFS's depth, a colour)
  kVertex,   // a vertex's external ID (a component's or community's label)
};

struct AppParam {
  std::string name;  // as it appears in bsp::Params
  std::string default_value;
  std::string help;
  // The value names a file: the distributed master makes it absolute, as it does the graph's
  // path, so that workers started elsewhere find it on the shared file system.
  bool is_path = false;
  // The option only makes sense in a local run (its output is printed by the process that holds
  // every vertex); the distributed master refuses it rather than ignore it.
  bool local_only = false;
};

// A parameter that a Graphalytics graph's `.properties` file gives (LDBC names one per algorithm).
struct GraphalyticsParam {
  std::string property;  // its key, "graph.<name>." removed ("pr.damping-factor")
  std::string param;     // the app parameter it sets ("damping")
  // Parameters it fixes besides (PageRank runs exactly pr.num-iterations: tolerance 0).
  std::map<std::string, std::string> also;
};

struct AppInfo {
  std::string name;
  std::vector<std::string> aliases;
  std::string summary;
  std::vector<AppParam> params;
  // How results are validated; an app that says nothing is compared exactly, the strictest rule.
  ValidationRule validation = ValidationRule::kExact;
  ValueKind values = ValueKind::kReal;
  // The value written for a vertex the app's source does not reach ("Infinity"), if the app has
  // one: `run --top` lists the largest values of the vertices reached.
  std::string unreachable;
  // The parameter that bounds the app's iterations, if it has one ("max-iterations"): a job of
  // it ends after that many supersteps and one more at the latest (`lockstep status` shows it).
  std::string iterations_param;
  // The parameters a Graphalytics graph's properties give; explicit values override them later.
  std::vector<GraphalyticsParam> graphalytics;
  // `report`, if not null, receives an app's extra human-readable output (e.g. a path).
  std::function<std::unique_ptr<runner::JobRunner>(std::ostream* report)> make_runner;
};

// Sets `params` from a Graphalytics graph's properties ("graph.<name>." removed from their keys)
// as `app` reads them, and returns, for each parameter set, the property that set it: an error
// about that parameter is an error in the file, not on a command line.
std::map<std::string, std::string> ParamsFromGraphalytics(
    const AppInfo& app, const std::map<std::string, std::string>& properties, bsp::Params& params);

class AppRegistry {
 public:
  void Add(AppInfo app) { apps_.push_back(std::move(app)); }
  // By name or alias; null if there is no such app.
  const AppInfo* Find(std::string_view name) const;
  const std::vector<AppInfo>& apps() const { return apps_; }

 private:
  std::vector<AppInfo> apps_;
};

}  // namespace lockstep::catalogue
