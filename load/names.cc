// The names of a graph loaded by partition (names.h).
#include "lockstep/load/names.h"

#include <algorithm>
#include <charconv>

#include "lockstep/bsp/bytes.h"
#include "lockstep/bsp/collectives.h"
#include "lockstep/bsp/oom_safe.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::load {
namespace {

absl::Status Malformed() {
  return absl::InternalError("partitioned load: a peer sent a malformed record");
}

}  // namespace

uint32_t RankNames::HolderOf(uint64_t g) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), g);
  return static_cast<uint32_t>(std::max<ptrdiff_t>(1, it - starts_.begin()) - 1);
}

void RankNames::Append(uint64_t g, std::string& out) const {
  const uint64_t i = g - first();
  if (i < ints_.size()) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, ints_[i]);
    out.append(buf, end);
  } else {
    out += texts_[i - ints_.size()];
  }
}

absl::StatusOr<std::vector<bool>> HaveVertices(const bsp::Topology& topology,
                                               bsp::Exchange& exchange,
                                               const std::vector<std::string>& names) {
  std::string mine(names.size(), '\0');
  for (size_t i = 0; i < names.size(); ++i) {
    const uint32_t v = topology.Find(bsp::VertexIdFromExternal(names[i]));
    mine[i] = v != bsp::kNoVertex && topology.external_id(v) == names[i] ? 1 : 0;
  }
  auto all = bsp::AllGather(exchange, mine);
  if (!all.ok()) return all.status();
  std::vector<bool> have(names.size(), false);
  for (const std::string& s : *all) {
    if (s.size() != names.size()) return Malformed();
    for (size_t i = 0; i < names.size(); ++i) have[i] = have[i] || s[i] != 0;
  }
  return have;
}

absl::StatusOr<absl::flat_hash_map<uint32_t, std::string>> ResolveNames(
    const RankNames& names, bsp::Exchange& exchange, std::vector<uint32_t> globals) {
  std::sort(globals.begin(), globals.end());
  globals.erase(std::unique(globals.begin(), globals.end()), globals.end());
  const uint32_t size = exchange.size();
  std::vector<std::string> out(size);
  std::vector<std::vector<uint32_t>> asked(size);
  for (uint32_t g : globals) {
    const uint32_t holder = names.HolderOf(g);
    if (holder >= size) return absl::InternalError("a global index out of range");
    bsp::Put(out[holder], g);
    asked[holder].push_back(g);
  }
  auto in = exchange.AllToAll(std::move(out));
  if (!in.ok()) return in.status();
  std::vector<std::string> replies(size);
  for (uint32_t p = 0; p < size; ++p) {
    bsp::ByteReader r((*in)[p]);
    while (!r.empty()) {
      uint32_t g;
      if (!r.Get(g) || g < names.first() || g - names.first() >= names.size()) return Malformed();
      std::string name;
      names.Append(g, name);
      bsp::Put(replies[p], static_cast<uint32_t>(name.size()));
      replies[p] += name;
    }
  }
  auto back = exchange.AllToAll(std::move(replies));
  if (!back.ok()) return back.status();
  absl::flat_hash_map<uint32_t, std::string> resolved;
  resolved.reserve(globals.size());
  for (uint32_t p = 0; p < size; ++p) {
    bsp::ByteReader r((*back)[p]);
    for (uint32_t g : asked[p]) {
      uint32_t n;
      std::string_view name;
      if (!r.Get(n) || !r.GetBytes(n, name)) return Malformed();
      bsp::GrowOrAbandon(resolved, [&] { return resolved.emplace(g, std::string(name)); });
    }
  }
  return resolved;
}

}  // namespace lockstep::load
