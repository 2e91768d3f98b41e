// GrowOrAbandon (lockstep/bsp/oom_safe.h): a hash map whose growth runs out of memory is left
// empty and safe to destroy, so that a job that runs out of memory fails instead of aborting.
#include "lockstep/bsp/oom_safe.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"

namespace lockstep::bsp {
namespace {

// std::allocator that throws std::bad_alloc once `left` allocations have been made (no limit
// without a counter).
template <class T>
struct Budgeted {
  using value_type = T;
  int* left = nullptr;
  Budgeted() = default;
  explicit Budgeted(int* l) : left(l) {}
  template <class U>
  Budgeted(const Budgeted<U>& o) : left(o.left) {}  // NOLINT: allocators convert implicitly
  T* allocate(size_t n) {
    if (left != nullptr && (*left)-- <= 0) throw std::bad_alloc();
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) { std::allocator<T>().deallocate(p, n); }
  template <class U>
  bool operator==(const Budgeted<U>& o) const {
    return left == o.left;
  }
};

using Map =
    absl::flat_hash_map<uint64_t, std::string, absl::Hash<uint64_t>, std::equal_to<uint64_t>,
                        Budgeted<std::pair<const uint64_t, std::string>>>;

TEST(OomSafeTest, AnEmptyMapWhoseFirstTableCannotBeAllocatedIsLeftEmpty) {
  int left = 0;
  {
    Map m(0, Map::hasher(), Map::key_equal(), Map::allocator_type(&left));
    EXPECT_THROW(GrowOrAbandon(m, [&] { return m.emplace(1, "one"); }), std::bad_alloc);
    EXPECT_TRUE(m.empty());
    EXPECT_EQ(m.find(1), m.end());
  }  // abseil 20220623 would free a static array here without GrowOrAbandon
}

TEST(OomSafeTest, AFullMapThatCannotGrowIsLeftEmptyAndUsable) {
  int left = 5;  // tables: the map grows 5 times, then its next table cannot be allocated
  Map m(0, Map::hasher(), Map::key_equal(), Map::allocator_type(&left));
  uint64_t k = 0;
  // Values that own memory: destroying the broken map would destroy slots it does not hold.
  const std::string value(40, 'v');
  EXPECT_THROW(
      for (;; ++k) { GrowOrAbandon(m, [&] { return m.emplace(k, value); }); }, std::bad_alloc);
  EXPECT_GT(k, 0u);
  EXPECT_TRUE(m.empty());
  // What is left is a map, with the default allocator's unlimited budget.
  for (uint64_t i = 0; i < 100; ++i) m.emplace(i, value);
  EXPECT_EQ(m.size(), 100u);
}

TEST(OomSafeTest, WhatTheGrowthReturnsIsPassedOn) {
  absl::flat_hash_map<int, int> m;
  auto [it, inserted] = GrowOrAbandon(m, [&] { return m.emplace(7, 8); });
  EXPECT_TRUE(inserted);
  EXPECT_EQ(it->second, 8);
  GrowOrAbandon(m, [&] { m.reserve(100); });
  EXPECT_EQ(m.at(7), 8);
}

}  // namespace
}  // namespace lockstep::bsp
