// ExactSum: the sum does not depend on the order or grouping of the additions, it is rounded as
// one IEEE addition would round the exact value, and its encoding round-trips exactly; and the
// floating-point SumAggregator built on it gives bit-identical values however its contributions
// are split over blocks and workers.
#include "lockstep/bsp/exact_sum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lockstep/bsp/aggregator.h"

namespace lockstep::bsp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

uint64_t Bits(double x) { return std::bit_cast<uint64_t>(x); }

double Sum(const std::vector<double>& xs) {
  ExactSum s;
  for (double x : xs) s.Add(x);
  return s.Round<double>();
}

std::string Encoded(const ExactSum& s) {
  std::string out;
  s.Encode(out);
  return out;
}

// Mixed magnitudes and signs: most in a PageRank-like range, some huge, tiny or subnormal, and
// pairs that cancel exactly.
std::vector<double> MixedDoubles(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.5, 1.0);
  std::vector<double> xs;
  while (xs.size() < n) {
    double x = 0;
    switch (rng() % 8) {
      case 0:
        x = std::ldexp(unit(rng), static_cast<int>(rng() % 2000) - 1000);
        break;
      case 1:
        x = std::bit_cast<double>(rng() % (uint64_t{1} << 52));  // subnormal
        break;
      case 2:
        x = std::ldexp(unit(rng), 1000 - static_cast<int>(rng() % 8));
        break;
      default:
        x = std::ldexp(unit(rng), -static_cast<int>(rng() % 60));
    }
    if (rng() % 2) x = -x;
    xs.push_back(x);
    if (rng() % 16 == 0) xs.push_back(-x);
  }
  return xs;
}

TEST(ExactSumTest, OrderAndGroupingDoNotMatter) {
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    SCOPED_TRACE(seed);
    std::vector<double> xs = MixedDoubles(seed, 3000);
    ExactSum reference;
    for (double x : xs) reference.Add(x);
    const double expected = reference.Round<double>();
    const std::string expected_bytes = Encoded(reference);
    std::mt19937_64 rng(seed * 7919);
    for (int trial = 0; trial < 50; ++trial) {
      std::shuffle(xs.begin(), xs.end(), rng);
      // Random groups, summed apart and merged in a random order, some through the encoding.
      const size_t groups = 1 + rng() % 12;
      std::vector<ExactSum> partial(groups);
      for (double x : xs) partial[rng() % groups].Add(x);
      std::shuffle(partial.begin(), partial.end(), rng);
      ExactSum total;
      for (const ExactSum& p : partial) {
        if (rng() % 2) {
          const std::string bytes = Encoded(p);
          std::string_view in = bytes;
          ExactSum decoded;
          ASSERT_TRUE(decoded.Decode(in));
          ASSERT_TRUE(in.empty());
          total.Add(decoded);
        } else {
          total.Add(p);
        }
      }
      ASSERT_EQ(Bits(total.Round<double>()), Bits(expected)) << "trial " << trial;
      ASSERT_TRUE(total == reference);
      ASSERT_EQ(Encoded(total), expected_bytes);
    }
    // Plain double addition does depend on the order here, which is the point.
    double naive_forward = 0, naive_backward = 0;
    for (double x : xs) naive_forward += x;
    for (auto it = xs.rbegin(); it != xs.rend(); ++it) naive_backward += *it;
    EXPECT_NE(Bits(naive_forward), Bits(naive_backward));
  }
}

