#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::validate {

// LDBC Graphalytics output validation: the vertex sets must be equal, then each vertex's value
// per rule (catalogue::ValidationRule says what each rule accepts; each app names its own rule in
// the catalogue).
struct ValidateOptions {
  std::string expected;
  std::string actual;  // a file, or a directory of result files (a distributed job's result)
  catalogue::ValidationRule rule = catalogue::ValidationRule::kExact;
  double epsilon = 1e-4;  // of the epsilon rule
  size_t show = 10;       // mismatches printed
};

struct ValidateReport {
  uint64_t vertices = 0;
  uint64_t mismatches = 0;
  std::string text;  // the first mismatches and a summary line
};

absl::StatusOr<ValidateReport> Validate(const ValidateOptions& options);

}  // namespace lockstep::validate
