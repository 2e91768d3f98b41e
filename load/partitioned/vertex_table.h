// The vertices a worker of a partitioned load (docs/design.md §4.4) knows, on the receiving side:
// its own and the remote ends of its edges, each with an entry (the index its edges are numbered
// by until the assembly). Private to the load library.
#pragma once

#include <bit>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lockstep/bsp/oom_safe.h"
#include "lockstep/bsp/vertex_id.h"
#include "partitioned/ranked_bits.h"
#include "partitioned/records.h"
#include "tbb/parallel_for.h"
#include "text/dictionary.h"

namespace lockstep::load::partitioned {

class VertexTable {
 public:
  uint32_t Find(const text::TextKey& k) const {
    return k.is_int ? FindInt(k.value) : FindText(k.text);
  }
  // A hint that FindInt(value) comes soon (the direct table is larger than the caches).
  void PrefetchInt(uint64_t value) const {
    if (value < direct_.size()) __builtin_prefetch(direct_.data() + value);
  }
  uint32_t FindInt(uint64_t value) const {
    if (const uint32_t v = FindSorted(value); v != text::kNoIndex) return v;
    if (value < direct_.size()) return direct_[value];
    auto it = ints_.find(value);
    return it == ints_.end() ? text::kNoIndex : it->second;
  }
  uint32_t FindText(std::string_view text) const {
    auto it = texts_.find(Absl(text));
    return it == texts_.end() ? text::kNoIndex : it->second;
  }
  // Integer IDs below `limit` are then looked up in a direct table (an array indexed by the ID),
  // not hashed: the receiving side of a load looks up two IDs per edge. The caller bounds the
  // table by what it holds anyway (docs/design.md §4), so the table never follows the ID space
  // of a sparse-ID graph.
  void CoverIntegersBelow(uint64_t limit) {
    if (limit <= direct_.size()) return;
    const uint64_t old = direct_.size();
    direct_.resize(limit, text::kNoIndex);
    for (auto it = ints_.begin(); it != ints_.end();) {
      if (it->first >= old && it->first < limit) {
        direct_[it->first] = it->second;
        ints_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  // The entry of `k`, and whether it was added (not owned, partition `owner`) as new.
  struct Interned {
    uint32_t entry;
    bool added;
  };
  Interned Intern(const text::TextKey& k, uint32_t owner) {
    const uint32_t next = static_cast<uint32_t>(value_.size());
    if (k.is_int) {
      if (const uint32_t v = FindSorted(k.value); v != text::kNoIndex) return {v, false};
      if (k.value < direct_.size()) {
        if (direct_[k.value] != text::kNoIndex) return {direct_[k.value], false};
        direct_[k.value] = next;
      } else {
        auto [it, inserted] =
            bsp::GrowOrAbandon(ints_, [&] { return ints_.emplace(k.value, next); });
        if (!inserted) return {it->second, false};
      }
      value_.push_back(k.value);
      text_.push_back(text::kNoIndex);
    } else {
      auto it = texts_.find(Absl(k.text));
      if (it != texts_.end()) return {it->second, false};
      storage_.emplace_back(k.text);
      bsp::GrowOrAbandon(texts_, [&] { return texts_.emplace(Absl(storage_.back()), next); });
      value_.push_back(0);
      text_.push_back(static_cast<uint32_t>(storage_.size() - 1));
    }
    owned.push_back(0);
    uuid.emplace_back();
    part.push_back(owner);
    return {next, true};
  }
  // Makes an empty table the members of `ids` in increasing order (entry i its i-th smallest),
  // looked up through `ids` itself. The members are positions, ID - `base` (as `owned_ids`,
  // `owned_uuids`' keys and part_of's argument); `owned_uuids`: the UUIDs of the owned ones, by
  // position. `part(v)`: the partition of a member v that is not owned.
  template <class PartOf>
  void AdoptSorted(RankedBits ids, uint64_t base, const std::vector<uint64_t>& owned_ids,
                   const std::vector<std::pair<uint64_t, bsp::VertexId>>& owned_uuids,
                   uint32_t self, PartOf&& part_of) {
    const uint32_t n = ids.size();
    value_.resize(n);
    text_.assign(n, text::kNoIndex);
    owned.assign(n, 0);
    uuid.resize(n);
    part.resize(n);
    const std::vector<uint64_t>& words = ids.words();
    tbb::parallel_for(size_t{0}, words.size(), [&](size_t w) {
      uint32_t at = ids.Before(w);
      for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1, ++at) {
        const uint64_t v = uint64_t{w} * 64 + static_cast<uint64_t>(std::countr_zero(bits));
        value_[at] = base + v;
        const bool mine = w < owned_ids.size() && ((owned_ids[w] >> (v & 63)) & 1) != 0;
        owned[at] = mine;
        part[at] = mine ? self : part_of(v);
      }
    });
    for (const auto& [v, id] : owned_uuids) uuid[ids.Rank(v)] = id;
    sorted_ = std::move(ids);
    sorted_base_ = base;
  }
  text::TextKey KeyAt(uint32_t i) const {
    if (text_[i] == text::kNoIndex) return text::TextKey{true, value_[i], {}};
    return text::TextKey{false, 0, storage_[text_[i]]};
  }
  uint32_t size() const { return static_cast<uint32_t>(value_.size()); }
  // The sorted IDs (AdoptSorted), as positions (IDs less the base it was given).
  const RankedBits& sorted() const { return sorted_; }
  RankedBits TakeSorted() { return std::move(sorted_); }

  std::vector<uint8_t> owned;
  std::vector<bsp::VertexId> uuid;
  std::vector<uint32_t> part;

 private:
  // The entry of an integer ID among the sorted ones, or text::kNoIndex.
  uint32_t FindSorted(uint64_t value) const {
    if (value < sorted_base_ || !sorted_.Has(value - sorted_base_)) return text::kNoIndex;
    return sorted_.Rank(value - sorted_base_);
  }

  // Entries 0..sorted_.size()-1: these integer IDs, less sorted_base_ (AdoptSorted).
  RankedBits sorted_;
  uint64_t sorted_base_ = 0;
  std::vector<uint32_t> direct_;                  // integer ID -> index, for IDs below its size
  absl::flat_hash_map<uint64_t, uint32_t> ints_;  // the other integer IDs
  absl::flat_hash_map<absl::string_view, uint32_t> texts_;
  std::deque<std::string> storage_;  // a deque: the map's keys point into its strings
  std::vector<uint64_t> value_;
  std::vector<uint32_t> text_;
};

// An append-only array in fixed-size blocks: growing it never copies what it holds nor leaves
// more than one block's slack, which a vector's doubling would. The blocks are mapped from the
// kernel, not taken from malloc, so that they never sit between a round's temporaries in the heap

}  // namespace lockstep::load::partitioned
