#include "lockstep/apps/common/most_frequent.h"

#include <algorithm>

namespace lockstep::apps::common {

uint32_t MostFrequentSorted(const std::vector<uint32_t>& labels) {
  uint32_t best = labels[0];
  size_t best_count = 0;
  for (size_t i = 0; i < labels.size();) {
    size_t j = i;
    while (j < labels.size() && labels[j] == labels[i]) ++j;
    if (j - i > best_count) {  // strictly more: ties keep the smaller label seen first
      best = labels[i];
      best_count = j - i;
    }
    i = j;
  }
  return best;
}

uint32_t MostFrequent(std::vector<uint32_t>& labels) {
  // Long lists (a hub's) by a radix sort on the bytes the labels use: the comparison sort of
  // every vertex's labels was a third of a run.
  constexpr size_t kRadix = 256;
  if (labels.size() < kRadix) {
    std::sort(labels.begin(), labels.end());
    return MostFrequentSorted(labels);
  }
  thread_local std::vector<uint32_t> other;
  other.resize(labels.size());
  const uint32_t top = *std::max_element(labels.begin(), labels.end());
  for (uint32_t shift = 0; shift < 32 && (top >> shift) != 0; shift += 8) {
    size_t count[kRadix + 1] = {};
    for (uint32_t l : labels) ++count[((l >> shift) & 0xff) + 1];
    for (size_t d = 1; d <= kRadix; ++d) count[d] += count[d - 1];
    for (uint32_t l : labels) other[count[(l >> shift) & 0xff]++] = l;
    labels.swap(other);
  }
  return MostFrequentSorted(labels);
}

}  // namespace lockstep::apps::common
