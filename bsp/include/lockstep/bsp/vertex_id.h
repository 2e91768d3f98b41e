#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "lockstep/partition/range.h"

namespace lockstep::bsp {

// A vertex's global identity: a 128-bit UUID ordered as big-endian bytes (DESIGN.md §2).
using VertexId = partition::Uuid;

// Maps an external vertex ID to its UUID. Text that already is a UUID in canonical form
// (8-4-4-4-12 hex digits) is used as it is; any other text is hashed with name-based UUID v5 in
// one fixed project namespace, so every process computes the same UUID without talking.
VertexId VertexIdFromExternal(std::string_view external);
// The same, hashing every name with Boost's generator (the reference the fast path is tested
// against).
VertexId VertexIdFromExternalSlow(std::string_view external);

// Parses canonical UUID text; returns false if `text` is not one.
bool ParseUuid(std::string_view text, VertexId& out);

std::string ToString(const VertexId& id);

namespace internal {
// For tests: whether the CPU has the x86 SHA extensions, and the hash of a name short enough for
// one SHA-1 block through the portable code or the extensions (nullopt if too long or no
// extensions).
bool HasShaExtensions();
std::optional<VertexId> OneBlockV5(std::string_view name, bool sha_extensions);
}  // namespace internal

}  // namespace lockstep::bsp
