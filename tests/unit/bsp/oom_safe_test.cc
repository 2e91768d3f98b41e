// GrowOrAbandon (lockstep/bsp/oom_safe.h): a hash map whose growth runs out of memory is left
// empty and safe to destroy, so that a job that runs out of memory fails instead of aborting.
#include "lockstep/bsp/oom_safe.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"

namespace lockstep::bsp {
namespace {

// An allocator that throws std::bad_alloc once `left` allocations have been made, and keeps what
// is live in `live`, so that a test can free what GrowOrAbandon abandons (LeakSanitizer runs the
// unit tests). Default-constructed: no limit, nothing kept.
struct Budget {
  int left = 0;
  std::set<void*> live;
  ~Budget() {
    for (void* p : live) ::operator delete(p);
  }
};

template <class T>
struct Budgeted {
  using value_type = T;
  Budget* budget = nullptr;
  Budgeted() = default;
  explicit Budgeted(Budget* b) : budget(b) {}
  template <class U>
  Budgeted(const Budgeted<U>& o) : budget(o.budget) {}  // NOLINT: allocators convert implicitly
  T* allocate(size_t n) {
    if (budget != nullptr && budget->left-- <= 0) throw std::bad_alloc();
    void* p = ::operator new(n * sizeof(T));
    if (budget != nullptr) budget->live.insert(p);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) {
    if (budget != nullptr) budget->live.erase(p);
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const Budgeted<U>& o) const {
    return budget == o.budget;
  }
};

// A value with a destructor of its own: destroying a broken map would destroy slots it lacks.
struct Value {
  uint64_t v = 0;
  ~Value() { v = 0; }
};

using Map = absl::flat_hash_map<uint64_t, Value, absl::Hash<uint64_t>, std::equal_to<uint64_t>,
                                Budgeted<std::pair<const uint64_t, Value>>>;

TEST(OomSafeTest, AnEmptyMapWhoseFirstTableCannotBeAllocatedIsLeftEmpty) {
  Budget budget;  // declared first: it frees what the map abandons after the map is gone
  {
    Map m(0, Map::hasher(), Map::key_equal(), Map::allocator_type(&budget));
    EXPECT_THROW(GrowOrAbandon(m, [&] { return m.emplace(1, Value{1}); }), std::bad_alloc);
    EXPECT_TRUE(m.empty());
    EXPECT_EQ(m.find(1), m.end());
  }  // abseil 20220623 would free a static array here without GrowOrAbandon
}

TEST(OomSafeTest, AFullMapThatCannotGrowIsLeftEmptyAndUsable) {
  Budget budget;
  budget.left = 5;  // tables: the map grows 5 times, then its next table cannot be allocated
  Map m(0, Map::hasher(), Map::key_equal(), Map::allocator_type(&budget));
  uint64_t k = 0;
  const Value value{7};
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
