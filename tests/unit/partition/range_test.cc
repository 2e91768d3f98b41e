// Tests for lockstep::partition::Range. The fixed vectors come from docs/design.md §9: over the
// whole space lockstep's part starts equal the original framework's split points, and lockstep's
// parts are inclusive, so part p ends one below part p + 1's start.
#include "lockstep/partition/range.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/uuid/string_generator.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace lockstep::partition {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// The tests do their own 128-bit arithmetic so that expectations do not reuse range.cc's helpers.
__extension__ using U128 = unsigned __int128;

U128 ToU128(const Uuid& id) {
  U128 value = 0;
  for (uint8_t byte : id.data) value = (value << 8) | byte;
  return value;
}

Uuid FromU128(U128 value) {
  Uuid id;
  for (int i = 15; i >= 0; --i) {
    id.data[i] = static_cast<uint8_t>(value);
    value >>= 8;
  }
  return id;
}

Uuid U(const std::string& text) { return boost::uuids::string_generator()(text); }

std::string S(const Uuid& id) { return boost::uuids::to_string(id); }

Range MustCreate(const Uuid& first, const Uuid& last, uint64_t n) {
  absl::StatusOr<Range> range = Range::Create(first, last, n);
  EXPECT_TRUE(range.ok()) << range.status();
  return *std::move(range);
}

Range MustWhole(uint64_t n) { return MustCreate(MinUuid(), MaxUuid(), n); }

std::vector<std::string> Starts(const Range& range) {
  std::vector<std::string> starts;
  for (uint64_t p = 0; p < range.size(); ++p) starts.push_back(S(range.Extents(p)->first));
  return starts;
}

std::vector<std::string> Ends(const Range& range) {
  std::vector<std::string> ends;
  for (uint64_t p = 0; p < range.size(); ++p) ends.push_back(S(range.Extents(p)->second));
  return ends;
}

