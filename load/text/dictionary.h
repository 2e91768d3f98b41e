// The sorted, distinct vertex IDs of a parsed text and the lookup of an ID's index (the whole-graph
// loader's global indexes; a partitioned load's round of IDs). Private to the load library.
#pragma once

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/bsp/graph_input.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"
#include "text/parse.h"

namespace lockstep::load::text {

// The key of an ID in text mode: integers order before text and among themselves numerically.
struct TextKey {
  bool is_int;
  uint64_t value;
  std::string_view text;
  static TextKey Of(std::string_view t) {
    TextKey k{false, 0, t};
    k.is_int = ParseIntegerId(t, k.value);
    return k;
  }
  friend bool operator<(const TextKey& a, const TextKey& b) {
    if (a.is_int != b.is_int) return a.is_int;
    if (a.is_int) return a.value < b.value;
    return a.text < b.text;
  }
  friend bool operator==(const TextKey& a, const TextKey& b) {
    return a.is_int == b.is_int && (a.is_int ? a.value == b.value : a.text == b.text);
  }
};

// The sorted, distinct vertex IDs of a graph and the lookup of an ID's index.
class Dictionary {
 public:
  // Integer IDs: a direct table if the largest ID is small enough, else a sorted array.
  void BuildIntegers(const std::vector<ParsedChunk>& chunks, IdMode mode) {
    if (mode == IdMode::kNarrow) {
      BuildIntegers(chunks, &ParsedChunk::narrow);
    } else {
      BuildIntegers(chunks, &ParsedChunk::wide);
    }
  }
  template <class T>
  void BuildIntegers(const std::vector<ParsedChunk>& chunks, std::vector<T> ParsedChunk::*ids) {
    integer_ = true;
    std::vector<uint64_t> chunk_max(chunks.size(), 0);
    tbb::parallel_for(size_t{0}, chunks.size(), [&](size_t c) {
      T m = 0;
      for (T v : chunks[c].*ids) m = std::max(m, v);
      chunk_max[c] = m;
    });
    uint64_t max_id = 0;
    size_t count = 0;
    for (size_t c = 0; c < chunks.size(); ++c) {
      count += (chunks[c].*ids).size();
      max_id = std::max(max_id, chunk_max[c]);
    }
    if (count == 0) return;
    if (max_id < kNoIndex && max_id <= 8 * count + (1u << 20)) {
      direct_.assign(max_id + 1, kNoIndex);
      tbb::parallel_for(size_t{0}, chunks.size(), [&](size_t c) {
        for (T v : chunks[c].*ids) {
          std::atomic_ref<uint32_t>(direct_[v]).store(0, std::memory_order_relaxed);
        }
      });
      uint32_t next = 0;
      for (uint64_t v = 0; v <= max_id; ++v) {
        if (direct_[v] != kNoIndex) {
          direct_[v] = next++;
          ints_.push_back(v);
        }
      }
      return;
    }
    ints_.reserve(count);
    for (const auto& c : chunks) ints_.insert(ints_.end(), (c.*ids).begin(), (c.*ids).end());
    tbb::parallel_sort(ints_.begin(), ints_.end());
    ints_.erase(std::unique(ints_.begin(), ints_.end()), ints_.end());
  }

  void BuildText(const std::vector<ParsedChunk>& chunks) {
    integer_ = false;
    for (const auto& c : chunks) {
      for (std::string_view t : c.strs) text_.push_back(TextKey::Of(t));
    }
    tbb::parallel_sort(text_.begin(), text_.end());
    text_.erase(std::unique(text_.begin(), text_.end()), text_.end());
  }

  size_t size() const { return integer_ ? ints_.size() : text_.size(); }
  // The i-th ID in ExternalIdLess order.
  TextKey KeyAt(size_t i) const { return integer_ ? TextKey{true, ints_[i], {}} : text_[i]; }

  // A hint that Find(id) comes soon: a direct table is larger than the caches, and IDs come in
  // random order.
  void Prefetch(uint64_t id) const {
    if (id < direct_.size()) __builtin_prefetch(direct_.data() + id);
  }
  uint32_t Find(uint64_t id) const {
    if (!direct_.empty()) return id < direct_.size() ? direct_[id] : kNoIndex;
    auto it = std::lower_bound(ints_.begin(), ints_.end(), id);
    return it != ints_.end() && *it == id ? static_cast<uint32_t>(it - ints_.begin()) : kNoIndex;
  }
  uint32_t Find(std::string_view id) const {
    if (integer_) {
      uint64_t v;
      return ParseIntegerId(id, v) ? Find(v) : kNoIndex;
    }
    const TextKey key = TextKey::Of(id);
    auto it = std::lower_bound(text_.begin(), text_.end(), key);
    return it != text_.end() && *it == key ? static_cast<uint32_t>(it - text_.begin()) : kNoIndex;
  }

  std::vector<std::string> Names() const {
    std::vector<std::string> names(size());
    tbb::parallel_for(size_t{0}, names.size(), [&](size_t i) {
      if (integer_) {
        char buf[24];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, ints_[i]);
        names[i].assign(buf, end);
      } else {
        names[i] = std::string(text_[i].text);
      }
    });
    return names;
  }

 private:
  bool integer_ = true;
  std::vector<uint32_t> direct_;
  std::vector<uint64_t> ints_;
  std::vector<TextKey> text_;
};

}  // namespace lockstep::load::text
