#include "lockstep/bsp/vertex_id.h"

#include <boost/uuid/name_generator_sha1.hpp>
#include <boost/uuid/uuid_io.hpp>

namespace lockstep::bsp {
namespace {

// The project namespace for name-based (v5) vertex UUIDs. Fixed forever: changing it changes
// every vertex's UUID and so every partition assignment.
constexpr VertexId kNamespace = {{0x3f, 0x1c, 0x2a, 0x58, 0x9d, 0x4e, 0x4b, 0x7a, 0x8c, 0x35, 0x1e,
                                  0x6d, 0x2f, 0x0a, 0x9b, 0x47}};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool ParseUuid(std::string_view text, VertexId& out) {
  if (text.size() != 36) return false;
  size_t byte = 0;
  for (size_t i = 0; i < 36;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    const int hi = HexValue(text[i]), lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.data[byte++] = static_cast<uint8_t>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

VertexId VertexIdFromExternal(std::string_view external) {
  VertexId id;
  if (ParseUuid(external, id)) return id;
  boost::uuids::name_generator_sha1 gen(kNamespace);
  return gen(external.data(), external.size());
}

std::string ToString(const VertexId& id) { return boost::uuids::to_string(id); }

}  // namespace lockstep::bsp
