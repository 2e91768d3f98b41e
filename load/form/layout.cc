#include "form/layout.h"

#include <cstdio>
#include <cstring>

namespace lockstep::load::form {
namespace {

EdgeLayout EdgesAt(uint64_t& at, uint64_t m, bool weighted) {
  EdgeLayout l;
  l.seq = at;
  at = Pad8(at + 4 * m);
  l.src = at;
  at = Pad8(at + 4 * m);
  l.dst = at;
  at = Pad8(at + 4 * m);
  l.weights = at;
  at += weighted ? 8 * m : 0;
  return l;
}

}  // namespace

DataLayout LayoutOf(const FileHeader& h) {
  const uint64_t n = h.num_vertices, e = h.num_ends;
  DataLayout l;
  uint64_t at = sizeof(FileHeader);
  l.globals = at;
  at = Pad8(at + 4 * n);
  l.name_offsets = at;
  at += 8 * (n + 1);
  l.names = at;
  at = Pad8(at + h.name_bytes);
  l.primary = EdgesAt(at, h.num_primary, h.weighted != 0);
  l.end_globals = at;
  at = Pad8(at + 4 * e);
  l.prefix = at;
  l.uuids = at;
  at += 16 * n;
  l.secondary = EdgesAt(at, h.num_secondary, h.weighted != 0);
  l.end_uuids = at;
  at += 16 * e;
  l.size = at;
  return l;
}

uint64_t NamesSize(const FileHeader& h) {
  return sizeof(FileHeader) + 8 * (h.num_vertices + 1) + h.name_bytes;
}

FileHeader MakeHeader(uint64_t graph_id, uint32_t kind) {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.kind = kind;
  h.graph_id = graph_id;
  h.byte_order = kByteOrder;
  return h;
}

std::string DataFileName(uint32_t part, uint32_t parts) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "part-%05u-of-%05u.lsp", part, parts);
  return buf;
}

std::string NamesFileName(uint32_t part, uint32_t parts) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "names-%05u-of-%05u.lsp", part, parts);
  return buf;
}

}  // namespace lockstep::load::form
