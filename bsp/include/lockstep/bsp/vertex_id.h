#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/partition/range.h"

namespace lockstep::bsp {

// A vertex's global identity: a 128-bit UUID ordered as big-endian bytes (docs/design.md §4.1).
using VertexId = partition::Uuid;

// Maps an external vertex ID to its UUID. Text that already is a UUID in canonical form
// (8-4-4-4-12 hex digits) is used as it is; any other text is hashed with name-based UUID v5 in
// one fixed project namespace, so every process computes the same UUID without talking.
VertexId VertexIdFromExternal(std::string_view external);
// VertexIdFromExternal of `value` written in decimal, without making the text.
VertexId VertexIdFromInteger(uint64_t value);

// Parses canonical UUID text; returns false if `text` is not one.
bool ParseUuid(std::string_view text, VertexId& out);

std::string ToString(const VertexId& id);

}  // namespace lockstep::bsp
