#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lockstep::bsp {

// Writes `path` atomically when it is a regular file or a new one: the bytes go to a temporary file
// beside it, which is renamed over `path` only when complete. On failure nothing is left behind
// and an existing file is untouched. A symbolic link to a regular file has that file replaced,
// the link kept. Anything else is written into, never replaced: a device (/dev/null), a FIFO, and
// this process's own descriptors (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N).
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes);
// The same for the concatenation of `pieces`, which is never held whole.
absl::Status WriteFileAtomically(const std::string& path, std::span<const std::string_view> pieces);
// The same for pieces made as they are written: `next` sets the next piece (valid until it is
// called again) and returns true, or returns false after the last. A writer of a large text then
// holds a few pieces of it at a time.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::FunctionRef<bool(std::string_view&)> next);
// The path WriteFileAtomically replaces for `path` (itself, or the regular file a symbolic link
// leads to), or nullopt if it writes into `path` instead; for writers of their own.
absl::StatusOr<std::optional<std::string>> AtomicReplaceTarget(const std::string& path);

// Appends a double with 17 significant digits (round-trips exactly); infinities as "Infinity"
// and "-Infinity".
void AppendDouble(double value, std::string& out);
void AppendInt(int64_t value, std::string& out);
void AppendUint(uint64_t value, std::string& out);

}  // namespace lockstep::bsp
