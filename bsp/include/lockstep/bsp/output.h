#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace lockstep::bsp {

// Writes `path` atomically: the bytes go to a temporary file beside it, which is renamed over
// `path` only when complete. On failure nothing is left behind and an existing file is untouched.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes);

// Appends a double with 17 significant digits (round-trips exactly); infinities as "Infinity"
// and "-Infinity".
void AppendDouble(double value, std::string& out);
void AppendInt(int64_t value, std::string& out);
void AppendUint(uint64_t value, std::string& out);

}  // namespace lockstep::bsp
