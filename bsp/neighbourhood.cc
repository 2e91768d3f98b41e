#include "lockstep/bsp/neighbourhood.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/bytes.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {
namespace {

constexpr uint32_t kBlock = 1024;

// One vertex's distinct neighbours other than itself, sorted by global index: each as
// (global << 32 | slot), with its bits.
class Distinct {
 public:
  void Of(const Topology& topo, uint32_t v) {
    merged_.clear();
    bits_.clear();
    Sorted(topo, topo.out_slots(v), v, out_);
    if (topo.symmetric()) {
      merged_.swap(out_);
      bits_.assign(merged_.size(), 3);
      return;
    }
    Sorted(topo, topo.in_slots(v), v, in_);
    size_t i = 0, j = 0;
    while (i < out_.size() || j < in_.size()) {
      const uint64_t a = i < out_.size() ? out_[i] : ~uint64_t{0};
      const uint64_t b = j < in_.size() ? in_[j] : ~uint64_t{0};
      // Equal globals have equal slots: one vertex has one slot.
      merged_.push_back(std::min(a, b));
      bits_.push_back(static_cast<uint8_t>((a <= b ? 1 : 0) | (b <= a ? 2 : 0)));
      i += a <= b ? 1 : 0;
      j += b <= a ? 1 : 0;
    }
  }
  size_t size() const { return merged_.size(); }
  uint32_t global(size_t i) const { return static_cast<uint32_t>(merged_[i] >> 32); }
  uint32_t slot(size_t i) const { return static_cast<uint32_t>(merged_[i]); }
  uint8_t bits(size_t i) const { return bits_[i]; }

 private:
  static void Sorted(const Topology& topo, std::span<const uint32_t> slots, uint32_t self,
                     std::vector<uint64_t>& out) {
    out.clear();
    for (uint32_t s : slots) {
      if (s != self) out.push_back(uint64_t{topo.SlotGlobalIndex(s)} << 32 | s);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  std::vector<uint64_t> out_, in_, merged_;
  std::vector<uint8_t> bits_;
};

// Whether (k_a, a) ranks below (k_b, b).
bool Below(uint32_t k_a, uint32_t a, uint32_t k_b, uint32_t b) {
  return k_a != k_b ? k_a < k_b : a < b;
}

// Calls f(v, distinct neighbours of v) for every local vertex, in parallel by blocks.
template <typename F>
void EachVertex(const Topology& topo, F&& f) {
  const uint32_t n = topo.num_local();
  const size_t blocks = (uint64_t{n} + kBlock - 1) / kBlock;
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    Distinct d;
    const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((b + 1) * kBlock));
    for (uint32_t v = static_cast<uint32_t>(b * kBlock); v < end; ++v) {
      d.Of(topo, v);
      f(v, d);
    }
  });
}

}  // namespace

absl::StatusOr<std::vector<uint32_t>> SlotDegrees(const Topology& topo, Exchange* exchange,
                                                  const std::vector<std::vector<uint32_t>>& mirror,
                                                  absl::Status* bad_peer) {
  const uint32_t n = topo.num_local();
  const uint32_t parts = static_cast<uint32_t>(topo.split().size());
  const uint32_t self = static_cast<uint32_t>(topo.part());
  if (parts > 1 && (exchange == nullptr || mirror.size() != parts)) {
    return absl::FailedPreconditionError(
        "the neighbours of a partitioned graph need the exchange with the other partitions");
  }
  if (!topo.symmetric() && n > 0 && !topo.has_in_edges()) {
    return absl::FailedPreconditionError(
        "the neighbours of a graph that is not symmetric need its in-edges");
  }
  std::vector<uint32_t> degrees(uint64_t{n} + topo.num_remote(), 0);
  EachVertex(topo,
             [&](uint32_t v, const Distinct& d) { degrees[v] = static_cast<uint32_t>(d.size()); });
  if (parts == 1) return degrees;
  // The remote vertices' k, from their owners, in the order of each partition's remotes.
  std::vector<std::string> outgoing(parts);
  for (uint32_t q = 0; q < parts; ++q) {
    if (q == self) continue;
    outgoing[q].reserve(4 * mirror[q].size());
    for (uint32_t v : mirror[q]) Put(outgoing[q], degrees[v]);
  }
  auto incoming = exchange->AllToAll(std::move(outgoing));
  if (!incoming.ok()) return incoming.status();
  const auto& begin = topo.remote_partition_begin();
  for (uint32_t p = 0; p < parts; ++p) {
    if (p == self) continue;
    const std::string& bytes = (*incoming)[p];
    if (bytes.size() != 4 * uint64_t{begin[p + 1] - begin[p]}) {
      if (bad_peer->ok()) {
        *bad_peer = absl::DataLossError(absl::StrCat(
            "cannot set up the neighbours' degrees: partition ", p, " sent ", bytes.size(),
            " bytes of degrees for ", begin[p + 1] - begin[p], " vertices"));
      }
      continue;
    }
    // (memcpy's pointers must not be null even for 0 bytes: a part may have no vertex at all.)
    if (!bytes.empty()) std::memcpy(degrees.data() + n + begin[p], bytes.data(), bytes.size());
  }
  return degrees;
}