// IEEE addition of two numbers is correctly rounded, so it is an oracle for the rounding; and the
// rounding error of a + b is a double (TwoSum), which the exact sum must find exactly.
TEST(ExactSumTest, RoundsAsOneIeeeAdditionDoes) {
  std::vector<double> xs = MixedDoubles(11, 4000);
  xs.insert(xs.end(), {0.0, -0.0, 1.0, -1.0, std::numeric_limits<double>::max(),
                       -std::numeric_limits<double>::max(), std::numeric_limits<double>::min(),
                       std::numeric_limits<double>::denorm_min(), 1e16, 3.0, 0.1, 0.2, 0.3});
  std::mt19937_64 rng(12);
  for (int i = 0; i < 200000; ++i) {
    const double a = xs[rng() % xs.size()], b = xs[rng() % xs.size()];
    const double s = a + b;
    const double exact = Sum({a, b});
    ASSERT_TRUE(Bits(exact) == Bits(s) || (s == 0 && exact == 0)) << a << " + " << b;
    if (std::isinf(s)) continue;
    const double bb = s - a;
    const double err = (a - (s - bb)) + (b - bb);  // Knuth's TwoSum: a + b = s + err exactly
    ASSERT_EQ(Sum({a, b, -s}), err) << a << " + " << b;
  }
  // Floats round in float, not through a double.
  std::mt19937 frng(13);
  std::uniform_real_distribution<float> f(-1000.0f, 1000.0f);
  for (int i = 0; i < 100000; ++i) {
    const float a = f(frng) * std::ldexp(1.0f, static_cast<int>(frng() % 200) - 100);
    const float b = f(frng);
    ExactSum s;
    s.Add(a);
    s.Add(b);
    ASSERT_EQ(std::bit_cast<uint32_t>(s.Round<float>()), std::bit_cast<uint32_t>(a + b))
        << a << " + " << b;
  }
}

TEST(ExactSumTest, NoIntermediateRoundingOrOverflow) {
  EXPECT_EQ(Sum({1e16, 1.0, -1e16}), 1.0);
  const double max = std::numeric_limits<double>::max();
  EXPECT_EQ(Sum({max, max, -max}), max);
  EXPECT_EQ(Sum({max, max}), kInf);
  EXPECT_EQ(Sum({-max, -max}), -kInf);
  EXPECT_EQ(Sum({0.1, 0.2, -0.3}), 0x1p-55);  // the exact value; (0.1 + 0.2) - 0.3 is 0x1p-54
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(Sum({tiny, tiny, tiny}), 3 * tiny);
  EXPECT_EQ(Sum({1.0, tiny, -1.0}), tiny);
  // Ties go to even: 2^53 + 1 is halfway between 2^53 and 2^53 + 2.
  EXPECT_EQ(Sum({0x1p53, 1.0}), 0x1p53);
  EXPECT_EQ(Sum({0x1p53, 1.0, tiny}), 0x1p53 + 2);
  EXPECT_EQ(Sum({0x1p53 + 2, 1.0}), 0x1p53 + 4);
  // An exact zero is +0, whatever the signs of the zeros added.
  EXPECT_EQ(Bits(Sum({-0.0, -0.0})), Bits(0.0));
  EXPECT_EQ(Bits(Sum({})), Bits(0.0));
}

TEST(ExactSumTest, InfinitiesAndNans) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(Sum({1.0, kInf, 5.0}), kInf);
  EXPECT_EQ(Sum({1.0, -kInf, -kInf}), -kInf);
  EXPECT_TRUE(std::isnan(Sum({kInf, -kInf})));
  EXPECT_TRUE(std::isnan(Sum({1.0, nan})));
  ExactSum s(kInf), t(-kInf);
  const std::string bytes = Encoded(s);
  std::string_view in = bytes;
  ExactSum decoded;
  ASSERT_TRUE(decoded.Decode(in));
  EXPECT_EQ(decoded.Round<double>(), kInf);
  decoded.Add(t);
  EXPECT_TRUE(std::isnan(decoded.Round<double>()));
}

// Billions of additions would take seconds; merging an accumulator into itself doubles its
// pending count, which reaches the normalisation threshold after a few dozen merges.
TEST(ExactSumTest, StaysExactPastTheCarryThreshold) {
  for (double x : {0x1.fffffffffffffp+0, -0x1.fffffffffffffp-700, 0x1.8p+900 / 0x1p60}) {
    SCOPED_TRACE(x);
    ExactSum s;
    for (int i = 0; i < 4096; ++i) s.Add(x);
    for (int k = 0; k < 40; ++k) {
      const ExactSum copy = s;
      s.Add(copy);
    }
    EXPECT_EQ(s.Round<double>(), x * 0x1p12 * 0x1p40);
    s.Add(-x * 0x1p12 * 0x1p40);
    EXPECT_EQ(Bits(s.Round<double>()), Bits(0.0));
  }
}

