#include "lockstep/bsp/exact_sum.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace lockstep::bsp {
namespace {

constexpr int kDigits = ExactSum::kDigits;
constexpr int kDigitBits = ExactSum::kDigitBits;
constexpr int64_t kDigitMask = 0xffffffff;
// Bit i of the accumulator weighs 2^(i - kLsbExponent).
constexpr int kLsbExponent = 1074;

// Carries up: digits 0..kDigits-2 end in [0, 2^32), the last keeps the sign (C++20 shifts are
// arithmetic and integers two's complement).
void Carry(int64_t (&digits)[kDigits]) {
  int64_t carry = 0;
  for (int i = 0; i + 1 < kDigits; ++i) {
    const int64_t d = digits[i] + carry;
    carry = d >> kDigitBits;
    digits[i] = d & kDigitMask;
  }
  digits[kDigits - 1] += carry;
}

bool Bit(const int64_t (&digits)[kDigits], int i) {
  return (digits[i / kDigitBits] >> (i % kDigitBits)) & 1;
}

// Whether any of bits 0..n-1 is set.
bool AnyBelow(const int64_t (&digits)[kDigits], int n) {
  const int full = n / kDigitBits;
  for (int i = 0; i < full; ++i) {
    if (digits[i] != 0) return true;
  }
  const int rest = n % kDigitBits;
  return rest != 0 && (digits[full] & ((int64_t{1} << rest) - 1)) != 0;
}

}  // namespace

void ExactSum::AddSpecial(uint64_t bits) {
  if ((bits & ((uint64_t{1} << 52) - 1)) != 0) {
    ++nans_;
  } else if (bits >> 63) {
    ++negative_infinities_;
  } else {
    ++positive_infinities_;
  }
}

void ExactSum::Add(const ExactSum& other) {
  // |digit| < 2^32 * (pending + 1) holds for both, hence for the sum with their pendings added.
  if (uint64_t{pending_} + other.pending_ + 1 >= kMaxPending) Normalize();
  for (int i = 0; i < kDigits; ++i) digits_[i] += other.digits_[i];
  pending_ += other.pending_ + 1;
  if (pending_ >= kMaxPending) Normalize();
  positive_infinities_ += other.positive_infinities_;
  negative_infinities_ += other.negative_infinities_;
  nans_ += other.nans_;
}

void ExactSum::Normalize() {
  Carry(digits_);
  pending_ = 0;
}

void ExactSum::Magnitude(int64_t (&digits)[kDigits], bool& negative) const {
  std::copy(std::begin(digits_), std::end(digits_), std::begin(digits));
  Carry(digits);
  negative = digits[kDigits - 1] < 0;
  if (negative) {
    for (int64_t& d : digits) d = -d;
    Carry(digits);
  }
}

template <class F>
F ExactSum::Round() const {
  static_assert(std::numeric_limits<F>::is_iec559 && std::numeric_limits<F>::radix == 2);
  if (nans_ > 0 || (positive_infinities_ > 0 && negative_infinities_ > 0)) {
    return std::numeric_limits<F>::quiet_NaN();
  }
  if (positive_infinities_ > 0) return std::numeric_limits<F>::infinity();
  if (negative_infinities_ > 0) return -std::numeric_limits<F>::infinity();

  int64_t mag[kDigits];
  bool negative = false;
  Magnitude(mag, negative);
  const F sign = negative ? F(-1) : F(1);
  // The top digit weighs 2^(67 * 32 - 1074) = 2^1070: anything there is beyond any F.
  if (mag[kDigits - 1] != 0) return sign * std::numeric_limits<F>::infinity();
  int top = kDigits - 2;
  while (top >= 0 && mag[top] == 0) --top;
  if (top < 0) return F(0);
  const int high = top * kDigitBits + std::bit_width(static_cast<uint64_t>(mag[top])) - 1;

  // P significant bits from the highest set bit, but no lower than F's smallest subnormal.
  constexpr int kPrecision = std::numeric_limits<F>::digits;
  constexpr int kMinLsb = std::numeric_limits<F>::min_exponent - kPrecision + kLsbExponent;
  static_assert(kMinLsb >= 0, "F's subnormals are finer than a double's");
  const int lsb = std::max(high - kPrecision + 1, kMinLsb);
  uint64_t significand = 0;
  for (int i = high; i >= lsb; --i) significand = (significand << 1) | (Bit(mag, i) ? 1 : 0);
  const bool round = lsb >= 1 && lsb - 1 <= high && Bit(mag, lsb - 1);
  const bool sticky = lsb >= 2 && AnyBelow(mag, std::min(lsb - 1, high + 1));
  if (round && (sticky || (significand & 1))) ++significand;  // may carry to 2^P: still exact
  // significand < 2^P + 1 converts exactly; ldexp overflows to infinity as rounding should.
  return sign * std::ldexp(static_cast<F>(significand), lsb - kLsbExponent);
}

