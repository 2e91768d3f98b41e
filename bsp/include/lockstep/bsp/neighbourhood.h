#pragma once

// Neighbour lists for triangle-like kernels (docs/design.md §3.7): each local vertex's distinct
// neighbours ranked above it in degree order, and the same lists of those neighbours, read by a
// program that declares kNeighbourhood (program.h) through its Context.
//
// The degree order ranks a vertex by (k, global index), k being its number of distinct in- and
// out-neighbours other than itself. Keeping only the neighbours ranked above a vertex orients
// every edge once, from its lower end, and bounds every list by sqrt(2m): a hub keeps few (Schank
// & Wagner's "forward" triangle listing). A triangle x < y < z is then found exactly once, at x:
// z is in both x's list and y's. A list is sorted by rank, a number every process agrees on (k
// and global index), so a list received from another process intersects with a local one by
// plain comparison, and the neighbours of x that can close a triangle with y are those after y.
//
// Local mode reads every list from the one part. In a distributed job, the lists of remote
// neighbours ranked above a local vertex come once, at set-up, from their owners (a process sends
// a vertex's list to each process holding a lower-ranked neighbour of it): the cut vertices'
// lists, never the whole graph.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/topology.h"

namespace lockstep::bsp {

// A vertex's rank in degree order as one number: its k in the high 32 bits, its global index in
// the low ones.
inline uint64_t RankKey(uint32_t k, uint32_t global) { return uint64_t{k} << 32 | global; }

// A vertex's neighbours ranked above it, in increasing rank, with the directions of the edges
// between them: bit 1 for an edge vertex -> neighbour, bit 2 for neighbour -> vertex.
class NeighbourList {
 public:
  NeighbourList() = default;
  NeighbourList(const uint64_t* keys, const uint8_t* bits, uint32_t size)
      : keys_(keys), bits_(bits), size_(size) {}

  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The i-th neighbour's RankKey, its global index and its k.
  uint64_t key(uint32_t i) const { return keys_[i]; }
  uint32_t global(uint32_t i) const { return static_cast<uint32_t>(keys_[i]); }
  uint32_t degree(uint32_t i) const { return static_cast<uint32_t>(keys_[i] >> 32); }
  // On a symmetric graph every edge goes both ways and no bits are stored.
  uint32_t bits(uint32_t i) const { return bits_ == nullptr ? 3 : bits_[i]; }
  bool symmetric() const { return bits_ == nullptr; }
  std::span<const uint64_t> keys() const { return {keys_, size_}; }
  // The neighbours from the i-th on (those ranked above the i-th and itself).
  NeighbourList From(uint32_t i) const {
    return NeighbourList(keys_ + i, bits_ == nullptr ? nullptr : bits_ + i, size_ - i);
  }

