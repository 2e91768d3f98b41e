#include "text/both_listed.h"

#include <algorithm>
#include <array>
#include <bit>
#include <random>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/output.h"
#include "lockstep/bsp/text.h"
#include "tbb/blocked_range.h"
#include "tbb/parallel_reduce.h"
#include "tbb/parallel_sort.h"

namespace lockstep::load::text {
namespace {

// SplitMix64's finaliser: a bijection that scatters every input bit over the output.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A weight's bits, with -0 as 0 (the same weight).
uint64_t WeightBits(const bsp::GraphInput& g, size_t e) {
  if (g.weights.empty()) return 0;
  const double w = g.weights[e];
  return std::bit_cast<uint64_t>(w == 0 ? 0.0 : w);
}

// The pair an edge belongs to: (lower end, upper end), and whether it is listed from the upper.
struct Pair {
  uint64_t ends;
  bool from_upper;
};
Pair PairOf(uint32_t src, uint32_t dst) {
  return src < dst ? Pair{uint64_t{src} << 32 | dst, false} : Pair{uint64_t{dst} << 32 | src, true};
}

using Sums = std::array<uint64_t, 2>;

// Whether the keyed sums over the edges (plus from the lower end, minus from the upper) are zero.
bool Balanced(const bsp::GraphInput& g) {
  std::random_device device;
  std::array<uint64_t, 4> key;
  for (uint64_t& k : key) k = uint64_t{device()} << 32 | device();
  const Sums sums = tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, g.src.size(), 1 << 16), Sums{0, 0},
      [&](const tbb::blocked_range<size_t>& r, Sums s) {
        for (size_t e = r.begin(); e < r.end(); ++e) {
          if (g.src[e] == g.dst[e]) continue;
          const Pair p = PairOf(g.src[e], g.dst[e]);
          const uint64_t w = WeightBits(g, e);
          for (int i = 0; i < 2; ++i) {
            const uint64_t h = Mix(Mix(p.ends + key[2 * i]) ^ (w + key[2 * i + 1]));
            s[i] += p.from_upper ? -h : h;  // unsigned: modulo 2^64
          }
        }
        return s;
      },
      [](Sums a, const Sums& b) {
        return Sums{a[0] + b[0], a[1] + b[1]};
      });
  return sums[0] == 0 && sums[1] == 0;
}

}  // namespace

std::optional<Unpaired> FindUnpaired(const bsp::GraphInput& g) {
  if (Balanced(g)) return std::nullopt;
  // Sorted by pair, weight, side and input order: each pair and weight is a run, its edges from
  // the lower end first.
  using Row = std::tuple<uint64_t, uint64_t, bool, size_t>;
  std::vector<Row> rows;
  for (size_t e = 0; e < g.src.size(); ++e) {
    if (g.src[e] == g.dst[e]) continue;
    const Pair p = PairOf(g.src[e], g.dst[e]);
    rows.emplace_back(p.ends, WeightBits(g, e), p.from_upper, e);
  }
  tbb::parallel_sort(rows.begin(), rows.end());
  std::optional<Unpaired> first;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i, lower = 0;
    while (j < rows.size() && std::get<0>(rows[j]) == std::get<0>(rows[i]) &&
           std::get<1>(rows[j]) == std::get<1>(rows[i])) {
      lower += !std::get<2>(rows[j]);
      ++j;
    }
    const size_t upper = j - i - lower;
    if (lower != upper) {
      // The side listed more often; its first edge in input order.
      const size_t at = lower > upper ? i : i + lower;
      const size_t edge = std::get<3>(rows[at]);
      if (!first || edge < first->edge) {
        first = Unpaired{edge, std::max(lower, upper), std::min(lower, upper)};
      }
    }
    i = j;
  }
  return first;
}

void KeepLowerEnds(bsp::GraphInput& g) {
  const bool weighted = !g.weights.empty();
  size_t kept = 0;
  for (size_t e = 0; e < g.src.size(); ++e) {
    if (g.src[e] > g.dst[e]) continue;
    g.src[kept] = g.src[e];
    g.dst[kept] = g.dst[e];
    if (weighted) g.weights[kept] = g.weights[e];
    ++kept;
  }
  // Shrunk, so that the CSR built next finds the other half of the memory free.
  g.src.resize(kept);
  g.src.shrink_to_fit();
  g.dst.resize(kept);
  g.dst.shrink_to_fit();
  if (weighted) {
    g.weights.resize(kept);
    g.weights.shrink_to_fit();
  }
  bsp::MakeSymmetric(g);
}

absl::Status FoldBothListed(
    bsp::GraphInput& g, const std::function<absl::Status(size_t, const std::string&)>& error_at) {
  if (const std::optional<Unpaired> u = FindUnpaired(g)) {
    const auto id = [&](uint32_t v) {
      return bsp::SanitizeForLog(g.external_ids[v], bsp::kQuotedTokenBytes);
    };
    const std::string a = id(g.src[u->edge]), b = id(g.dst[u->edge]);
    std::string weight;
    if (!g.weights.empty()) {
      weight = " with weight ";
      bsp::AppendDouble(g.weights[u->edge], weight);
    }
    return error_at(
        u->edge,
        absl::StrCat("the edge ", a, " -> ", b, weight, " is listed ", u->listed,
                     " time(s), its reverse ", b, " -> ", a,
                     g.weights.empty() ? "" : " with that weight", " ", u->reversed,
                     " time(s) (a graph read as symmetric lists every edge in both directions, "
                     "with the same weight)"));
  }
  KeepLowerEnds(g);
  return absl::OkStatus();
}

}  // namespace lockstep::load::text