TEST(UuidBoundsTest, MinAndMaxAreAllZeroAndAllOnes) {
  EXPECT_EQ(S(MinUuid()), "00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(S(MaxUuid()), "ffffffff-ffff-ffff-ffff-ffffffffffff");
  EXPECT_LT(MinUuid(), MaxUuid());
}

TEST(UuidBoundsTest, BoostOrderIsNumericOrder) {
  // Range relies on boost's byte-wise operator< agreeing with big-endian numeric order.
  EXPECT_LT(U("00000000-0000-0000-0000-0000000000ff"), U("00000000-0000-0000-0000-000000000100"));
  EXPECT_LT(U("7fffffff-ffff-ffff-ffff-ffffffffffff"), U("80000000-0000-0000-0000-000000000000"));
}

TEST(RangeVectorsTest, WholeSpaceInFourParts) {
  const Range range = MustWhole(4);
  EXPECT_EQ(range.size(), 4u);
  EXPECT_EQ(range.first(), MinUuid());
  EXPECT_EQ(range.last(), MaxUuid());
  EXPECT_EQ(Starts(range),
            (std::vector<std::string>{
                "00000000-0000-0000-0000-000000000000", "40000000-0000-0000-0000-000000000000",
                "80000000-0000-0000-0000-000000000000", "c0000000-0000-0000-0000-000000000000"}));
  EXPECT_EQ(Ends(range),
            (std::vector<std::string>{
                "3fffffff-ffff-ffff-ffff-ffffffffffff", "7fffffff-ffff-ffff-ffff-ffffffffffff",
                "bfffffff-ffff-ffff-ffff-ffffffffffff", "ffffffff-ffff-ffff-ffff-ffffffffffff"}));
}

TEST(RangeVectorsTest, WholeSpaceInThreeParts) {
  const Range range = MustWhole(3);
  EXPECT_EQ(Starts(range), (std::vector<std::string>{"00000000-0000-0000-0000-000000000000",
                                                     "55555555-5555-5555-5555-555555555555",
                                                     "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"}));
  EXPECT_EQ(Ends(range), (std::vector<std::string>{"55555555-5555-5555-5555-555555555554",
                                                   "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa9",
                                                   "ffffffff-ffff-ffff-ffff-ffffffffffff"}));
}

TEST(RangeVectorsTest, WholeSpaceInTwentyParts) {
  const Range range = MustWhole(20);
  ASSERT_EQ(range.size(), 20u);
  const std::vector<std::string> starts = Starts(range);
  EXPECT_EQ(starts[1], "0ccccccc-cccc-cccc-cccc-cccccccccccc");
  EXPECT_EQ(starts[2], "19999999-9999-9999-9999-999999999998");
  EXPECT_EQ(starts[19], "f3333333-3333-3333-3333-333333333324");
  const std::vector<std::string> ends = Ends(range);
  EXPECT_EQ(ends[0], "0ccccccc-cccc-cccc-cccc-cccccccccccb");
  EXPECT_EQ(ends[1], "19999999-9999-9999-9999-999999999997");
  EXPECT_EQ(ends[19], "ffffffff-ffff-ffff-ffff-ffffffffffff");
}

TEST(RangeVectorsTest, WholeSpaceInOneHundredThousandParts) {
  // The original framework could not encode any split for n >= 257 over the whole space.
  const Range range = MustWhole(100000);
  ASSERT_EQ(range.size(), 100000u);
  EXPECT_EQ(S(range.Extents(1)->first), "0000a7c5-ac47-1b47-8423-0fcf80dc3372");
  EXPECT_EQ(S(range.Extents(99999)->first), "ffff583a-53b8-e4b8-7bdc-f0307f239fce");
  EXPECT_EQ(range.Extents(99999)->second, MaxUuid());
}

TEST(RangeVectorsTest, OriginalLookups) {
  const Range range = MustWhole(4);
  EXPECT_EQ(range.PartitionFor(U("00000000-0000-0000-0000-000000000000")).value(), 0u);
  EXPECT_EQ(range.PartitionFor(U("12345678-0000-0000-0000-000000000000")).value(), 0u);
  EXPECT_EQ(range.PartitionFor(U("40000000-0000-0000-0000-000000000000")).value(), 1u);
  EXPECT_EQ(range.PartitionFor(U("ffffffff-ffff-ffff-ffff-fffffffffffe")).value(), 3u);
}

TEST(RangeVectorsTest, MaxUuidBelongsToTheLastPart) {
  // The original put the all-ones id in no part at all.
  for (uint64_t n : {1u, 2u, 3u, 4u, 7u, 20u, 256u, 257u, 100000u}) {
    const Range range = MustWhole(n);
    EXPECT_EQ(range.PartitionFor(MaxUuid()).value(), n - 1) << "n=" << n;
    EXPECT_EQ(range.PartitionForUnchecked(MaxUuid()), n - 1) << "n=" << n;
    EXPECT_EQ(range.PartitionFor(MinUuid()).value(), 0u) << "n=" << n;
  }
}

TEST(RangeOffsetTest, RangeNotStartingAtZeroIsOffsetByItsFirstId) {
  // The original computed splits without adding the start, so these came out wrong.
  const Uuid first = U("11111111-0000-0000-0000-000000000000");
  const Uuid last = U("55555555-0000-0000-0000-000000000000");
  const Range four = MustCreate(first, last, 4);
  EXPECT_EQ(Starts(four),
            (std::vector<std::string>{
                "11111111-0000-0000-0000-000000000000", "22222222-0000-0000-0000-000000000000",
                "33333333-0000-0000-0000-000000000000", "44444444-0000-0000-0000-000000000000"}));
  EXPECT_EQ(Ends(four),
            (std::vector<std::string>{
                "22222221-ffff-ffff-ffff-ffffffffffff", "33333332-ffff-ffff-ffff-ffffffffffff",
                "44444443-ffff-ffff-ffff-ffffffffffff", "55555555-0000-0000-0000-000000000000"}));
  const Range three = MustCreate(first, last, 3);
  EXPECT_EQ(Starts(three), (std::vector<std::string>{"11111111-0000-0000-0000-000000000000",
                                                     "27d27d27-aaaa-aaaa-aaaa-aaaaaaaaaaab",
                                                     "3e93e93e-5555-5555-5555-555555555556"}));
}

TEST(RangeOffsetTest, OriginalOneDimensionalRange) {
  const Uuid first = U("11111111-0000-0000-0000-000000000000");
  const Uuid last = U("55555555-0000-0000-0000-000000000000");
  const Range range = MustCreate(first, last, 1);
  EXPECT_EQ(range.Extents(0).value(), std::make_pair(first, last));
  EXPECT_EQ(range.Extents(1).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(range.PartitionFor(first).value(), 0u);
  EXPECT_EQ(range.PartitionFor(last).value(), 0u);
  EXPECT_EQ(range.PartitionFor(U("11111110-ffff-ffff-ffff-ffffffffffff")).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(range.PartitionFor(U("bead5555-0000-0000-0000-000000000000")).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(range.PartitionFor(U("55555555-0000-0000-0000-000000000001")).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(RangeOffsetTest, UpperHalfInTwoPartsIsNotInverted) {
  // The original made part 0 of this range [80000000…, 40000000…).
  const Range range = MustCreate(U("80000000-0000-0000-0000-000000000000"), MaxUuid(), 2);
  EXPECT_EQ(Starts(range), (std::vector<std::string>{"80000000-0000-0000-0000-000000000000",
                                                     "c0000000-0000-0000-0000-000000000000"}));
  EXPECT_EQ(Ends(range), (std::vector<std::string>{"bfffffff-ffff-ffff-ffff-ffffffffffff",
                                                   "ffffffff-ffff-ffff-ffff-ffffffffffff"}));
  EXPECT_EQ(range.PartitionFor(MaxUuid()).value(), 1u);
}

TEST(RangeSmallTest, LastPartTakesTheRemainder) {
  const Range range = MustCreate(FromU128(10), FromU128(19), 3);  // 10 ids, width 3.
  EXPECT_EQ(range.Extents(0).value(), std::make_pair(FromU128(10), FromU128(12)));
  EXPECT_EQ(range.Extents(1).value(), std::make_pair(FromU128(13), FromU128(15)));
  EXPECT_EQ(range.Extents(2).value(), std::make_pair(FromU128(16), FromU128(19)));
}

TEST(RangeSmallTest, OneIdPerPart) {
  const Range range = MustCreate(FromU128(100), FromU128(104), 5);
  for (uint64_t p = 0; p < 5; ++p) {
    EXPECT_EQ(range.Extents(p).value(), std::make_pair(FromU128(100 + p), FromU128(100 + p)));
    EXPECT_EQ(range.PartitionFor(FromU128(100 + p)).value(), p);
  }
}

TEST(RangeSmallTest, SingleIdRange) {
  // Inclusive bounds make first == last a valid range (the original rejected start >= end).
  const Range range = MustCreate(MaxUuid(), MaxUuid(), 1);
  EXPECT_EQ(range.Extents(0).value(), std::make_pair(MaxUuid(), MaxUuid()));
  EXPECT_EQ(range.PartitionFor(MaxUuid()).value(), 0u);
  EXPECT_EQ(range.PartitionFor(FromU128(~U128{0} - 1)).status().code(),
            absl::StatusCode::kOutOfRange);
}

// Every part is non-empty, the parts tile [first, last] with no gap or overlap, and all parts but
// the last have one width w while the last has w + r with r < n; together these pin
// w = floor(count / n) without recomputing it the way range.cc does.
struct TilingCase {
  std::string name;
  Uuid first;
  Uuid last;
  uint64_t n;
};

// Keeps ctest's test names readable instead of a hex dump of the struct.
void PrintTo(const TilingCase& c, std::ostream* os) { *os << c.name; }

class RangeTilingTest : public ::testing::TestWithParam<TilingCase> {};

TEST_P(RangeTilingTest, PartsAreContiguousAndCoverTheRange) {
  const TilingCase& c = GetParam();
  const Range range = MustCreate(c.first, c.last, c.n);
  ASSERT_EQ(range.size(), c.n);
  EXPECT_EQ(range.first(), c.first);
  EXPECT_EQ(range.last(), c.last);

  const U128 width = ToU128(range.Extents(0)->second) - ToU128(range.Extents(0)->first);  // w - 1
  U128 expected_start = ToU128(c.first);
  for (uint64_t p = 0; p < c.n; ++p) {
    const auto [start, end] = range.Extents(p).value();
    ASSERT_EQ(start, FromU128(expected_start)) << "part " << p;
    ASSERT_LE(start, end) << "part " << p;
    if (p + 1 < c.n) {
      ASSERT_EQ(ToU128(end) - ToU128(start), width) << "part " << p;
    } else {
      ASSERT_EQ(end, c.last);
      // The last part's extra ids are the remainder of count / n, so fewer than n.
      ASSERT_GE(ToU128(end) - ToU128(start), width);
      ASSERT_LT(ToU128(end) - ToU128(start) - width, U128{c.n});
    }
    expected_start = ToU128(end) + 1;  // Wraps to 0 only after MaxUuid, i.e. after the last part.
  }
}

TEST_P(RangeTilingTest, EachPartsBoundsAndNeighboursMapCorrectly) {
  const TilingCase& c = GetParam();
  const Range range = MustCreate(c.first, c.last, c.n);
  for (uint64_t p = 0; p < c.n; ++p) {
    const auto [start, end] = range.Extents(p).value();
    ASSERT_EQ(range.PartitionFor(start).value(), p);
    ASSERT_EQ(range.PartitionFor(end).value(), p);
    ASSERT_EQ(range.PartitionForUnchecked(start), p);
    ASSERT_EQ(range.PartitionForUnchecked(end), p);
    if (start != end) {
      ASSERT_EQ(range.PartitionFor(FromU128(ToU128(start) + 1)).value(), p);
      ASSERT_EQ(range.PartitionFor(FromU128(ToU128(end) - 1)).value(), p);
    }
    const U128 below = ToU128(start) - 1;
    const U128 above = ToU128(end) + 1;
    if (p > 0) {
      ASSERT_EQ(range.PartitionFor(FromU128(below)).value(), p - 1);
    } else if (start != MinUuid()) {
      ASSERT_EQ(range.PartitionFor(FromU128(below)).status().code(), absl::StatusCode::kOutOfRange);
    }
    if (p + 1 < c.n) {
      ASSERT_EQ(range.PartitionFor(FromU128(above)).value(), p + 1);
    } else if (end != MaxUuid()) {
      ASSERT_EQ(range.PartitionFor(FromU128(above)).status().code(), absl::StatusCode::kOutOfRange);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RangeTilingTest,
    ::testing::Values(TilingCase{"Whole1", MinUuid(), MaxUuid(), 1},
                      TilingCase{"Whole2", MinUuid(), MaxUuid(), 2},
                      TilingCase{"Whole3", MinUuid(), MaxUuid(), 3},
                      TilingCase{"Whole7", MinUuid(), MaxUuid(), 7},
                      TilingCase{"Whole257", MinUuid(), MaxUuid(), 257},
                      TilingCase{"Whole100000", MinUuid(), MaxUuid(), 100000},
                      TilingCase{"Original3", U("11111111-0000-0000-0000-000000000000"),
                                 U("55555555-0000-0000-0000-000000000000"), 3},
                      TilingCase{"Original7", U("11111111-0000-0000-0000-000000000000"),
                                 U("55555555-0000-0000-0000-000000000000"), 7},
                      TilingCase{"UpperHalf100000", U("80000000-0000-0000-0000-000000000000"),
                                 MaxUuid(), 100000},
                      TilingCase{"Tiny10By3", FromU128(10), FromU128(19), 3},
                      TilingCase{"ExactlyOneIdEach", FromU128(1000), FromU128(1999), 1000},
                      TilingCase{"TopTen", FromU128(~U128{0} - 9), MaxUuid(), 4}),
    [](const ::testing::TestParamInfo<TilingCase>& param_info) { return param_info.param.name; });

TEST(RangeLookupTest, OneHundredThousandPartsAgreesWithDivision) {
  constexpr uint64_t kParts = 100000;
  const Range range = MustWhole(kParts);
  // Over the whole space part p starts at p*w, so the part is id / w, capped for the remainder.
  const U128 width = ToU128(range.Extents(1)->first);
  ASSERT_EQ(width, (~U128{0}) / kParts);  // 2^128 mod 100000 != 0, so floor((2^128-1)/n) is w.
  std::mt19937_64 rng(20240601);
  for (int i = 0; i < 200000; ++i) {
    const U128 id = (U128{rng()} << 64) | rng();
    const U128 quotient = id / width;
    const uint64_t expected = quotient >= kParts ? kParts - 1 : static_cast<uint64_t>(quotient);
    ASSERT_EQ(range.PartitionForUnchecked(FromU128(id)), expected) << S(FromU128(id));
    ASSERT_EQ(range.PartitionFor(FromU128(id)).value(), expected) << S(FromU128(id));
  }
}

TEST(RangeErrorTest, FirstAfterLast) {
  const absl::StatusOr<Range> range = Range::Create(U("55555555-0000-0000-0000-000000000000"),
                                                    U("11111111-0000-0000-0000-000000000000"), 2);
  ASSERT_EQ(range.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(range.status().message(),
              AllOf(HasSubstr("55555555-0000-0000-0000-000000000000"),
                    HasSubstr("11111111-0000-0000-0000-000000000000"), HasSubstr("greater")));
}

TEST(RangeErrorTest, ZeroParts) {
  const absl::StatusOr<Range> range = Range::Whole(0);
  ASSERT_EQ(range.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(range.status().message(), HasSubstr("at least 1"));
}

TEST(RangeErrorTest, MorePartsThanIds) {
  const absl::StatusOr<Range> range = Range::Create(FromU128(10), FromU128(19), 11);
  ASSERT_EQ(range.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(range.status().message(),
              AllOf(HasSubstr("00000000-0000-0000-0000-00000000000a"),
                    HasSubstr("00000000-0000-0000-0000-000000000013"), HasSubstr("10 ids"),
                    HasSubstr("11 parts"), HasSubstr("each part must hold at least one id")));
  EXPECT_EQ(Range::Create(MaxUuid(), MaxUuid(), 2).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RangeErrorTest, TooManyParts) {
  EXPECT_EQ(Range::Whole(kMaxParts + 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Range::Whole(UINT64_MAX).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RangeErrorTest, PartIndexOutOfRange) {
  const Range range = MustWhole(4);
  for (uint64_t part : {uint64_t{4}, uint64_t{5}, UINT64_MAX}) {
    const absl::StatusOr<std::pair<Uuid, Uuid>> extents = range.Extents(part);
    ASSERT_EQ(extents.status().code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(extents.status().message(),
                AllOf(HasSubstr("part index " + std::to_string(part)), HasSubstr("4 parts")));
  }
}

TEST(RangeErrorTest, IdOutsideRange) {
  const Range range = MustCreate(U("11111111-0000-0000-0000-000000000000"),
                                 U("55555555-0000-0000-0000-000000000000"), 3);
  for (const std::string id :
       {"00000000-0000-0000-0000-000000000000", "11111110-ffff-ffff-ffff-ffffffffffff",
        "55555555-0000-0000-0000-000000000001", "ffffffff-ffff-ffff-ffff-ffffffffffff"}) {
    const absl::StatusOr<uint64_t> part = range.PartitionFor(U(id));
    ASSERT_EQ(part.status().code(), absl::StatusCode::kOutOfRange) << id;
    EXPECT_THAT(part.status().message(),
                AllOf(HasSubstr(id), HasSubstr("[11111111-0000-0000-0000-000000000000, "
                                               "55555555-0000-0000-0000-000000000000]")));
  }
}

}  // namespace
}  // namespace lockstep::partition