 private:
  const uint64_t* keys_ = nullptr;
  const uint8_t* bits_ = nullptr;  // null: 3 for every entry
  uint32_t size_ = 0;
};

// Calls f(i, j) for each vertex in both lists, with its positions in a and in b, in increasing
// rank. A merge; when one list is much the longer, each entry of the shorter one is found by
// galloping through the longer.
template <class F>
void ForEachCommon(const NeighbourList& a, const NeighbourList& b, F&& f) {
  const uint64_t* x = a.keys().data();
  const uint64_t* y = b.keys().data();
  const uint32_t nx = a.size(), ny = b.size();
  if (nx == 0 || ny == 0) return;
  constexpr uint32_t kGallop = 32;
  if (nx * uint64_t{kGallop} < ny || ny * uint64_t{kGallop} < nx) {
    const bool a_short = nx < ny;
    const uint64_t* s = a_short ? x : y;
    const uint64_t* l = a_short ? y : x;
    const uint32_t ns = a_short ? nx : ny, nl = a_short ? ny : nx;
    uint32_t lo = 0;
    for (uint32_t i = 0; i < ns && lo < nl; ++i) {
      const uint64_t want = s[i];
      uint32_t step = 1, hi = lo;
      while (hi < nl && l[hi] < want) {
        lo = hi + 1;
        hi += step;
        step <<= 1;
      }
      hi = std::min(hi, nl);
      lo = static_cast<uint32_t>(std::lower_bound(l + lo, l + hi, want) - l);
      if (lo < nl && l[lo] == want) {
        if (a_short) {
          f(i, lo);
        } else {
          f(lo, i);
        }
        ++lo;
      }
    }
    return;
  }
  uint32_t i = 0, j = 0;
  while (i < nx && j < ny) {
    const uint64_t u = x[i], w = y[j];
    if (u == w) {
      f(i, j);
      ++i;
      ++j;
    } else {
      i += u < w ? 1 : 0;
      j += w < u ? 1 : 0;
    }
  }
}

// The number of distinct neighbours other than itself (k) of every slot of `topology`: its local
// vertices, then its remote ones, whose owners send theirs (collective with an exchange; `mirror`
// as for Neighbourhood::Build). Fails at once if the exchange fails; a peer whose bytes do not fit
// sets *bad_peer and leaves its vertices' k at 0, so that the caller finishes its collective steps
// before it fails.
absl::StatusOr<std::vector<uint32_t>> SlotDegrees(const Topology& topology, Exchange* exchange,
                                                  const std::vector<std::vector<uint32_t>>& mirror,
                                                  absl::Status* bad_peer);

class Neighbourhood {
 public:
  // Builds the lists of the local vertices of `topology` and, with an exchange (a distributed
  // job: collective), receives the remote neighbours' lists. `mirror[p][i]` is the local vertex
  // that partition p holds as its i-th remote of this partition (Engine::ConnectPeers).
  static absl::StatusOr<Neighbourhood> Build(const Topology& topology, Exchange* exchange,
                                             const std::vector<std::vector<uint32_t>>& mirror);

  // k: the vertex's distinct neighbours other than itself.
  uint32_t degree(uint32_t v) const { return degree_[v]; }
  NeighbourList Higher(uint32_t v) const { return List(offsets_, keys_, bits_, v); }
  // Where to send to the i-th vertex of Higher(v).
  uint32_t Slot(uint32_t v, uint32_t i) const {
    const uint64_t at = offsets_[v] + i;
    return slots_.empty() ? static_cast<uint32_t>(keys_[at]) : slots_[at];
  }
  // The list of the i-th vertex of Higher(v).
  NeighbourList HigherOfNeighbour(uint32_t v, uint32_t i) const {
    const uint32_t slot = Slot(v, i);
    if (slot < num_local_) return Higher(slot);
    return List(remote_offsets_, remote_keys_, remote_bits_, slot - num_local_);
  }
  // The bytes the lists take.
  uint64_t bytes() const;

 private:
  // Build's steps: the local vertices' lists, by `degrees` (every slot's distinct degree); the
  // bytes for each other partition (its remotes' lists that one of its vertices needs); and the
  // lists received from the others, checked before they are kept.
  void BuildLocal(const Topology& topo, const std::vector<uint32_t>& degrees);
  std::vector<std::string> ListsFor(const Topology& topo,
                                    const std::vector<std::vector<uint32_t>>& mirror,
                                    const std::vector<uint32_t>& degrees) const;
  absl::Status TakeRemote(const Topology& topo, const std::vector<std::string>& incoming,
                          const std::vector<uint32_t>& degrees);

  static NeighbourList List(const std::vector<uint64_t>& offsets, const std::vector<uint64_t>& keys,
                            const std::vector<uint8_t>& bits, uint32_t v) {
    const uint64_t begin = offsets[v];
    return NeighbourList(keys.data() + begin, bits.empty() ? nullptr : bits.data() + begin,
                         static_cast<uint32_t>(offsets[v + 1] - begin));
  }

  uint32_t num_local_ = 0;
  std::vector<uint32_t> degree_;
  // Higher(v) is [offsets_[v], offsets_[v + 1]) of keys_ (and bits_, empty on a symmetric
  // graph; slots_, empty in local mode, where a vertex's slot is its global index).
  std::vector<uint64_t> offsets_;
  std::vector<uint64_t> keys_;
  std::vector<uint8_t> bits_;
  std::vector<uint32_t> slots_;
  // The lists received for remote vertices, by remote index (empty for those not needed).
  std::vector<uint64_t> remote_offsets_;
  std::vector<uint64_t> remote_keys_;
  std::vector<uint8_t> remote_bits_;
};

}  // namespace lockstep::bsp
