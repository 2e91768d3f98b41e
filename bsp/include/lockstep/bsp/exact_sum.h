#pragma once

// The exact sum of floating-point numbers, rounded once at the end, so that the result does not
// depend on the order or grouping of the additions: the same on one thread or many, in one
// process or across workers that merge their partial sums on a master.
//
// A "long accumulator" (Kulisch; see also Neal, "Fast exact summation using small and large
// superaccumulators", 2015): every finite double is an integer multiple of 2^-1074 below 2^1024,
// so a fixed-point number of 2176 bits, whose lowest bit weighs 2^-1074, holds any sum of up to
// 2^64 doubles exactly. It is kept as 68 signed 64-bit digits of 32 bits each: adding a double
// adds its 53-bit significand into the two or three digits it covers, with no carry propagation;
// the digits are normalised (carries pushed up) before they could overflow, which takes 2^30
// additions. Infinities and NaNs are counted apart; the result follows IEEE 754 (NaN if any NaN
// or infinities of both signs, else the infinity). Rounding is to nearest, ties to even, as a
// single IEEE addition would round the exact value; an exact zero is +0.
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/bsp/codec.h"

namespace lockstep::bsp {

class ExactSum {
 public:
  static constexpr int kDigitBits = 32;
  static constexpr int kDigits = 68;

  ExactSum() = default;
  explicit ExactSum(double x) { Add(x); }

  // The hot path: a few integer operations, no branch on the running sum.
  void Add(double x) {
    const uint64_t bits = std::bit_cast<uint64_t>(x);
    const uint32_t biased = static_cast<uint32_t>(bits >> 52) & 0x7ff;
    uint64_t significand = bits & ((uint64_t{1} << 52) - 1);
    if (biased == 0x7ff) [[unlikely]] {
      AddSpecial(bits);
      return;
    }
    // A normal number is (2^52 + fraction) * 2^(biased - 1075); a subnormal one is
    // fraction * 2^-1074. Bit `position` of the accumulator weighs 2^(position - 1074).
    uint32_t position = 0;
    if (biased != 0) [[likely]] {
      significand |= uint64_t{1} << 52;
      position = biased - 1;
    }
    const uint32_t shift = position % kDigitBits;
    // significand << shift spans at most 85 bits: three digits. One base pointer rather than
    // three indexes keeps this inlined into compute loops without spilling registers.
    int64_t* d = digits_ + position / kDigitBits;
    const int64_t d0 = static_cast<int64_t>((significand << shift) & 0xffffffffu);
    const uint64_t high = significand >> (kDigitBits - shift);
    const int64_t d1 = static_cast<int64_t>(high & 0xffffffffu);
    const int64_t d2 = static_cast<int64_t>(high >> 32);
    if (bits >> 63) {
      d[0] -= d0;
      d[1] -= d1;
      d[2] -= d2;
    } else {
      d[0] += d0;
      d[1] += d1;
      d[2] += d2;
    }
    if (++pending_ >= kMaxPending) [[unlikely]]
      Normalize();
  }
  void Add(float x) { Add(static_cast<double>(x)); }  // exact: every float is a double

  // Adds another accumulator (exactly).
  void Add(const ExactSum& other);

  // The exact sum rounded to nearest (ties to even) in F: float or double.
  template <class F>
  F Round() const;

  bool operator==(const ExactSum& other) const;

  // A canonical encoding: equal sums encode to equal bytes, whatever the additions were.
  void Encode(std::string& out) const;
  // Consumes one encoding from the front of `in`; false (and *this unchanged) if malformed.
  bool Decode(std::string_view& in);

 private:
  // Digits start below 2^32 in magnitude after a normalisation and each addition adds less than
  // 2^32, so 2^30 additions stay far from 2^63.
  static constexpr uint32_t kMaxPending = uint32_t{1} << 30;

  void AddSpecial(uint64_t bits);
  // Pushes carries up so that digits 0..kDigits-2 are in [0, 2^32) and the last holds the sign:
  // the canonical form of the value.
  void Normalize();
  // The canonical digits of |sum| (all non-negative) and the sum's sign.
  void Magnitude(int64_t (&digits)[kDigits], bool& negative) const;

  int64_t digits_[kDigits] = {};
  uint32_t pending_ = 0;  // additions since the last normalisation
  uint64_t positive_infinities_ = 0;
  uint64_t negative_infinities_ = 0;
  uint64_t nans_ = 0;
};

extern template float ExactSum::Round<float>() const;
extern template double ExactSum::Round<double>() const;

template <>
struct Codec<ExactSum> {
  static void Encode(const ExactSum& value, std::string& out) { value.Encode(out); }
  static bool Decode(std::string_view& in, ExactSum& value) { return value.Decode(in); }
};

}  // namespace lockstep::bsp