TEST(ExactSumTest, EncodingIsCanonicalAndDecodingStrict) {
  ExactSum a, b;
  for (double x : {1.5, -0.25, 1e-300, 7e200}) a.Add(x);
  for (double x : {7e200, 1e-300, 1.0, 0.25}) b.Add(x);
  EXPECT_EQ(Encoded(a), Encoded(b));
  EXPECT_EQ(Encoded(ExactSum()), Encoded(ExactSum(-0.0)));
  for (double x : {0.0, 1.0, -1.0, -3e-310, 1e300, -kInf}) {
    const std::string bytes = Encoded(ExactSum(x));
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      std::string_view in(bytes.data(), cut);
      ExactSum untouched(42.0);
      EXPECT_FALSE(untouched.Decode(in)) << x << " cut at " << cut;
      EXPECT_EQ(untouched.Round<double>(), 42.0);
    }
    std::string_view in = bytes;
    ExactSum back;
    ASSERT_TRUE(back.Decode(in));
    EXPECT_TRUE(back == ExactSum(x));
  }
  const std::string one = Encoded(ExactSum(1.0));
  std::string bad = one;
  bad[0] = 4;  // an unknown flag
  std::string_view in = bad;
  ExactSum x;
  EXPECT_FALSE(x.Decode(in));
  bad = one;
  bad[1] = ExactSum::kDigits;  // digits beyond the accumulator
  in = bad;
  EXPECT_FALSE(x.Decode(in));
  bad = one + std::string(4, '\0');  // a zero top digit: not canonical
  bad[2] = 2;
  in = bad;
  EXPECT_FALSE(x.Decode(in));
}

// The aggregator: the same contributions split over any blocks, and over workers whose encoded
// deltas a master merges in any order, give the same bits as one block.
TEST(ExactSumAggregatorTest, SameBitsForAnySplitOverBlocksAndWorkers) {
  const std::vector<double> xs = MixedDoubles(21, 5000);
  SumAggregator<double> one("s");
  one.PrepareSlots(1);
  for (double x : xs) one.AggregateIn(0, x);
  one.Set(0.5);
  one.MergeStep();
  const double expected = one.Get();
  std::vector<double> with_start = xs;
  with_start.push_back(0.5);
  EXPECT_EQ(Bits(expected), Bits(Sum(with_start)));
  std::string expected_value;
  one.EncodeValue(expected_value);
  std::mt19937_64 rng(22);
  for (int trial = 0; trial < 20; ++trial) {
    const size_t workers = 1 + rng() % 4;
    std::vector<std::unique_ptr<SumAggregator<double>>> w;
    std::vector<size_t> blocks;
    for (size_t i = 0; i < workers; ++i) {
      w.push_back(std::make_unique<SumAggregator<double>>("s"));
      blocks.push_back(1 + rng() % 8);
      w.back()->PrepareSlots(blocks.back());
    }
    for (double x : xs) {
      const size_t i = rng() % workers;
      w[i]->AggregateIn(rng() % blocks[i], x);
    }
    SumAggregator<double> master("s");
    master.Set(0.5);
    std::vector<size_t> order(workers);
    for (size_t i = 0; i < workers; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) {
      w[i]->MergeStep();
      std::string delta;
      w[i]->EncodeDelta(delta);
      ASSERT_TRUE(master.MergeEncodedDelta(delta).ok());
    }
    ASSERT_EQ(Bits(master.Get()), Bits(expected)) << "trial " << trial;
    std::string value;
    master.EncodeValue(value);
    ASSERT_EQ(value, expected_value);
    ASSERT_TRUE(w[0]->SetEncodedValue(value).ok());
    ASSERT_EQ(Bits(w[0]->Get()), Bits(expected));
  }
}

}  // namespace
}  // namespace lockstep::bsp