absl::StatusOr<Neighbourhood> Neighbourhood::Build(
    const Topology& topo, Exchange* exchange, const std::vector<std::vector<uint32_t>>& mirror) {
  // A bad peer's bytes fail the build only after the last collective step, so that the other
  // processes are not left waiting.
  absl::Status failed;
  auto degrees = SlotDegrees(topo, exchange, mirror, &failed);
  if (!degrees.ok()) return degrees.status();
  Neighbourhood nb;
  nb.BuildLocal(topo, *degrees);
  if (topo.split().size() == 1) return nb;
  auto incoming = exchange->AllToAll(nb.ListsFor(topo, mirror, *degrees));
  if (!incoming.ok()) return incoming.status();
  if (!failed.ok()) return failed;
  if (absl::Status taken = nb.TakeRemote(topo, *incoming, *degrees); !taken.ok()) return taken;
  return nb;
}

void Neighbourhood::BuildLocal(const Topology& topo, const std::vector<uint32_t>& degrees) {
  const uint32_t n = topo.num_local();
  num_local_ = n;
  degree_.assign(degrees.begin(), degrees.begin() + n);
  // The lists: counted, then laid out.
  offsets_.assign(uint64_t{n} + 1, 0);
  EachVertex(topo, [&](uint32_t v, const Distinct& d) {
    const uint32_t k = degree_[v], g = topo.global_index(v);
    uint64_t higher = 0;
    for (size_t i = 0; i < d.size(); ++i) higher += Below(k, g, degrees[d.slot(i)], d.global(i));
    offsets_[v + 1] = higher;
  });
  for (uint32_t v = 0; v < n; ++v) offsets_[v + 1] += offsets_[v];
  const uint64_t entries = offsets_[n];
  keys_.resize(entries);
  if (!topo.symmetric()) bits_.resize(entries);
  bool slot_is_global = topo.split().size() == 1;
  for (uint32_t v = 0; v < n && slot_is_global; ++v) slot_is_global = topo.global_index(v) == v;
  if (!slot_is_global) slots_.resize(entries);
  EachVertex(topo, [&](uint32_t v, const Distinct& d) {
    const uint32_t k = degree_[v], g = topo.global_index(v);
    const uint64_t begin = offsets_[v];
    uint64_t at = begin;
    for (size_t i = 0; i < d.size(); ++i) {
      const uint32_t kn = degrees[d.slot(i)];
      if (!Below(k, g, kn, d.global(i))) continue;
      keys_[at] = RankKey(kn, d.global(i));
      if (!bits_.empty()) bits_[at] = d.bits(i);
      if (!slots_.empty()) slots_[at] = d.slot(i);
      ++at;
    }
    // In rank order: the keys with their bits and slots.
    if (bits_.empty() && slots_.empty()) {
      std::sort(keys_.begin() + begin, keys_.begin() + at);
      return;
    }
    thread_local std::vector<std::pair<uint64_t, uint64_t>> order;
    order.clear();
    for (uint64_t e = begin; e < at; ++e) {
      order.emplace_back(keys_[e], (bits_.empty() ? 0 : uint64_t{bits_[e]} << 32) |
                                       (slots_.empty() ? 0 : slots_[e]));
    }
    std::sort(order.begin(), order.end());
    for (uint64_t e = begin; e < at; ++e) {
      const auto& [key, rest] = order[e - begin];
      keys_[e] = key;
      if (!bits_.empty()) bits_[e] = static_cast<uint8_t>(rest >> 32);
      if (!slots_.empty()) slots_[e] = static_cast<uint32_t>(rest);
    }
  });
}

