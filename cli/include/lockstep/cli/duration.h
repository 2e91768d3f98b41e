#pragma once

#include <chrono>
#include <string_view>

#include "absl/status/statusor.h"

namespace lockstep::cli {

// Parses a duration written like `500ms`, `90s`, `5m`, `1h` or `1m30s`; a bare number is seconds.
// `flag` names the flag in the error.
absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text,
                                                        std::string_view flag);

}  // namespace lockstep::cli
