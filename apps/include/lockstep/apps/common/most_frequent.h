#pragma once

#include <cstdint>
#include <vector>

namespace lockstep::apps::common {

// The most frequent label, ties to the smallest; `labels` (not empty) is reordered. CDLP's
// per-vertex choice, and WCC's guess of the largest component from a sample of roots.
uint32_t MostFrequent(std::vector<uint32_t>& labels);
// The same of sorted `labels` (not empty).
uint32_t MostFrequentSorted(const std::vector<uint32_t>& labels);

}  // namespace lockstep::apps::common
