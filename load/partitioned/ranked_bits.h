// Sets of integers as bitmaps with ranks, which the raw-ID fast path of a partitioned load
// (docs/design.md §4) numbers IDs by. Private to the load library.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace lockstep::load::partitioned {

#if defined(__x86_64__) && !defined(__POPCNT__)
// Whether the CPU has the popcnt instruction (every x86-64 since 2008; the build targets the
// baseline, which lacks it).
inline const bool kCpuPopcnt = [] {
  __builtin_cpu_init();  // (before main)
  return __builtin_cpu_supports("popcnt") != 0;
}();
#endif

// The bits set in x, inline: without -mpopcnt, std::popcount is a call into libgcc, which the
// rank lookup of every received edge end would pay; the instruction where the CPU has it (a
// branch the same way every time), else by arithmetic.
inline uint32_t Popcount(uint64_t x) {
#if defined(__POPCNT__)
  return static_cast<uint32_t>(__builtin_popcountll(x));
#else
#if defined(__x86_64__)
  if (kCpuPopcnt) {
    uint64_t bits;
    asm("popcntq %1, %0" : "=r"(bits) : "rm"(x));
    return static_cast<uint32_t>(bits);
  }
#endif
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<uint32_t>((x * 0x0101010101010101ull) >> 56);
#endif
}

// A set of integers below a bound, as a bitmap with the count of members before each 64-bit word:
// membership and rank (the members below a value) at the cost of two reads, from 3/16 of a byte
// per integer below the bound (192 KiB for 2^20: in L2).
class RankedBits {
 public:
  RankedBits() = default;
  explicit RankedBits(std::vector<uint64_t> words)
      : words_(std::move(words)), before_(words_.size() + 1) {
    uint32_t n = 0;
    for (size_t i = 0; i < words_.size(); ++i) {
      before_[i] = n;
      n += Popcount(words_[i]);
    }
    before_[words_.size()] = n;
  }
  uint64_t limit() const { return uint64_t{words_.size()} * 64; }
  uint32_t size() const { return before_.empty() ? 0 : before_.back(); }
  bool Has(uint64_t v) const { return v < limit() && ((words_[v >> 6] >> (v & 63)) & 1) != 0; }
  // The members below v (v < limit()).
  uint32_t Rank(uint64_t v) const { return view().Rank(v); }
  // The members before word w.
  uint32_t Before(size_t w) const { return before_[w]; }
  // The word that holds the member of rank k (k < size()).
  size_t WordOfRank(uint64_t k) const {
    return static_cast<size_t>(std::upper_bound(before_.begin(), before_.end(), k) -
                               before_.begin()) -
           1;
  }
  uint64_t Bits(size_t w) const { return words_[w]; }
  const std::vector<uint64_t>& words() const { return words_; }
  // Has and Rank of members below limit(), through pointers a loop keeps in registers (a write
  // through char* in the loop would make it reload a vector's).
  struct View {
    const uint64_t* words;
    const uint32_t* before;
    bool Has(uint64_t v) const { return ((words[v >> 6] >> (v & 63)) & 1) != 0; }
    uint32_t Rank(uint64_t v) const {
      return before[v >> 6] + Popcount(words[v >> 6] & ((uint64_t{1} << (v & 63)) - 1));
    }
  };
  View view() const { return View{words_.data(), before_.data()}; }

 private:
  std::vector<uint64_t> words_;
  std::vector<uint32_t> before_;
};

}  // namespace lockstep::load::partitioned