template float ExactSum::Round<float>() const;
template double ExactSum::Round<double>() const;

bool ExactSum::operator==(const ExactSum& other) const {
  int64_t a[kDigits], b[kDigits];
  std::copy(std::begin(digits_), std::end(digits_), std::begin(a));
  std::copy(std::begin(other.digits_), std::end(other.digits_), std::begin(b));
  Carry(a);
  Carry(b);
  return std::equal(std::begin(a), std::end(a), std::begin(b)) &&
         positive_infinities_ == other.positive_infinities_ &&
         negative_infinities_ == other.negative_infinities_ && nans_ == other.nans_;
}

// Encoding: a flags byte (1: negative, 2: infinities or NaNs follow as three 64-bit counts), then
// the magnitude's nonzero digits: the index of the lowest, their count (a byte each) and the
// digits as 32-bit values. Only the canonical form decodes.
namespace {
constexpr uint8_t kNegative = 1;
constexpr uint8_t kSpecials = 2;
}  // namespace

void ExactSum::Encode(std::string& out) const {
  int64_t mag[kDigits];
  bool negative = false;
  Magnitude(mag, negative);
  int lo = 0, hi = kDigits;
  while (lo < hi && mag[lo] == 0) ++lo;
  while (hi > lo && mag[hi - 1] == 0) --hi;
  const bool specials = positive_infinities_ + negative_infinities_ + nans_ > 0;
  const uint8_t flags =
      static_cast<uint8_t>((negative ? kNegative : 0) | (specials ? kSpecials : 0));
  Codec<uint8_t>::Encode(flags, out);
  if (specials) {
    Codec<uint64_t>::Encode(positive_infinities_, out);
    Codec<uint64_t>::Encode(negative_infinities_, out);
    Codec<uint64_t>::Encode(nans_, out);
  }
  Codec<uint8_t>::Encode(static_cast<uint8_t>(lo == hi ? 0 : lo), out);
  Codec<uint8_t>::Encode(static_cast<uint8_t>(hi - lo), out);
  for (int i = lo; i < hi; ++i) Codec<uint32_t>::Encode(static_cast<uint32_t>(mag[i]), out);
}

bool ExactSum::Decode(std::string_view& in) {
  std::string_view rest = in;
  ExactSum x;
  uint8_t flags = 0, lo = 0, count = 0;
  if (!Codec<uint8_t>::Decode(rest, flags) || (flags & ~(kNegative | kSpecials)) != 0) return false;
  if (flags & kSpecials) {
    if (!Codec<uint64_t>::Decode(rest, x.positive_infinities_) ||
        !Codec<uint64_t>::Decode(rest, x.negative_infinities_) ||
        !Codec<uint64_t>::Decode(rest, x.nans_) ||
        x.positive_infinities_ + x.negative_infinities_ + x.nans_ == 0) {
      return false;
    }
  }
  if (!Codec<uint8_t>::Decode(rest, lo) || !Codec<uint8_t>::Decode(rest, count)) return false;
  if (lo + count > kDigits || (count == 0 && (lo != 0 || (flags & kNegative)))) return false;
  for (int i = lo; i < lo + count; ++i) {
    uint32_t d = 0;
    if (!Codec<uint32_t>::Decode(rest, d)) return false;
    if (d == 0 && (i == lo || i == lo + count - 1)) return false;  // not canonical
    x.digits_[i] = (flags & kNegative) ? -int64_t{d} : int64_t{d};
  }
  *this = x;
  in = rest;
  return true;
}

}  // namespace lockstep::bsp
