#pragma once

// A stable least-significant-digit radix sort of 64-bit values by their high 32 bits, for lists
// keyed by a vertex number in the high word and carrying another in the low word: a pass per
// 11 bits of the largest key, no comparison.

#include <cstdint>
#include <vector>

namespace lockstep::bsp {

// Sorts `v` by the high 32 bits of each value, keeping the order of equal keys; every key is at
// most `max_key`. `scratch` is reused (its contents are lost).
void SortByHighWord(std::vector<uint64_t>& v, uint32_t max_key, std::vector<uint64_t>& scratch);

}  // namespace lockstep::bsp
