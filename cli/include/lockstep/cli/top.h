#pragma once

// `run --top K`: the K vertices of a result file with the largest values.
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace lockstep::cli {

// Writes the `top` lines of the result file at `path` (`<id> <value>` lines) with the largest
// values to `out`, ties by ID order, each as the file has it. Lines whose value is `unreachable`
// (the app's value for a vertex its source does not reach; empty: none) are not ranked: the
// largest values are those of the vertices reached.
absl::Status PrintTop(const std::string& path, size_t top, std::string_view unreachable,
                      std::ostream& out);

}  // namespace lockstep::cli
