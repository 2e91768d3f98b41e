#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace lockstep::cli {

// LDBC Graphalytics output validation: the vertex sets must be equal, then per rule
//   exact        values equal (numerically when both are numbers)
//   equivalence  two vertices share a label in one output exactly when they do in the other
//   epsilon      |expected - actual| <= epsilon * |expected|; infinity matches only infinity
struct ValidateOptions {
  std::string expected;
  std::string actual;  // a file, or a directory of part files (lockstep master --out)
  std::string rule;    // exact | equivalence | epsilon
  std::string app;     // or: the rule of this app (bfs, cdlp: exact; wcc: equivalence; ...)
  double epsilon = 1e-4;
  size_t show = 10;  // mismatches printed
};

struct ValidateReport {
  uint64_t vertices = 0;
  uint64_t mismatches = 0;
  std::string text;  // the first mismatches and a summary line
};

absl::StatusOr<ValidateReport> Validate(const ValidateOptions& options);
// The rule Validate applies: --rule, or --app's; an error names the flag.
absl::StatusOr<std::string> ValidationRule(const ValidateOptions& options);

}  // namespace lockstep::cli
