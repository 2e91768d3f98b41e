// SortByHighWord: the order std::stable_sort gives by the high 32 bits, whatever the largest key
// (one pass of 11 bits, several, none), equal keys keeping their order.
#include "lockstep/bsp/radix_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace lockstep::bsp {
namespace {

std::vector<uint64_t> Random(size_t n, uint32_t max_key, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> key(0, max_key);
  std::vector<uint64_t> v(n);
  // The low word numbers the values, so that a reordering of equal keys shows.
  for (size_t i = 0; i < n; ++i) v[i] = uint64_t{key(rng)} << 32 | i;
  return v;
}

TEST(SortByHighWordTest, MatchesAStableSortByTheHighWord) {
  for (uint32_t max_key : {0u, 1u, 7u, 2047u, 2048u, (1u << 20) - 1, 1u << 22, ~0u}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{1000}, size_t{100000}}) {
      auto v = Random(n, max_key, max_key ^ n);
      auto expected = v;
      std::stable_sort(expected.begin(), expected.end(),
                       [](uint64_t a, uint64_t b) { return a >> 32 < b >> 32; });
      std::vector<uint64_t> scratch{42, 43};
      SortByHighWord(v, max_key, scratch);
      ASSERT_EQ(v, expected) << "max_key " << max_key << ", " << n << " values";
    }
  }
}

TEST(SortByHighWordTest, KeysAtTheLimitOfEachPass) {
  // Keys whose bits sit on either side of the 11-bit digits, in descending order.
  std::vector<uint64_t> v;
  for (uint32_t k : {~0u, 1u << 31, 1u << 22, (1u << 22) - 1, 1u << 11, 2047u, 1u, 0u}) {
    v.push_back(uint64_t{k} << 32 | 7);
  }
  std::vector<uint64_t> expected(v.rbegin(), v.rend());
  std::vector<uint64_t> scratch;
  SortByHighWord(v, ~0u, scratch);
  EXPECT_EQ(v, expected);
}

}  // namespace
}  // namespace lockstep::bsp