// To each partition q, for each of q's remotes here in q's order: the length of its list and
// the list if a vertex of q ranks below it (0 otherwise), then the lists' bits unless the graph
// is symmetric.
std::vector<std::string> Neighbourhood::ListsFor(const Topology& topo,
                                                 const std::vector<std::vector<uint32_t>>& mirror,
                                                 const std::vector<uint32_t>& degrees) const {
  const uint32_t n = topo.num_local();
  const uint32_t parts = static_cast<uint32_t>(topo.split().size());
  const uint32_t self = static_cast<uint32_t>(topo.part());
  std::vector<std::string> outgoing(parts);
  tbb::parallel_for(uint32_t{0}, parts, [&](uint32_t q) {
    if (q == self) return;
    std::string& out = outgoing[q];
    std::vector<uint32_t> lengths;
    lengths.reserve(mirror[q].size());
    for (uint32_t y : mirror[q]) {
      const uint32_t k = degree_[y], g = topo.global_index(y);
      bool wanted = false;
      auto check = [&](std::span<const uint32_t> slots) {
        for (uint32_t s : slots) {
          if (s >= n && topo.remote_partition(s - n) == q &&
              Below(degrees[s], topo.SlotGlobalIndex(s), k, g)) {
            wanted = true;
            return;
          }
        }
      };
      check(topo.out_slots(y));
      if (!wanted && !topo.symmetric()) check(topo.in_slots(y));
      lengths.push_back(wanted ? static_cast<uint32_t>(offsets_[y + 1] - offsets_[y]) : 0);
    }
    for (uint32_t len : lengths) Put(out, len);
    for (size_t i = 0; i < lengths.size(); ++i) {
      if (lengths[i] == 0) continue;
      const uint64_t begin = offsets_[mirror[q][i]];
      out.append(reinterpret_cast<const char*>(keys_.data() + begin), 8 * lengths[i]);
    }
    if (!topo.symmetric()) {
      for (size_t i = 0; i < lengths.size(); ++i) {
        if (lengths[i] == 0) continue;
        const uint64_t begin = offsets_[mirror[q][i]];
        out.append(reinterpret_cast<const char*>(bits_.data() + begin), lengths[i]);
      }
    }
  });
  return outgoing;
}

absl::Status Neighbourhood::TakeRemote(const Topology& topo,
                                       const std::vector<std::string>& incoming,
                                       const std::vector<uint32_t>& degrees) {
  const uint32_t n = topo.num_local();
  const uint32_t parts = static_cast<uint32_t>(topo.split().size());
  const uint32_t self = static_cast<uint32_t>(topo.part());
  const uint32_t num_remote = topo.num_remote();
  auto fail = [&](uint32_t p, const std::string& what) {
    return absl::DataLossError(
        absl::StrCat("cannot set up the neighbour lists: partition ", p, " sent ", what));
  };
  const auto& begin = topo.remote_partition_begin();
  remote_offsets_.assign(uint64_t{num_remote} + 1, 0);
  for (uint32_t p = 0; p < parts; ++p) {
    if (p == self) continue;
    ByteReader lengths(incoming[p]);
    uint64_t total = 0;
    for (uint32_t r = begin[p]; r < begin[p + 1]; ++r) {
      uint32_t len;
      if (!lengths.Get(len)) return fail(p, "a truncated list of lengths");
      remote_offsets_[r + 1] = len;
      total += len;
    }
    // Checked before anything is sized by the lengths (by division: a product could wrap).
    const uint64_t width = topo.symmetric() ? 8 : 9;
    const std::string_view in = lengths.rest();
    if (in.size() % width != 0 || total != in.size() / width) {
      return fail(p, absl::StrCat(in.size(), " bytes of lists where their lengths make ", total,
                                  " entries of ", width, " bytes"));
    }
  }
  for (uint32_t r = 0; r < num_remote; ++r) remote_offsets_[r + 1] += remote_offsets_[r];
  remote_keys_.resize(remote_offsets_[num_remote]);
  if (!topo.symmetric()) remote_bits_.resize(remote_keys_.size());
  for (uint32_t p = 0; p < parts; ++p) {
    if (p == self) continue;
    std::string_view in = incoming[p];
    in.remove_prefix(4 * uint64_t{begin[p + 1] - begin[p]});
    const uint64_t first = remote_offsets_[begin[p]];
    const uint64_t count = remote_offsets_[begin[p + 1]] - first;
    if (count > 0) {
      std::memcpy(remote_keys_.data() + first, in.data(), 8 * count);
      if (!topo.symmetric()) {
        std::memcpy(remote_bits_.data() + first, in.data() + 8 * count, count);
      }
    }
    for (uint32_t r = begin[p]; r < begin[p + 1]; ++r) {
      const auto list = List(remote_offsets_, remote_keys_, remote_bits_, r);
      const uint64_t own = RankKey(degrees[n + r], topo.SlotGlobalIndex(n + r));
      for (uint32_t i = 0; i < list.size(); ++i) {
        if (list.global(i) >= topo.num_global() || list.key(i) <= (i > 0 ? list.key(i - 1) : own) ||
            list.bits(i) == 0 || list.bits(i) > 3) {
          return fail(p, absl::StrCat("a neighbour list for vertex ", ToString(topo.remote_id(r)),
                                      " that is not sorted, distinct vertices ranked above it "
                                      "with edge directions"));
        }
      }
    }
  }
  return absl::OkStatus();
}

uint64_t Neighbourhood::bytes() const {
  return degree_.size() * 4 + offsets_.size() * 8 + keys_.size() * 8 + bits_.size() +
         slots_.size() * 4 + remote_offsets_.size() * 8 + remote_keys_.size() * 8 +
         remote_bits_.size();
}

}  // namespace lockstep::bsp
