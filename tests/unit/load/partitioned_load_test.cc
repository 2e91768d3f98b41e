// Loading by partition (partitioned_load.h): N workers as N threads over an in-process Exchange.
// Each worker's part must equal, field by field, what Topology::Build makes of the whole input for
// that part; errors must be the whole-graph loader's, on every worker.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lockstep/bsp/app.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/load/source.h"
#include "lockstep/partition/range.h"
#include "lockstep/runner/program_runner.h"
#include "util/temp_dir.h"
#include "util/thread_exchange.h"

namespace lockstep::load {
namespace {

using bsp::Context;
using bsp::Exchange;
using bsp::Graph;
using bsp::GraphFacts;
using bsp::GraphInput;
using bsp::GraphSource;
using bsp::LocalExecutorFactory;
using bsp::NoValue;
using bsp::ParamError;
using bsp::Params;
using bsp::ParamString;
using bsp::PartitionLoadStats;
using bsp::Topology;
using bsp::VertexIdFromInteger;
using bsp::VertexNames;
using bsp::WeightUse;
using runner::JobDetails;

using ::testing::HasSubstr;

template <class E>
struct Worker {
  absl::Status status;
  std::optional<Graph<E>> graph;
  PartitionLoadStats stats;
  RankNames names;
};

// Runs `body(rank, exchange)` on n threads joined by one ThreadExchangeGroup.
template <class F>
void OnWorkers(uint32_t n, F&& body) {
  auto group = std::make_shared<test::ThreadExchangeGroup>(n);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      test::ThreadExchange exchange(group, r);
      body(r, exchange);
      group->Leave();  // a worker that failed alone fails the others' next collective
    });
  }
  for (auto& t : threads) t.join();
}

template <class E>
// `build_in_edges`, if set: the in-edges the build lays out for a symmetric input (the program's
// NeedsInEdges(true)), told to the load too; else `in_edges`.
std::vector<Worker<E>> LoadOnWorkers(const GraphSource& source, WeightUse weights, uint32_t n,
                                     bool in_edges, uint64_t round_bytes, bool packed = true,
                                     std::optional<bool> build_in_edges = std::nullopt,
                                     bool raw = true) {
  std::vector<Worker<E>> workers(n);
  OnWorkers(n, [&](uint32_t r, Exchange& exchange) {
    Worker<E>& w = workers[r];
    // Small rounds ask about remote vertices in small steps too (many steps per owner).
    auto part = LoadPartition(source, weights, exchange, in_edges,
                              {.round_bytes = round_bytes,
                               .packed_edges = packed,
                               .list_step = std::min<uint64_t>(round_bytes, uint64_t{1} << 15),
                               .in_edges_if_symmetric = build_in_edges,
                               .raw_integer_ids = raw});
    if (part.ok() && part->packed != packed) {
      w.status = absl::InternalError("the part's edges are not in the form asked for");
      return;
    }
    if (!part.ok()) {
      w.status = part.status();
      return;
    }
    w.stats = part->stats;
    w.names = part->names;
    auto split = partition::Range::Whole(n);
    auto graph = BuildPartGraph<E>(*part, *split, r, build_in_edges.value_or(in_edges));
    if (!graph.ok()) {
      w.status = graph.status();
      return;
    }
    w.graph.emplace(std::move(*graph));
  });
  return workers;
}

template <class E>
void ExpectSameGraph(const Graph<E>& got, const Graph<E>& want, const std::string& where) {
  const Topology& a = got.topology();
  const Topology& b = want.topology();
  ASSERT_EQ(a.num_local(), b.num_local()) << where;
  ASSERT_EQ(a.num_remote(), b.num_remote()) << where;
  EXPECT_EQ(a.num_global(), b.num_global()) << where;
  EXPECT_EQ(a.num_out_edges(), b.num_out_edges()) << where;
  ASSERT_EQ(a.has_in_edges(), b.has_in_edges()) << where;
  EXPECT_EQ(a.remote_partition_begin(), b.remote_partition_begin()) << where;
  for (uint32_t v = 0; v < a.num_local(); ++v) {
    ASSERT_EQ(a.id(v), b.id(v)) << where << " vertex " << v;
    ASSERT_EQ(a.global_index(v), b.global_index(v)) << where << " vertex " << v;
    ASSERT_EQ(a.external_id(v), b.external_id(v)) << where << " vertex " << v;
    ASSERT_EQ(a.out_begin(v), b.out_begin(v)) << where << " vertex " << v;
    ASSERT_EQ(a.out_end(v), b.out_end(v)) << where << " vertex " << v;
    const auto ao = a.out_slots(v), bo = b.out_slots(v);
    ASSERT_EQ(std::vector<uint32_t>(ao.begin(), ao.end()),
              std::vector<uint32_t>(bo.begin(), bo.end()))
        << where << " out-edges of " << a.external_id(v);
    if constexpr (!std::is_same_v<E, NoValue>) {
      const auto av = got.out_values(v), bv = want.out_values(v);
      ASSERT_EQ(std::vector<E>(av.begin(), av.end()), std::vector<E>(bv.begin(), bv.end()))
          << where << " out-values of " << a.external_id(v);
    }
    if (a.has_in_edges()) {
      ASSERT_EQ(a.in_begin(v), b.in_begin(v)) << where << " vertex " << v;
      const auto ai = a.in_slots(v), bi = b.in_slots(v);
      ASSERT_EQ(std::vector<uint32_t>(ai.begin(), ai.end()),
                std::vector<uint32_t>(bi.begin(), bi.end()))
          << where << " in-edges of " << a.external_id(v);
      if constexpr (!std::is_same_v<E, NoValue>) {
        const auto av = got.in_values(v), bv = want.in_values(v);
        ASSERT_EQ(std::vector<E>(av.begin(), av.end()), std::vector<E>(bv.begin(), bv.end()))
            << where << " in-values of " << a.external_id(v);
      }
    }
    ASSERT_EQ(a.Find(a.id(v)), v) << where;
  }
  for (uint32_t r = 0; r < a.num_remote(); ++r) {
    ASSERT_EQ(a.remote_id(r), b.remote_id(r)) << where << " remote " << r;
    ASSERT_EQ(a.remote_partition(r), b.remote_partition(r)) << where << " remote " << r;
    ASSERT_EQ(a.SlotGlobalIndex(a.num_local() + r), b.SlotGlobalIndex(b.num_local() + r))
        << where << " remote " << r;
    ASSERT_EQ(a.FindRemote(a.remote_id(r)), r) << where;
  }
}

// Loads `source` whole and on 1..4 workers (with and without in-edges, at several round sizes,
// with packed edges and a GraphInput's arrays) and compares every part; also that the rank
// ranges name every vertex.
template <class E>
void ExpectPartsEqualWhole(const GraphSource& source, WeightUse weights,
                           const std::vector<uint64_t>& round_sizes = {7, 100, 1 << 20},
                           bool raw = true) {
  auto whole = LoadGraph(source, weights);
  ASSERT_TRUE(whole.ok()) << whole.status();
  for (uint32_t n = 1; n <= 4; ++n) {
    auto split = partition::Range::Whole(n);
    for (bool in_edges : {false, true}) {
      for (uint64_t round : round_sizes) {
        for (bool packed : {true, false}) {
          const std::string where =
              "n=" + std::to_string(n) + " in_edges=" + std::to_string(in_edges) +
              " round=" + std::to_string(round) + " packed=" + std::to_string(packed);
          auto workers =
              LoadOnWorkers<E>(source, weights, n, in_edges, round, packed, std::nullopt, raw);
          for (uint32_t r = 0; r < n; ++r) {
            ASSERT_TRUE(workers[r].status.ok())
                << where << " worker " << r << ": " << workers[r].status;
            auto want = Graph<E>::Build(*whole, *split, r, in_edges);
            ASSERT_TRUE(want.ok()) << want.status();
            ExpectSameGraph(*workers[r].graph, *want, where + " worker " + std::to_string(r));
          }
          // Every global index's name is held by exactly the worker whose range holds it.
          ASSERT_EQ(workers[0].names.starts().back(), whole->num_vertices()) << where;
          for (uint64_t g = 0; g < whole->num_vertices(); ++g) {
            const uint32_t holder = workers[0].names.HolderOf(g);
            ASSERT_LT(holder, n);
            std::string name;
            workers[holder].names.Append(g, name);
            ASSERT_EQ(name, whole->external_ids[g]) << where << " global " << g;
          }
        }
      }
    }
  }
}

// The same error, on every worker, as LoadGraph gives.
void ExpectSameError(const GraphSource& source, WeightUse weights,
                     const std::vector<uint64_t>& round_sizes = {5, 64, 1 << 20}) {
  auto whole = LoadGraph(source, weights);
  ASSERT_FALSE(whole.ok()) << "the whole-graph load succeeded";
  for (uint32_t n = 1; n <= 4; ++n) {
    for (uint64_t round : round_sizes) {
      auto workers = LoadOnWorkers<NoValue>(source, weights, n, true, round);
      for (uint32_t r = 0; r < n; ++r) {
        EXPECT_EQ(workers[r].status, whole.status())
            << "n=" << n << " round=" << round << " worker " << r;
      }
    }
  }
}

enum class Ids { kSmall, kWide, kText, kMixed };

// A random edge list with the awkward spellings: comments, blank lines, tabs, CRLF, self-loops,
// repeated edges; weights if asked for.
std::string RandomEdgeList(uint64_t seed, Ids ids, uint32_t vertices, uint32_t edges, bool weights,
                           bool crlf = false, bool final_newline = true) {
  std::mt19937_64 rng(seed);
  auto name = [&](uint64_t v) -> std::string {
    switch (ids) {
      case Ids::kSmall:
        return std::to_string(v * 3 + 1);
      case Ids::kWide:
        return std::to_string((uint64_t{1} << 33) + v * 1000003);
      case Ids::kText:
        return "v" + std::to_string(v * 7 % 1000) + "-" + std::to_string(v);
      case Ids::kMixed:
        break;
    }
    switch (v % 5) {
      case 0:
        return std::to_string(v);
      case 1:
        return "n" + std::to_string(v);
      case 2:
        return "00" + std::to_string(v);  // not canonical: text
      case 3:
        return std::to_string(18446744073709551615ull - v);
      default:
        return "3f1c2a58-9d4e-4b7a-8c35-" + std::to_string(100000000000ull + v);
    }
  };
  const std::string nl = crlf ? "\r\n" : "\n";
  std::string text = "# a random graph" + nl;
  for (uint32_t e = 0; e < edges; ++e) {
    const uint64_t s = rng() % vertices;
    const uint64_t d = rng() % 7 == 0 ? s : rng() % vertices;
    const uint64_t roll = rng() % 50;
    if (roll == 0) text += nl;
    if (roll == 1) text += "% note" + nl;
    text += name(s) + (roll == 2 ? "\t" : " ") + name(d);
    if (weights) text += " " + std::to_string(rng() % 9) + (rng() % 2 ? ".5" : "");
    text += nl;
    if (roll == 3) {  // a repeated edge
      text += name(s) + " " + name(d) + (weights ? " 1" : "") + nl;
    }
  }
  if (!final_newline) text.resize(text.size() - nl.size());
  return text;
}

class PartitionedLoadTest : public ::testing::Test {
 protected:
  test::TempDir dir_;
};

TEST_F(PartitionedLoadTest, IntegerIdsEqualWholeBuild) {
  const std::string path = dir_.Write("small.el", RandomEdgeList(1, Ids::kSmall, 60, 300, false));
  ExpectPartsEqualWhole<NoValue>({.path = path}, WeightUse::kIgnore);
}

TEST_F(PartitionedLoadTest, WideIdsEqualWholeBuild) {
  const std::string path = dir_.Write("wide.el", RandomEdgeList(2, Ids::kWide, 50, 200, false));
  ExpectPartsEqualWhole<NoValue>({.path = path}, WeightUse::kIgnore);
}

// 32-bit IDs on both sides of the senders' direct table of partitions (IDs below 2^20, or 8 per ID
// met) and the hash map beyond it, met again in later rounds: each ID still goes to its owner once.
TEST_F(PartitionedLoadTest, IdsAroundTheDirectTablesBoundEqualWholeBuild) {
  std::mt19937_64 rng(11);
  auto id = [&] {
    const uint64_t v = rng() % 40;
    return std::to_string(v % 2 == 0 ? v : (uint64_t{1} << 20) + 7 * v);  // both sides
  };
  std::string text;
  for (int e = 0; e < 400; ++e) text += id() + " " + id() + "\n";
  const std::string path = dir_.Write("bound.el", text);
  ExpectPartsEqualWhole<NoValue>({.path = path}, WeightUse::kIgnore);
  ExpectPartsEqualWhole<NoValue>({.path = path, .undirected = true}, WeightUse::kIgnore);
}

// Rounds of small IDs (a share's direct table, no dictionary of the round), then IDs past its
// bound (the hash map from then on), then small ones again, some met before: the same parts.
TEST_F(PartitionedLoadTest, DirectRoundsThenHashedOnesEqualWholeBuild) {
  std::mt19937_64 rng(12);
  std::string text;
  for (int e = 0; e < 300; ++e)
    text += std::to_string(rng() % 50) + " " + std::to_string(rng() % 50) + "\n";
  for (int e = 0; e < 30; ++e) {
    text +=
        std::to_string((uint64_t{1} << 40) + rng() % 20) + " " + std::to_string(rng() % 80) + "\n";
  }
  for (int e = 0; e < 300; ++e)
    text += std::to_string(rng() % 90) + " " + std::to_string(rng() % 90) + "\n";
  const std::string path = dir_.Write("phases.el", text);
  ExpectPartsEqualWhole<NoValue>({.path = path}, WeightUse::kIgnore, {7, 300, 1 << 20});
  ExpectPartsEqualWhole<NoValue>({.path = path, .undirected = true}, WeightUse::kIgnore, {7, 300});
}

// Edge records of 32-bit IDs carry their ends' partitions in the IDs' top bits while the round's
// IDs leave room for them (below 2^31 for 2 workers, 2^30 for 3 or 4), in 3 bytes an end while
// 24 bits do (below 2^22 for 3 or 4 workers), and a partition field otherwise; a round's senders
// may each use any spelling, or tag their IDs (text), and a receiver takes them all in one round.
// Weights ride after any.
TEST_F(PartitionedLoadTest, EdgeRecordsWithAndWithoutPartitionsInTheirIds) {
  std::mt19937_64 rng(14);
  auto id = [&](int kind) {
    const uint64_t v = rng() % 30;
    switch (kind) {
      case 0:
        return std::to_string(v);
      case 1:  // at the top of the room left for 4 workers' partitions, and just past it
        return std::to_string((uint64_t{1} << 30) - 1 - v % 2 + 2 * (v % 3 == 0));
      case 2:  // past the room left for 2 workers' partitions
        return std::to_string((uint64_t{1} << 31) + v);
      case 4:  // at the top of 3-byte IDs' room for 4 workers' partitions, and just past it
        return std::to_string((uint64_t{1} << 22) - 1 - v % 2 + 2 * (v % 3 == 0));
      default:
        return "t" + std::to_string(v);
    }
  };
  std::string text;
  for (int part = 0; part < 8; ++part) {
    for (int e = 0; e < 60; ++e) {  // over a round of 300 bytes
      text += id(part == 4       ? 4
                 : part % 4 == 3 ? 0
                                 : part % 4) +
              " " + id(part == 7 ? 3 : 0) + " " + std::to_string(rng() % 5) + "\n";
    }
  }
  const std::string path = dir_.Write("spellings.el", text);
  // Every spelling went over the wire: some records with partitions in their IDs (of 3 bytes and
  // of 4), some without.
  uint64_t with = 0, slim = 0, received = 0;
  for (const auto& w : LoadOnWorkers<NoValue>({.path = path}, WeightUse::kIgnore, 4, true, 300)) {
    ASSERT_TRUE(w.status.ok()) << w.status;
    with += w.stats.records_with_partitions;
    slim += w.stats.slim_records;
    received += w.stats.edges_received;
  }
  EXPECT_GT(slim, 0u);
  EXPECT_LT(slim, with);
  EXPECT_LT(with, received);
  for (WeightUse weights : {WeightUse::kIgnore, WeightUse::kNonNegative}) {
    ExpectPartsEqualWhole<double>({.path = path}, weights, {7, 300, 1 << 20});
    ExpectPartsEqualWhole<double>({.path = path, .undirected = true}, weights, {300});
  }
}

// `copies` copies of 270 K edges between small IDs (2i, 2i+1), then a ring of 300 IDs from `base`
// on, every line with a weight. With `base` past the room of 6-byte records (2^22 for 3 or 4
// workers, 2^23 for 2), the ring goes in 8-byte ones. With as many copies as workers, each share
// meets all 540 K small IDs, enough for a direct table that covers 2^22 + 300 (8 per ID), and
// each worker reads more than that many bytes, the bound of raw IDs (docs/design.md §4.4).
std::string SmallThenRingFrom(uint64_t base, int copies) {
  std::string text;
  for (int c = 0; c < copies; ++c) {
    for (uint64_t i = 0; i < 270'000; ++i) absl::StrAppend(&text, 2 * i, " ", 2 * i + 1, " 9\n");
  }
  for (uint64_t i = 0; i < 300; ++i) {
    absl::StrAppend(&text, base + i, " ", base + (i * 7 + 3) % 300, " 9\n");
  }
  return text;
}

// 8-byte records (IDs past the room of 6-byte ones) are routed by the fast loop, received raw
// too, and make the whole build's parts.
TEST_F(PartitionedLoadTest, EightByteRecordsAreReceivedRawPastTheRoomOfSixByteOnes) {
  const std::string path = dir_.Write("past.el", SmallThenRingFrom(uint64_t{1} << 22, 4));
  for (bool undirected : {false, true}) {
    SCOPED_TRACE(undirected);
    const GraphSource source{.path = path, .undirected = undirected};
    auto whole = LoadGraph(source, WeightUse::kIgnore);
    ASSERT_TRUE(whole.ok()) << whole.status();
    auto split = partition::Range::Whole(4);
    auto workers = LoadOnWorkers<NoValue>(source, WeightUse::kIgnore, 4, false, 2 << 20);
    uint64_t with = 0, slim = 0;
    for (uint32_t r = 0; r < 4; ++r) {
      ASSERT_TRUE(workers[r].status.ok()) << workers[r].status;
      EXPECT_EQ(workers[r].stats.raw_end, PartitionLoadStats::RawEnd::kBitmaps);
      with += workers[r].stats.records_with_partitions;
      slim += workers[r].stats.slim_records;
      auto want = Graph<NoValue>::Build(*whole, *split, r, false);
      ASSERT_TRUE(want.ok()) << want.status();
      ExpectSameGraph(*workers[r].graph, *want, "worker " + std::to_string(r));
    }
    EXPECT_GT(slim, 0u);
    EXPECT_LT(slim, with);  // the ring's records had 8 bytes
  }
}

// A dense ID space far from 0 goes through the senders' direct tables as one from 0 does (with
// the table's start moved down when a later round's IDs begin lower), not through their hash
// maps; and the receivers keep it raw to the end, from a base below its first round's least ID
// (with room for the later rounds' lower IDs), and 3 workers' later rounds spell the IDs less
// the base in 6-byte records (where IDs from 0 would take 8). Each part is the whole build's.
TEST_F(PartitionedLoadTest, DenseIdsFarFromZeroGoThroughTheDirectTable) {
  constexpr uint64_t kFar = 5'000'000;  // past the direct table's least bound, 2^20
  std::string text;
  for (uint64_t i = 0; i < 200; ++i) {  // rounds of IDs from kFar + 100, then from kFar
    absl::StrAppend(&text, kFar + 100 + i % 50, " ", kFar + 100 + (i * 7) % 50, "\n");
  }
  for (uint64_t i = 0; i < 200; ++i) {
    absl::StrAppend(&text, kFar + i % 150, " ", kFar + (i * 3) % 150, "\n");
  }
  const std::string path = dir_.Write("far.el", text);
  for (uint32_t n : {1u, 3u}) {
    for (bool undirected : {false, true}) {
      uint64_t based = 0;
      for (const auto& w : LoadOnWorkers<NoValue>({.path = path, .undirected = undirected},
                                                  WeightUse::kIgnore, n, false, 300)) {
        ASSERT_TRUE(w.status.ok()) << w.status;
        based += w.stats.based_records;
        EXPECT_GT(w.stats.direct_rounds, 0u) << n;
        // (With more workers, a share that ends first has rounds without IDs.)
        if (n == 1) {
          EXPECT_EQ(w.stats.direct_rounds, w.stats.rounds);
        }
        EXPECT_EQ(w.stats.raw_end, PartitionLoadStats::RawEnd::kBitmaps) << n;
        EXPECT_GT(w.stats.id_base, kFar - (uint64_t{1} << 17)) << n;
        EXPECT_LE(w.stats.id_base, kFar) << n;
      }
      // (One worker's IDs fit 24 bits from 0 with no partition bits.)
      if (n == 3) {
        EXPECT_GT(based, 0u);
      } else {
        EXPECT_EQ(based, 0u);
      }
    }
  }
  ExpectPartsEqualWhole<NoValue>({.path = path}, WeightUse::kIgnore, {300});
  ExpectPartsEqualWhole<NoValue>({.path = path, .undirected = true}, WeightUse::kIgnore, {300});
}

// Random edges over a dense ID space far from 0, in many rounds: after the first round, every
// sender spells the IDs less the load's base, although its direct table's start moves below the
// base (by as much as the table holds) once a round's IDs begin lower than the first's.
TEST_F(PartitionedLoadTest, LaterRoundsOfIdsFarFromZeroGoLessTheBase) {
  constexpr uint64_t kFar = uint64_t{1} << 22, kIds = 100'000;  // a table past the base's room
  std::mt19937_64 rng(41);
  std::string text;
  for (int i = 0; i < 200'000; ++i) {
    absl::StrAppend(&text, kFar + rng() % kIds, " ", kFar + rng() % kIds, "\n");
  }
  const std::string path = dir_.Write("random_far.el", text);
  uint64_t records = 0, slim = 0, based = 0;
  for (const auto& w : LoadOnWorkers<NoValue>({.path = path, .undirected = true},
                                              WeightUse::kIgnore, 3, false, 64 << 10)) {
    ASSERT_TRUE(w.status.ok()) << w.status;
    EXPECT_EQ(w.stats.raw_end, PartitionLoadStats::RawEnd::kBitmaps);
    records += w.stats.records_with_partitions;
    slim += w.stats.slim_records;
    based += w.stats.based_records;
  }
  // (The first of each share's 20 or so rounds goes in 8-byte records: no base yet.)
  EXPECT_EQ(slim, based);
  EXPECT_GT(based * 100, records * 85) << based << " of " << records;
}

// A later round's IDs far below the base chosen from the first round's: the workers that meet
// them go through the vertex table from there (at an announcement or a record), and all rank by
// the sort; each part is still the whole build's. IDs that begin near 0 keep a base of 0.
TEST_F(PartitionedLoadTest, IdsBelowTheRawBaseGoThroughTheTable) {
  constexpr uint64_t kFar = 5'000'000;
  std::string text;
  for (uint64_t i = 0; i < 400; ++i) {
    absl::StrAppend(&text, kFar + i % 50, " ", kFar + (i * 7) % 50, "\n");
  }
  for (uint64_t i = 0; i < 40; ++i) {  // a million below them, past every share's first round
    absl::StrAppend(&text, kFar - 1'000'000 + i % 15, " ", kFar + (i * 3) % 50, "\n");
  }
  const std::string far = dir_.Write("below.el", text);
  const std::string near = dir_.Write("near.el", RandomEdgeList(31, Ids::kSmall, 60, 300, false));
  using RawEnd = PartitionLoadStats::RawEnd;
  for (uint32_t n : {1u, 3u}) {
    for (const auto& w : LoadOnWorkers<NoValue>({.path = far, .undirected = true},
                                                WeightUse::kIgnore, n, false, 300)) {
      ASSERT_TRUE(w.status.ok()) << w.status;
      EXPECT_GT(w.stats.id_base, 0u) << n;
      EXPECT_NE(w.stats.raw_end, RawEnd::kBitmaps) << n;
    }
    for (const auto& w : LoadOnWorkers<NoValue>({.path = near, .undirected = true},
                                                WeightUse::kIgnore, n, false, 300)) {
      ASSERT_TRUE(w.status.ok()) << w.status;
      EXPECT_EQ(w.stats.id_base, 0u) << n;
      EXPECT_EQ(w.stats.raw_end, RawEnd::kBitmaps) << n;
    }
  }
  for (bool undirected : {false, true}) {
    ExpectPartsEqualWhole<NoValue>({.path = far, .undirected = undirected}, WeightUse::kIgnore,
                                   {300});
  }
}

// A share whose first round has no IDs (comments only) says nothing about the base: the others'
// least IDs choose it, and the load stays raw.
TEST_F(PartitionedLoadTest, AShareWithoutIdsInItsFirstRoundLeavesTheBaseToTheOthers) {
  constexpr uint64_t kFar = 5'000'000;
  std::string edges;
  for (uint64_t i = 0; i < 400; ++i) {
    absl::StrAppend(&edges, kFar + i % 150, " ", kFar + (i * 3) % 150, "\n");
  }
  const std::string path =
      dir_.Write("comment_first.el", "# " + std::string(edges.size() + 100, 'c') + "\n" + edges);
  for (const auto& w :
       LoadOnWorkers<NoValue>({.path = path}, WeightUse::kIgnore, 2, false, 1 << 20)) {
    ASSERT_TRUE(w.status.ok()) << w.status;
    EXPECT_GT(w.stats.id_base, 0u);
    EXPECT_EQ(w.stats.raw_end, PartitionLoadStats::RawEnd::kBitmaps);
  }
}

// A hostile peer's exchange: passes everything on, after Edit has changed what goes out.
class EditingExchange : public Exchange {
 public:
  explicit EditingExchange(Exchange& inner) : inner_(inner) {}
  uint32_t rank() const final { return inner_.rank(); }
  uint32_t size() const final { return inner_.size(); }
  absl::StatusOr<std::vector<std::string>> AllToAll(std::vector<std::string> outgoing) final {
    Edit(outgoing);
    return inner_.AllToAll(std::move(outgoing));
  }

 protected:
  virtual void Edit(std::vector<std::string>& outgoing) = 0;

  // An edge list's round, as partitioned_load.cc lays it out: a flags byte (1: more rounds), the
  // announcements' length and the sender's least ID in the first round (8 bytes each), the
  // announcements, then the records' coding and the records. The announcements' length if
  // `batch` looks like one.
  static constexpr size_t kLead = 17;
  static std::optional<uint64_t> RoundAnnounced(const std::string& batch) {
    if (batch.size() < kLead || (static_cast<uint8_t>(batch[0]) & ~1u) != 0) return std::nullopt;
    uint64_t announced;
    std::memcpy(&announced, batch.data() + 1, 8);
    if (announced > batch.size() - kLead) return std::nullopt;
    return announced;
  }

 private:
  Exchange& inner_;
};

// Rewrites the least ID in the lead of the first edge round's batch to worker 0, once.
class LeadTamperingExchange final : public EditingExchange {
 public:
  LeadTamperingExchange(Exchange& inner, uint64_t least) : EditingExchange(inner), least_(least) {}
  bool tampered() const { return tampered_; }

 private:
  void Edit(std::vector<std::string>& outgoing) override {
    std::string& b = outgoing[0];
    if (tampered_ || !RoundAnnounced(b)) return;
    uint64_t least;
    std::memcpy(&least, b.data() + 9, 8);
    // (A round's lead: its least is one of the graph's IDs, far from 0.)
    if (least >= (uint64_t{1} << 22) && least != ~uint64_t{0}) {
      std::memcpy(b.data() + 9, &least_, 8);
      tampered_ = true;
    }
  }

  const uint64_t least_;
  bool tampered_ = false;
};

// A peer that leads its batches with different least IDs to different workers makes them choose
// different bases: the ranking sees it and every worker goes to the sort, and the parts are the
// honest load's (a worker reads the 6-byte records of a sender with another base by the base
// their batch gives).
TEST_F(PartitionedLoadTest, WorkersWithDifferentBasesRankBySorting) {
  constexpr uint64_t kFar = 5'000'000;  // past 2^22: 3 workers' 6-byte records need a base
  constexpr uint32_t kWorkers = 3;
  std::string text;
  for (uint64_t i = 0; i < 900; ++i) {
    absl::StrAppend(&text, kFar + i % 150, " ", kFar + (i * 7) % 150, "\n");
  }
  const std::string path = dir_.Write("bases.el", text);
  const GraphSource source{.path = path, .undirected = true};
  const auto honest = LoadOnWorkers<NoValue>(source, WeightUse::kIgnore, kWorkers, false, 300);
  std::vector<std::optional<Graph<NoValue>>> graphs(kWorkers);
  std::vector<PartitionLoadStats> stats(kWorkers);
  bool tampered = false;
  OnWorkers(kWorkers, [&](uint32_t r, Exchange& plain) {
    LeadTamperingExchange hostile(plain, kFar - (uint64_t{1} << 19));
    Exchange& exchange = r == 1 ? static_cast<Exchange&>(hostile) : plain;
    auto part = LoadPartition(source, WeightUse::kIgnore, exchange, false, {.round_bytes = 300});
    if (r == 1) tampered = hostile.tampered();
    ASSERT_TRUE(part.ok()) << part.status();
    stats[r] = part->stats;
    auto graph = BuildPartGraph<NoValue>(*part, *partition::Range::Whole(kWorkers), r, false);
    ASSERT_TRUE(graph.ok()) << graph.status();
    graphs[r].emplace(std::move(*graph));
  });
  ASSERT_TRUE(tampered);
  EXPECT_NE(stats[0].id_base, stats[1].id_base);
  EXPECT_EQ(stats[1].id_base, stats[2].id_base);
  EXPECT_GT(stats[0].based_records, 0u);
  for (uint32_t r = 0; r < kWorkers; ++r) {
    EXPECT_EQ(stats[r].raw_end, PartitionLoadStats::RawEnd::kRanking) << r;
    ASSERT_TRUE(honest[r].status.ok()) << honest[r].status;
    ASSERT_TRUE(graphs[r] && honest[r].graph);
    ExpectSameGraph(*graphs[r], *honest[r].graph, "worker " + std::to_string(r));
  }
}

// Replaces the edge records of the first round's batch to worker 0 with one wide record whose
// ends are both the largest ID, 2^64-1, once.
class WideMaxExchange final : public EditingExchange {
 public:
  explicit WideMaxExchange(Exchange& inner) : EditingExchange(inner) {}
  bool done() const { return done_; }

 private:
  void Edit(std::vector<std::string>& outgoing) override {
    std::string& b = outgoing[0];
    const std::optional<uint64_t> announced = RoundAnnounced(b);
    if (done_ || !announced || b.size() == kLead + *announced) return;  // (edges to replace)
    b.resize(kLead + *announced);
    b.push_back(1);  // kWide: two 8-byte IDs and the other end's partition
    const uint64_t max = ~uint64_t{0};
    const uint32_t other = 1;
    b.append(reinterpret_cast<const char*>(&max), 8);
    b.append(reinterpret_cast<const char*>(&max), 8);
    b.append(reinterpret_cast<const char*>(&other), 4);
    done_ = true;
  }

  bool done_ = false;
};

// A record of the largest ID (which is also no least) from a peer fails the load, from a base or
// not, and touches nothing outside the raw tables (the sanitizer build checks).
TEST_F(PartitionedLoadTest, ARecordOfTheLargestIdFailsTheLoad) {
  auto split = partition::Range::Whole(2);
  for (uint64_t from : {uint64_t{0}, uint64_t{5'000'000}}) {
    // Worker 1's vertices only as sources: worker 0 gets no records but the forged one.
    std::vector<uint64_t> ones;
    for (uint64_t v = from; ones.size() < 200; ++v) {
      if (*split->PartitionFor(VertexIdFromInteger(v)) == 1) ones.push_back(v);
    }
    std::string text;
    for (size_t i = 0; i < 400; ++i)
      absl::StrAppend(&text, ones[i % 200], " ", ones[(i * 7) % 200], "\n");
    const std::string path = dir_.Write("largest.el", text);
    std::vector<absl::Status> status(2);
    bool forged = false;
    OnWorkers(2, [&](uint32_t r, Exchange& plain) {
      WideMaxExchange hostile(plain);
      Exchange& exchange = r == 1 ? static_cast<Exchange&>(hostile) : plain;
      status[r] = LoadPartition({.path = path}, WeightUse::kIgnore, exchange, false,
                                {.round_bytes = 1 << 20})
                      .status();
      if (r == 1) forged = hostile.done();
    });
    SCOPED_TRACE(testing::Message() << "from " << from);
    EXPECT_TRUE(forged);
    EXPECT_FALSE(status[0].ok());
    EXPECT_FALSE(status[1].ok());
  }
}

// A worker receives an edge list's integer IDs raw while they stay below a bound and, if every
// worker did to the end, ranks them by the union of the owned IDs' bitmaps instead of a sort. An
// ID past the bound (narrow or wide) sends the workers that meet it through the vertex table from
// then on, in the announcements or in the records, and all then rank by the sort (the others
// leaving raw there). Either way, and with raw receiving off, each part is the whole build's, and
// every global index's name is held by one worker (ExpectPartsEqualWhole).
TEST_F(PartitionedLoadTest, RawIntegerIdsAndTheirFallbacksEqualWholeBuild) {
  const std::string small = dir_.Write("raw.el", RandomEdgeList(21, Ids::kSmall, 60, 400, false));
  const std::string past =
      dir_.Write("past.el", RandomEdgeList(22, Ids::kSmall, 60, 200, false) + "100000000 4\n" +
                                RandomEdgeList(23, Ids::kSmall, 60, 100, false) + "7 5000000000\n" +
                                RandomEdgeList(24, Ids::kSmall, 60, 100, false));
  using RawEnd = PartitionLoadStats::RawEnd;
  auto ends = [&](const std::string& p, uint32_t n, bool raw) {
    std::vector<RawEnd> got;
    for (const auto& w : LoadOnWorkers<NoValue>({.path = p, .undirected = true}, WeightUse::kIgnore,
                                                n, false, 300, true, std::nullopt, raw)) {
      EXPECT_TRUE(w.status.ok()) << w.status;
      got.push_back(w.stats.raw_end);
    }
    return got;
  };
  auto has = [](const std::vector<RawEnd>& v, RawEnd e) {
    return std::find(v.begin(), v.end(), e) != v.end();
  };
  for (uint32_t n = 1; n <= 4; ++n) {
    EXPECT_EQ(ends(small, n, true), std::vector<RawEnd>(n, RawEnd::kBitmaps)) << n;
    EXPECT_EQ(ends(small, n, false), std::vector<RawEnd>(n, RawEnd::kNotRaw)) << n;
    const auto past_ends = ends(past, n, true);
    EXPECT_FALSE(has(past_ends, RawEnd::kBitmaps)) << n;
    EXPECT_FALSE(has(past_ends, RawEnd::kNotRaw)) << n;
    // With 3 and 4 workers the two IDs past the bound have owners that leave at an announcement,
    // others meet them in records only, and at least one worker meets neither and leaves at the
    // ranking (the owners are fixed by the IDs' UUIDs).
    if (n >= 3) {
      for (RawEnd e : {RawEnd::kAnnouncement, RawEnd::kRecord, RawEnd::kRanking}) {
        EXPECT_TRUE(has(past_ends, e)) << n << " " << static_cast<int>(e);
      }
    }
  }
  // Ranked by the bitmaps, each worker holds the names of an equal share of the global indexes,
  // however the IDs spread (here all but one below 200, and one near 3 million).
  const std::string skewed =
      dir_.Write("skewed.el", RandomEdgeList(26, Ids::kSmall, 60, 300, false) + "3000000 1\n");
  for (uint32_t n = 2; n <= 4; ++n) {
    auto workers = LoadOnWorkers<NoValue>({.path = skewed}, WeightUse::kIgnore, n, false, 300);
    ASSERT_TRUE(workers[0].status.ok()) << workers[0].status;
    EXPECT_EQ(workers[0].stats.raw_end, RawEnd::kBitmaps);
    const std::vector<uint64_t>& starts = workers[0].names.starts();
    ASSERT_EQ(starts.size(), n + 1);
    for (uint32_t q = 0; q <= n; ++q) EXPECT_EQ(starts[q], starts[n] * q / n) << n;
  }
  ExpectPartsEqualWhole<NoValue>({.path = skewed}, WeightUse::kIgnore, {300});
  for (bool raw : {true, false}) {
    ExpectPartsEqualWhole<NoValue>({.path = small}, WeightUse::kIgnore, {7, 1 << 20}, raw);
    ExpectPartsEqualWhole<NoValue>({.path = small, .undirected = true}, WeightUse::kIgnore, {100},
                                   raw);
  }
  ExpectPartsEqualWhole<NoValue>({.path = past}, WeightUse::kIgnore, {7, 300, 1 << 20});
  ExpectPartsEqualWhole<NoValue>({.path = past, .undirected = true}, WeightUse::kIgnore, {300});
  const std::string weighted =
      dir_.Write("rawweights.el", RandomEdgeList(25, Ids::kSmall, 50, 200, true));
  ExpectPartsEqualWhole<double>({.path = weighted}, WeightUse::kNonNegative, {7, 1 << 20});
}

TEST_F(PartitionedLoadTest, TextIdsEqualWholeBuild) {
  const std::string path = dir_.Write("text.el", RandomEdgeList(3, Ids::kText, 50, 200, false));
  ExpectPartsEqualWhole<NoValue>({.path = path}, WeightUse::kIgnore);
}

TEST_F(PartitionedLoadTest, MixedIdsEqualWholeBuild) {
  const std::string path = dir_.Write("mixed.el", RandomEdgeList(4, Ids::kMixed, 70, 250, false));
  ExpectPartsEqualWhole<NoValue>({.path = path}, WeightUse::kIgnore);
}

TEST_F(PartitionedLoadTest, UndirectedEqualsWholeBuild) {
  for (Ids ids : {Ids::kSmall, Ids::kMixed}) {
    const std::string path = dir_.Write("u.el", RandomEdgeList(5, ids, 40, 160, false));
    ExpectPartsEqualWhole<NoValue>({.path = path, .undirected = true}, WeightUse::kIgnore);
  }
}

// A symmetric part's edges go to its build oriented (PartEdges) unless weights are kept or it
// needs in-edges and has a self-loop (a rule left from when in-edges were a rotation of the
// out-edges; they are now the out-edges). Self-loops only in some workers' parts: the others
// still orient.
TEST_F(PartitionedLoadTest, UndirectedWithoutSelfLoopsEqualsWholeBuild) {
  const std::string all = RandomEdgeList(15, Ids::kSmall, 50, 300, false);
  std::string text;
  for (absl::string_view line : absl::StrSplit(all, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (f.size() >= 2 && f[0] != f[1]) absl::StrAppend(&text, line, "\n");
  }
  const std::string path = dir_.Write("noloops.el", text);
  ExpectPartsEqualWhole<NoValue>({.path = path, .undirected = true}, WeightUse::kIgnore);
  ExpectPartsEqualWhole<double>({.path = path, .undirected = true}, WeightUse::kIgnore, {300});
  const std::string one_loop = dir_.Write("oneloop.el", text + "4 4\n");
  ExpectPartsEqualWhole<NoValue>({.path = one_loop, .undirected = true}, WeightUse::kIgnore);

  // Which parts went oriented: every one without the loop; the loop's owner only when its build
  // needs no in-edges (a min broadcast's on a symmetric input: NeedsInEdges(true) is false); a
  // weighted part never; a directed input never.
  auto oriented = [&](const std::string& p, bool undirected, WeightUse weights, bool in_edges,
                      std::optional<bool> build_in_edges) {
    auto whole = LoadGraph({.path = p, .undirected = undirected}, weights);
    EXPECT_TRUE(whole.ok());
    auto workers = LoadOnWorkers<double>({.path = p, .undirected = undirected}, weights, 3,
                                         in_edges, 300, true, build_in_edges);
    std::vector<bool> got;
    for (uint32_t r = 0; r < 3; ++r) {
      EXPECT_TRUE(workers[r].status.ok()) << workers[r].status;
      if (!workers[r].status.ok()) return got;
      auto want = Graph<double>::Build(*whole, *partition::Range::Whole(3), r,
                                       build_in_edges.value_or(in_edges));
      EXPECT_TRUE(want.ok());
      ExpectSameGraph(*workers[r].graph, *want, p + " worker " + std::to_string(r));
      got.push_back(workers[r].stats.oriented);
    }
    return got;
  };
  const std::vector<bool> all_three = {true, true, true};
  EXPECT_EQ(oriented(path, true, WeightUse::kIgnore, true, std::nullopt), all_three);
  const auto with_loop = oriented(one_loop, true, WeightUse::kIgnore, true, std::nullopt);
  EXPECT_EQ(std::count(with_loop.begin(), with_loop.end(), false), 1);
  EXPECT_EQ(oriented(one_loop, true, WeightUse::kIgnore, true, false), all_three);
  const std::string weighted =
      dir_.Write("weighted.el", RandomEdgeList(16, Ids::kSmall, 40, 120, true));
  EXPECT_EQ(oriented(weighted, true, WeightUse::kNonNegative, false, std::nullopt),
            std::vector<bool>(3, false));
  EXPECT_EQ(oriented(weighted, true, WeightUse::kIgnore, false, std::nullopt), all_three);
  EXPECT_EQ(oriented(path, false, WeightUse::kIgnore, true, std::nullopt),
            std::vector<bool>(3, false));
}

// `edges` random edges among `vertices` integer IDs, none a self-loop (so that a symmetric part
// goes oriented even where its build needs in-edges).
std::string EdgeListWithoutLoops(uint64_t seed, uint64_t vertices, int edges) {
  std::mt19937_64 rng(seed);
  std::string text;
  for (int e = 0; e < edges; ++e) {
    const uint64_t s = rng() % vertices, d = (s + 1 + rng() % (vertices - 1)) % vertices;
    absl::StrAppend(&text, s, " ", d, "\n");
  }
  return text;
}

// Loads `source` (no self-loops) on n workers with in-edges and expects the whole build's parts,
// oriented exactly when the input is undirected, each on more than `moved` bytes of pages moved
// from its received edges' blocks.
void ExpectPartsOnMovedPages(const GraphSource& source, uint32_t n, uint64_t moved) {
  auto whole = LoadGraph(source, WeightUse::kIgnore);
  ASSERT_TRUE(whole.ok()) << whole.status();
  auto workers = LoadOnWorkers<NoValue>(source, WeightUse::kIgnore, n, true, 1 << 20);
  for (uint32_t r = 0; r < n; ++r) {
    const std::string where = "undirected=" + std::to_string(source.undirected) +
                              " n=" + std::to_string(n) + " worker " + std::to_string(r);
    ASSERT_TRUE(workers[r].status.ok()) << where << ": " << workers[r].status;
    auto want = Graph<NoValue>::Build(*whole, *partition::Range::Whole(n), r, true);
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectSameGraph(*workers[r].graph, *want, where);
    EXPECT_EQ(workers[r].stats.oriented, source.undirected) << where;
    EXPECT_GT(workers[r].stats.bytes_moved, moved) << where;
  }
}

// Laying out the packed pairs moves the pages of the received edges' blocks it is done with into
// the pairs' bytes ahead of where they are written (PageMover), instead of faulting fresh ones in:
// with pairs over many pages and several senders per worker, oriented (two runs of pairs, the
// heads and the reverses) and not (a directed input: one run), the parts are the whole build's,
// and pages were moved.
TEST_F(PartitionedLoadTest, PairsOnMovedPagesEqualWholeBuild) {
  // 40,000 edges without self-loops among 5,000 vertices: some 27,000 pairs a worker of 3, about
  // 20-26 pages of 3-byte (oriented) or 4-byte pairs, each run filled from the first sender's
  // block.
  const std::string path = dir_.Write("moved.el", EdgeListWithoutLoops(7, 5000, 40000));
  for (bool undirected : {true, false}) {
    for (uint32_t n : {3u, 4u}) {
      ExpectPartsOnMovedPages({.path = path, .undirected = undirected}, n, 0);
    }
  }
}

// The same with several blocks of received edges per sender (a block holds 2^18 ends), so that
// the runs are filled from block after block, past pages moved earlier and already written:
// 1,200,000 edges among 200,000 vertices on 2 workers, 5-byte oriented pairs; more than the
// first sender's two blocks are moved.
TEST_F(PartitionedLoadTest, PairsOnPagesMovedFromSeveralBlocksEqualWholeBuild) {
  const std::string path = dir_.Write("blocks.el", EdgeListWithoutLoops(11, 200000, 1200000));
  ExpectPartsOnMovedPages({.path = path, .undirected = true}, 2, uint64_t{2} << 20);
}

TEST_F(PartitionedLoadTest, WeightsEqualWholeBuild) {
  const std::string path = dir_.Write("w.el", RandomEdgeList(6, Ids::kSmall, 40, 200, true));
  ExpectPartsEqualWhole<double>({.path = path}, WeightUse::kNonNegative);
  ExpectPartsEqualWhole<double>({.path = path, .undirected = true}, WeightUse::kNonNegative);
  // Weights that are not asked for are not kept: every edge value is 1.
  ExpectPartsEqualWhole<double>({.path = path}, WeightUse::kIgnore, {64});
  // An unweighted input gives the default weight.
  const std::string plain = dir_.Write("p.el", RandomEdgeList(7, Ids::kText, 30, 90, false));
  ExpectPartsEqualWhole<double>({.path = plain}, WeightUse::kNonNegative, {64});
}

TEST_F(PartitionedLoadTest, CrlfAndNoFinalNewline) {
  const std::string path =
      dir_.Write("crlf.el", RandomEdgeList(8, Ids::kMixed, 30, 100, true, true, false));
  ExpectPartsEqualWhole<double>({.path = path}, WeightUse::kNonNegative);
}

TEST_F(PartitionedLoadTest, EmptyAndTinyInputsLeaveSharesEmpty) {
  for (const std::string text : {"", "\n", "# only a comment\n", "1 2", "1 1\n", "a b\nb a\n"}) {
    const std::string path = dir_.Write("tiny.el", text);
    ExpectPartsEqualWhole<NoValue>({.path = path}, WeightUse::kIgnore, {1, 1 << 20});
    ExpectPartsEqualWhole<NoValue>({.path = path, .undirected = true}, WeightUse::kIgnore, {3});
  }
  // A long line: every other share is empty.
  const std::string path = dir_.Write("long.el", "x" + std::string(500, '7') + " 2 1\n2 3 1\n");
  ExpectPartsEqualWhole<double>({.path = path}, WeightUse::kNonNegative, {10});
}

class GraphalyticsPartitionTest : public PartitionedLoadTest {
 protected:
  std::string Write(const std::string& v, const std::string& e, bool directed) {
    dir_.Write("g.v", v);
    dir_.Write("g.e", e);
    return dir_.Write("g.properties", std::string("graph.g.vertex-file = g.v\n") +
                                          "graph.g.edge-file = g.e\ngraph.g.directed = " +
                                          (directed ? "true" : "false") + "\n");
  }
};

TEST_F(GraphalyticsPartitionTest, IsolatedVerticesSelfLoopsAndRepeatedEdges) {
  for (bool directed : {true, false}) {
    const std::string path =
        Write("1\n2\n3\n4\n99\n# c\n100\n", "1 2 0.5\n2 2 1\n3 1 2\n1 2 3\n99 3 4\n", directed);
    ExpectPartsEqualWhole<double>({.path = path}, WeightUse::kNonNegative);
    ExpectPartsEqualWhole<NoValue>({.path = path}, WeightUse::kIgnore);
  }
  // Text IDs, and a random graph whose vertex file lists more vertices than the edges name.
  std::string v;
  for (int i = 0; i < 80; ++i) v += (i % 3 ? "x" : "") + std::to_string(i) + "\n";
  std::mt19937_64 rng(9);
  std::string e;
  for (int i = 0; i < 200; ++i) {
    auto pick = [&] {
      const int x = static_cast<int>(rng() % 60);
      return (x % 3 ? "x" : "") + std::to_string(x);
    };
    e += pick() + " " + pick() + "\n";
  }
  ExpectPartsEqualWhole<NoValue>({.path = Write(v, e, true)}, WeightUse::kIgnore);
  ExpectPartsEqualWhole<NoValue>({.path = Write(v, e, false)}, WeightUse::kIgnore);
}

TEST_F(PartitionedLoadTest, BadLinesGiveEveryWorkerLoadGraphsError) {
  const std::string good = RandomEdgeList(10, Ids::kSmall, 40, 120, true);
  std::vector<size_t> starts = {0};
  for (size_t i = 0; i + 1 < good.size(); ++i) {
    if (good[i] == '\n') starts.push_back(i + 1);
  }
  // A bad line at several places, one of them in the share of worker 2 of 4, and two bad lines of
  // different kinds (a parse error wins over an earlier missing weight, as in LoadGraph).
  const std::vector<std::string> bad = {"5\n",      "1 2 x\n",   "1 2\n",
                                        "1 2 -3\n", "1 2 inf\n", "1 2 3 4\n"};
  for (const std::string& line : bad) {
    for (size_t at : {size_t{1}, starts.size() / 2 + 3, starts.size() * 5 / 8, starts.size() - 1}) {
      std::string text = good;
      text.insert(starts[at], line);
      ExpectSameError({.path = dir_.Write("bad.el", text)}, WeightUse::kNonNegative);
    }
  }
  std::string two = good;
  two.insert(starts[starts.size() - 2], "1 2 3 4\n");
  two.insert(starts[2], "1 2\n");
  ExpectSameError({.path = dir_.Write("two.el", two)}, WeightUse::kNonNegative);
  std::string missing_then_negative = good;
  missing_then_negative.insert(starts[starts.size() - 2], "1 2\n");
  missing_then_negative.insert(starts[3], "1 2 -1\n");
  ExpectSameError({.path = dir_.Write("mn.el", missing_then_negative)}, WeightUse::kNonNegative);
  // The first weightless line is in a late share, the first weighted one in an early share.
  ExpectSameError({.path = dir_.Write("late.el", "1 2 1\n" + std::string(200, '\n') + "2 3\n")},
                  WeightUse::kNonNegative);
  ExpectSameError({.path = dir_.Write("early.el", "1 2\n" + std::string(200, '\n') + "2 3 1\n")},
                  WeightUse::kNonNegative);
}

TEST_F(PartitionedLoadTest, BadLineInWorkerTwosShare) {
  // 4 workers over 400 lines of "i i+1": worker 2's share starts near line 201.
  std::string text;
  for (int i = 0; i < 400; ++i) {
    text += i == 250 ? std::string("7 8 9 10\n")
                     : std::to_string(i) + " " + std::to_string(i + 1) + "\n";
  }
  const std::string path = dir_.Write("share2.el", text);
  auto workers = LoadOnWorkers<NoValue>({.path = path}, WeightUse::kIgnore, 4, false, 1 << 20);
  for (const auto& w : workers) {
    EXPECT_EQ(w.status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(w.status.message()),
              path + ":251: expected 'src dst [weight]', found 4 fields");
  }
}

// A hostile peer: worker 1's exchange changes one record of its first round of edges to worker 0
// so that both ends say they are worker 0's, where one is worker 1's (never announced to 0). It
// notes the coding of the records it tampered with.
class TamperingExchange final : public EditingExchange {
 public:
  // Tampers with the first record of `coding` it can.
  TamperingExchange(Exchange& inner, uint8_t coding) : EditingExchange(inner), coding_(coding) {}
  bool tampered() const { return tampered_ != 0; }
  uint8_t coding() const { return tampered_; }

 private:
  void Edit(std::vector<std::string>& outgoing) override {
    if (!tampered_) tampered_ = Tamper(outgoing[0], coding_);
  }
  // The records of an edge list's round (EditingExchange::RoundAnnounced), little-endian: 3,
  // 8-byte records of two 32-bit ends, or 4, 6-byte records of two 24-bit ends, each end an ID
  // with its partition in the top bit (for 2 workers). The coding it tampered with, or 0.
  static uint8_t Tamper(std::string& batch, uint8_t want) {
    const std::optional<uint64_t> announced = RoundAnnounced(batch);
    if (!announced) return 0;
    const size_t at = kLead + *announced;
    if (at >= batch.size() || static_cast<uint8_t>(batch[at]) != want) return 0;
    const auto coding = static_cast<uint8_t>(batch[at]);
    const size_t bytes = coding == 3 ? 8 : 6;
    const uint32_t end_bits = coding == 3 ? 32 : 24;
    if ((batch.size() - at - 1) % bytes != 0) return 0;
    const uint64_t end_mask = (uint64_t{1} << end_bits) - 1, top = uint64_t{1} << (end_bits - 1);
    for (size_t r = at + 1; r + bytes <= batch.size(); r += bytes) {
      uint64_t record = 0;
      std::memcpy(&record, batch.data() + r, bytes);
      uint64_t a = record & end_mask, b = record >> end_bits;
      if (((a & top) == 0) != ((b & top) == 0)) {  // one end worker 0's
        a &= ~top;
        b &= ~top;
        record = a | b << end_bits;
        std::memcpy(batch.data() + r, &record, bytes);
        return coding;
      }
    }
    return 0;
  }

  const uint8_t coding_;
  uint8_t tampered_ = 0;
};

TEST_F(PartitionedLoadTest, ARecordCallingAPeersVertexTheReceiversFailsTheLoad) {
  // Small IDs go in 6-byte records; IDs past 2^23 in 8-byte ones (for 2 workers), which a worker
  // receives raw once it has read and received more than the largest. (Only the raw take says
  // "malformed record" of these: the table's path finds a vertex without an owner.)
  std::string small;
  for (uint64_t i = 0; i < 200; ++i) absl::StrAppend(&small, i, " ", (i + 7) % 200, "\n");
  const std::string big = SmallThenRingFrom(uint64_t{1} << 23, 4);
  for (const auto& [text, coding] : {std::pair<const std::string&, uint8_t>{small, 4}, {big, 3}}) {
    const std::string path = dir_.Write("ring.el", text);
    for (bool undirected : {false, true}) {
      std::vector<absl::Status> status(2);
      uint8_t tampered = 0;
      OnWorkers(2, [&](uint32_t r, Exchange& plain) {
        TamperingExchange hostile(plain, coding);
        Exchange& exchange = r == 1 ? static_cast<Exchange&>(hostile) : plain;
        status[r] = LoadPartition({.path = path, .undirected = undirected}, WeightUse::kIgnore,
                                  exchange, false, {})
                        .status();
        if (r == 1) tampered = hostile.coding();
      });
      SCOPED_TRACE(testing::Message() << "coding " << int{coding} << ", undirected " << undirected);
      ASSERT_EQ(tampered, coding);
      EXPECT_THAT(std::string(status[0].message()), HasSubstr("a peer sent a malformed record"));
      EXPECT_FALSE(status[1].ok());  // its peer left the exchange
    }
  }
}

TEST_F(GraphalyticsPartitionTest, ErrorsAreLoadGraphsOnEveryWorker) {
  std::string many;
  for (int i = 0; i < 100; ++i) many += std::to_string(i * 2) + "\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1\n2\n# c\n3\n2\n3\n", "1 2\n"},                        // listed twice
      {many + "40\n" + many.substr(0, 30), "0 2\n"},            // listed twice, across shares
      {many, "0 2\n4 6\n" + std::string(300, '\n') + "8 7\n"},  // unlisted, in a late share
      {many, "0 2\n4 x\n"},                                     // a text ID in an integer graph
      {"a\nb\n", "a b\nb c\n"},                                 // unlisted text ID
      {many + "1 2\n", "0 2\n"},                                // a bad vertex line
      {many, "0 2 1\n4 6\n"},                                   // missing weight
      {many, "0 2 1\n4 6 -1\n1 2\n"},                           // unlisted beats negative
      {many + "400\n400\n", "0 2\n4 6 7\n"},  // an edge parse error beats a repeat
  };
  for (const auto& [v, e] : cases) {
    for (bool directed : {true, false}) {
      ExpectSameError({.path = Write(v, e, directed)}, WeightUse::kNonNegative);
    }
  }
  // Without weights, a sender's round of small integer IDs takes the records' fast path, which
  // leaves a chunk with an unlisted vertex to the general walk.
  for (bool directed : {true, false}) {
    ExpectSameError(
        {.path = Write(many, "0 2\n4 6\n" + std::string(300, '\n') + "8 7\n", directed)},
        WeightUse::kIgnore);
  }
}

TEST_F(PartitionedLoadTest, SetupErrorsAreLoadGraphs) {
  ExpectSameError({.path = dir_.File("missing.el")}, WeightUse::kIgnore);
  ExpectSameError({.path = dir_.path().string()}, WeightUse::kIgnore);
  ExpectSameError({.path = dir_.Write("x.el", "1 2\n"), .format = "csv"}, WeightUse::kIgnore);
  ExpectSameError({.path = dir_.Write("x.properties", "graph.g.edge-file = g.e\n")},
                  WeightUse::kIgnore);
}

// No worker reads or holds the whole graph: each parses about its share of the lines and receives
// only the edges with an end it owns.
TEST_F(PartitionedLoadTest, NoWorkerHoldsTheWholeGraph) {
  const uint32_t kVertices = 4000, kEdges = 40000;
  const std::string path =
      dir_.Write("big.el", RandomEdgeList(11, Ids::kSmall, kVertices, kEdges, false));
  auto whole = LoadGraph({.path = path}, WeightUse::kIgnore);
  ASSERT_TRUE(whole.ok());
  for (bool in_edges : {false, true}) {
    auto workers = LoadOnWorkers<NoValue>({.path = path}, WeightUse::kIgnore, 4, in_edges, 4096);
    uint64_t lines = 0, records = 0;
    for (const auto& w : workers) {
      ASSERT_TRUE(w.status.ok()) << w.status;
      lines += w.stats.lines_parsed;
      records += w.stats.records_parsed;
      const double edges = static_cast<double>(whole->num_edges());
      EXPECT_LT(w.stats.records_parsed, 0.3 * edges);
      EXPECT_LT(w.stats.edges_received, (in_edges ? 0.6 : 0.35) * edges);
      EXPECT_LT(w.graph->topology().num_local(), 0.3 * whole->num_vertices());
      EXPECT_GT(w.stats.rounds, 2u);
    }
    EXPECT_EQ(records, whole->num_edges());  // each line parsed by one worker
  }
}

// --- A directory of edge-list files, read as their concatenation in byte-wise name order.

// Writes `pieces` (name, text) into a new directory `name` of dir_ and returns its path.
std::string WriteDirectory(const test::TempDir& dir, const std::string& name,
                           const std::vector<std::pair<std::string, std::string>>& pieces) {
  const std::filesystem::path at = dir / name;
  std::filesystem::create_directories(at);
  for (const auto& [file, text] : pieces) {
    std::ofstream(at / file, std::ios::binary) << text;
  }
  return at.string();
}

// `text` cut at line starts into `n` pieces of about equal size (some may be empty).
std::vector<std::string> CutAtLines(const std::string& text, size_t n) {
  std::vector<std::string> pieces;
  size_t begin = 0;
  for (size_t i = 1; i <= n; ++i) {
    size_t end = i == n ? text.size() : std::max(begin, text.size() * i / n);
    while (end < text.size() && end > 0 && text[end - 1] != '\n') ++end;
    pieces.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return pieces;
}

void ExpectSameInput(const GraphInput& got, const GraphInput& want) {
  EXPECT_EQ(got.external_ids, want.external_ids);
  EXPECT_EQ(got.src, want.src);
  EXPECT_EQ(got.dst, want.dst);
  EXPECT_EQ(got.weights, want.weights);
  EXPECT_EQ(got.symmetric, want.symmetric);
}

TEST_F(PartitionedLoadTest, ADirectoryIsTheConcatenationOfItsFilesInNameOrder) {
  for (Ids ids : {Ids::kSmall, Ids::kMixed}) {
    const std::string text = RandomEdgeList(21, ids, 60, 400, true);
    const std::vector<std::string> cut = CutAtLines(text, 5);
    // Names whose byte order is not the order they are written in, an empty file, a file that
    // does not end in a newline (its last line ends there), and what is not read: a name that
    // starts with '.', and a subdirectory.
    std::string last = cut[4];
    ASSERT_EQ(last.back(), '\n');
    last.pop_back();
    const std::string dir = WriteDirectory(dir_, ids == Ids::kSmall ? "small" : "mixed",
                                           {{"b", cut[2]},
                                            {"B-2", cut[1]},
                                            {"B-10", cut[0]},
                                            {"b0", ""},
                                            {"c.el", cut[3]},
                                            {"d", last},
                                            {".hidden", "not an edge list\n"}});
    std::filesystem::create_directories(std::filesystem::path(dir) / "sub");
    std::ofstream(std::filesystem::path(dir) / "sub" / "x") << "1 2 3 4 5\n";
    const std::string whole_file = dir_.Write("whole.el", text);
    for (bool undirected : {false, true}) {
      auto want =
          LoadGraph({.path = whole_file, .undirected = undirected}, WeightUse::kNonNegative);
      ASSERT_TRUE(want.ok()) << want.status();
      auto got = LoadGraph({.path = dir, .undirected = undirected}, WeightUse::kNonNegative);
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectSameInput(*got, *want);
      ExpectPartsEqualWhole<double>({.path = dir, .undirected = undirected},
                                    WeightUse::kNonNegative);
    }
  }
}

// Shares are byte ranges of the whole concatenation: a worker reads the end of one file and the
// start of the next, and only its share.
TEST_F(PartitionedLoadTest, SharesOfADirectorySpanItsFiles) {
  const std::string text = RandomEdgeList(22, Ids::kSmall, 3000, 8000, false);
  const std::vector<std::string> cut = CutAtLines(text, 7);
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < cut.size(); ++i) files.emplace_back("part-" + std::to_string(i), cut[i]);
  const std::string dir = WriteDirectory(dir_, "spans", files);
  const auto lines = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  auto whole = LoadGraph({.path = dir}, WeightUse::kIgnore);
  ASSERT_TRUE(whole.ok()) << whole.status();
  for (uint32_t n : {2u, 3u, 4u}) {
    auto workers = LoadOnWorkers<NoValue>({.path = dir}, WeightUse::kIgnore, n, false, 4096);
    uint64_t parsed = 0, records = 0;
    for (const auto& w : workers) {
      ASSERT_TRUE(w.status.ok()) << w.status;
      parsed += w.stats.lines_parsed;
      records += w.stats.records_parsed;
      EXPECT_LT(w.stats.lines_parsed, lines / n + lines / 20) << n << " workers";
    }
    EXPECT_EQ(parsed, lines) << n << " workers";
    EXPECT_EQ(records, whole->num_stored_edges()) << n << " workers";
  }
}

// More files than a process may keep open at once (1,500, of one to three lines each, some
// without a final newline): each worker closes a file once its share is past it.
TEST_F(PartitionedLoadTest, ADirectoryOfManySmallFiles) {
  std::mt19937_64 rng(24);
  std::vector<std::pair<std::string, std::string>> files;
  std::string whole;
  for (int i = 0; i < 1500; ++i) {
    std::string text;
    for (uint64_t l = 0, n = 1 + rng() % 3; l < n; ++l) {
      text += std::to_string(rng() % 400) + " " + std::to_string(rng() % 400) + "\n";
    }
    whole += text;
    if (rng() % 4 == 0) text.pop_back();
    char name[16];
    std::snprintf(name, sizeof name, "f%05d", i);
    files.emplace_back(name, text);
  }
  const std::string dir = WriteDirectory(dir_, "many", files);
  // Fewer descriptors than files, whatever the environment allows (restored at the end).
  rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 512);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  struct Restore {
    rlimit limit;
    ~Restore() { ::setrlimit(RLIMIT_NOFILE, &limit); }
  } restore{saved};
  auto want = LoadGraph({.path = dir_.Write("whole.el", whole)}, WeightUse::kIgnore);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = LoadGraph({.path = dir}, WeightUse::kIgnore);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectSameInput(*got, *want);
  ExpectPartsEqualWhole<NoValue>({.path = dir}, WeightUse::kIgnore, {64, 1 << 20});
}

// A bad line names its file in the directory and its line in that file, on every worker and in
// LoadGraph alike, wherever it falls among the shares.
TEST_F(PartitionedLoadTest, ABadLineInADirectoryNamesItsFileAndLine) {
  const std::string good = RandomEdgeList(23, Ids::kSmall, 40, 240, true);
  const std::vector<std::string> cut = CutAtLines(good, 4);
  auto lines_of = [](const std::string& t) {
    return static_cast<uint64_t>(std::count(t.begin(), t.end(), '\n'));
  };
  for (size_t file = 0; file < cut.size(); ++file) {
    for (const std::string& bad : {std::string("5\n"), std::string("1 2 -3\n")}) {
      std::vector<std::pair<std::string, std::string>> files;
      std::string text = cut[file];
      // After the file's middle line: line lines/2 + 1 of that file.
      size_t at = 0;
      for (uint64_t l = 0; l < lines_of(text) / 2; ++l) at = text.find('\n', at) + 1;
      text.insert(at, bad);
      for (size_t i = 0; i < cut.size(); ++i) {
        files.emplace_back("f" + std::to_string(i), i == file ? text : cut[i]);
      }
      const std::string dir = WriteDirectory(dir_, "bad" + std::to_string(file), files);
      const std::string where = dir + "/f" + std::to_string(file) + ":" +
                                std::to_string(lines_of(cut[file]) / 2 + 1) + ": ";
      auto whole = LoadGraph({.path = dir}, WeightUse::kNonNegative);
      ASSERT_FALSE(whole.ok());
      EXPECT_THAT(std::string(whole.status().message()), ::testing::StartsWith(where));
      ExpectSameError({.path = dir}, WeightUse::kNonNegative);
      std::filesystem::remove_all(dir);
    }
  }
  // A missing weight in one file where another file has one: both named.
  const std::string dir = WriteDirectory(
      dir_, "weights", {{"a", "1 2 1\n2 3 1\n"}, {"b", "# x\n3 4 1\n"}, {"c", "4 5 1\n5 6\n"}});
  auto whole = LoadGraph({.path = dir}, WeightUse::kNonNegative);
  EXPECT_EQ(std::string(whole.status().message()),
            dir + "/c:2: missing weight (" + dir + "/a:1 has one, so every edge needs one)");
  ExpectSameError({.path = dir}, WeightUse::kNonNegative, {1, 5, 64});
  // In the same file, only the line is given (as for one file).
  const std::string same = WriteDirectory(dir_, "same", {{"a", "# x\n"}, {"b", "1 2 1\n5 6\n"}});
  whole = LoadGraph({.path = same}, WeightUse::kNonNegative);
  EXPECT_EQ(std::string(whole.status().message()),
            same + "/b:2: missing weight (line 1 has one, so every edge needs one)");
  ExpectSameError({.path = same}, WeightUse::kNonNegative, {1, 64});
}

TEST_F(PartitionedLoadTest, ADirectoryWithoutInputFilesIsAnErrorNamingIt) {
  const std::string empty = WriteDirectory(dir_, "empty", {});
  const std::string hidden = WriteDirectory(dir_, "hidden", {{".a", "1 2\n"}});
  for (const std::string& dir : {empty, hidden}) {
    auto whole = LoadGraph({.path = dir}, WeightUse::kIgnore);
    ASSERT_FALSE(whole.ok());
    EXPECT_THAT(std::string(whole.status().message()), HasSubstr(dir + ": "));
    ExpectSameError({.path = dir}, WeightUse::kIgnore, {64});
  }
  // The partitioned binary form is not read as edge lists.
  const std::string parts =
      WriteDirectory(dir_, "parts", {{"lockstep-parts.manifest", "\x01\x02"}, {"p0", "\x03"}});
  auto whole = LoadGraph({.path = parts}, WeightUse::kIgnore);
  EXPECT_THAT(std::string(whole.status().message()), HasSubstr("lockstep-parts.manifest"));
  ExpectSameError({.path = parts}, WeightUse::kIgnore, {64});
}

TEST_F(PartitionedLoadTest, HaveVerticesAndResolveNames) {
  const std::string path = dir_.Write("n.el", RandomEdgeList(12, Ids::kMixed, 50, 150, false));
  auto whole = LoadGraph({.path = path}, WeightUse::kIgnore);
  ASSERT_TRUE(whole.ok());
  const std::vector<std::string> names = {whole->external_ids[0], "no-such-vertex",
                                          whole->external_ids.back(), "7777777"};
  for (uint32_t n = 1; n <= 4; ++n) {
    std::vector<absl::StatusOr<std::vector<bool>>> have(n, std::vector<bool>{});
    std::vector<absl::StatusOr<absl::flat_hash_map<uint32_t, std::string>>> resolved(
        n, absl::flat_hash_map<uint32_t, std::string>{});
    OnWorkers(n, [&](uint32_t r, Exchange& exchange) {
      auto part = LoadPartition({.path = path}, WeightUse::kIgnore, exchange, false);
      ASSERT_TRUE(part.ok()) << part.status();
      auto split = partition::Range::Whole(n);
      RankNames rank_names = part->names;
      auto graph = BuildPartGraph<NoValue>(*part, *split, r, false);
      ASSERT_TRUE(graph.ok());
      have[r] = HaveVertices(graph->topology(), exchange, names);
      // Each worker asks for the labels of its vertices' out-neighbours.
      std::vector<uint32_t> globals;
      const Topology& t = graph->topology();
      for (uint32_t v = 0; v < t.num_local(); ++v) {
        for (uint32_t s : t.out_slots(v)) globals.push_back(t.SlotGlobalIndex(s));
      }
      resolved[r] = ResolveNames(rank_names, exchange, globals);
      ASSERT_TRUE(resolved[r].ok());
      for (uint32_t g : globals) ASSERT_EQ(resolved[r]->at(g), whole->external_ids[g]);
    });
    for (uint32_t r = 0; r < n; ++r) {
      ASSERT_TRUE(have[r].ok());
      EXPECT_EQ(*have[r], (std::vector<bool>{true, false, true, false})) << n;
    }
  }
}

// A one-superstep program whose value is a vertex: the smallest global index among a vertex and
// its neighbours, printed as that vertex's ID. It sends nothing, so each worker's engine runs
// alone; what it exercises is the runner: the partitioned load, the facts Make checks, and the
// collective lookup of names in CompleteJob.
struct NearestProgram {
  using VertexValue = uint32_t;
  using EdgeValue = double;
  using Message = uint32_t;
  static constexpr bool kNeedsInEdges = true;

  void Compute(Context<NearestProgram>& ctx, std::span<const uint32_t>) const {
    uint32_t best = ctx.global_index();
    for (uint32_t slot : ctx.out_slots()) best = std::min(best, ctx.SlotGlobalIndex(slot));
    for (uint32_t slot : ctx.in_slots()) best = std::min(best, ctx.SlotGlobalIndex(slot));
    ctx.value() = best;
    ctx.VoteToHalt();
  }
};

struct NearestApp {
  using Program = NearestProgram;
  static constexpr WeightUse kWeights = WeightUse::kNonNegative;
  static std::vector<std::string> NamedVertices(const Params& params) {
    return {ParamString(params, "must-have")};
  }
  static absl::StatusOr<Program> Make(const Params& params, const GraphFacts& facts) {
    if (facts.Lacks(ParamString(params, "must-have"))) {
      return ParamError("must-have", "not in the graph");
    }
    return Program{};
  }
  static void Format(const Program&, uint32_t label, const VertexNames& names, std::string& out) {
    names.Append(label, out);
  }
};

// The sorted lines of the files.
std::vector<std::string> SortedLines(const std::vector<std::string>& paths) {
  std::vector<std::string> lines;
  for (const auto& path : paths) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Runs NearestApp as `run` does (worker_count 1, no exchange), or as n workers with an exchange,
// or (exchange false) as n workers that each load the whole input; returns each process's status
// and the output paths.
std::pair<std::vector<absl::Status>, std::vector<std::string>> RunNearest(const test::TempDir& dir,
                                                                          const GraphSource& graph,
                                                                          const Params& params,
                                                                          uint32_t n,
                                                                          bool exchange) {
  std::vector<absl::Status> status(n);
  std::vector<std::string> outputs(n);
  OnWorkers(n, [&](uint32_t r, Exchange& ex) {
    JobDetails details;
    details.work.job_id = "job";
    details.work.params = params;
    details.work.graph = graph;
    details.work.output = dir.File("part-" + std::to_string(n) + "-" + std::to_string(r));
    details.place.worker_index = r;
    details.place.worker_count = n;
    details.place.exchange = exchange ? &ex : nullptr;
    outputs[r] = details.work.output;
    runner::ProgramRunner<NearestApp> runner;
    auto executor = runner.StartJob(details, LocalExecutorFactory());
    if (!executor.ok()) {
      status[r] = executor.status();
      return;
    }
    if (auto st = (*executor)->RunToCompletion(); !st.ok()) {
      status[r] = st;
      return;
    }
    status[r] = runner.CompleteJob(details).status();
  });
  return {status, outputs};
}

// The runner hands each worker's load figures to JobDetails::on_partition_loaded (which a
// distributed worker logs), once per partitioned load; a whole-graph load has none.
TEST_F(PartitionedLoadTest, RunnerReportsWhatEachWorkerLoaded) {
  const std::string text = RandomEdgeList(14, Ids::kSmall, 80, 400, true);
  const std::string path = dir_.Write("f.el", text);
  const auto lines = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  for (bool exchange : {true, false}) {
    constexpr uint32_t kWorkers = 3;
    std::vector<std::vector<PartitionLoadStats>> reported(kWorkers);
    OnWorkers(kWorkers, [&](uint32_t r, Exchange& ex) {
      JobDetails details;
      details.work.params = {{"must-have", "1"}};
      details.work.graph = {.path = path};
      details.place.worker_index = r;
      details.place.worker_count = kWorkers;
      details.place.exchange = exchange ? &ex : nullptr;
      details.on_partition_loaded = [&, r](const PartitionLoadStats& s) {
        reported[r].push_back(s);
      };
      runner::ProgramRunner<NearestApp> runner;
      auto executor = runner.StartJob(details, LocalExecutorFactory());
      ASSERT_TRUE(executor.ok()) << executor.status();
    });
    uint64_t parsed = 0;
    for (uint32_t r = 0; r < kWorkers; ++r) {
      ASSERT_EQ(reported[r].size(), exchange ? 1u : 0u) << "worker " << r;
      if (!exchange) continue;
      parsed += reported[r][0].lines_parsed;
      EXPECT_LT(reported[r][0].lines_parsed, lines) << "worker " << r;
      EXPECT_GT(reported[r][0].edges_received, 0u) << "worker " << r;
    }
    if (exchange) {
      EXPECT_EQ(parsed, lines);
    }
  }
}

TEST_F(PartitionedLoadTest, RunnerLoadsByPartitionWhenGivenAnExchange) {
  const std::string path = dir_.Write("r.el", RandomEdgeList(13, Ids::kMixed, 60, 200, true));
  auto whole = LoadGraph({.path = path}, WeightUse::kNonNegative);
  ASSERT_TRUE(whole.ok());
  const Params params = {{"must-have", whole->external_ids[5]}};
  auto [local_status, local_out] = RunNearest(dir_, {.path = path}, params, 1, false);
  ASSERT_TRUE(local_status[0].ok()) << local_status[0];
  const std::vector<std::string> want = SortedLines(local_out);
  ASSERT_EQ(want.size(), whole->num_vertices());
  for (uint32_t n = 1; n <= 4; ++n) {
    for (bool exchange : {true, false}) {
      auto [status, out] = RunNearest(dir_, {.path = path}, params, n, exchange);
      for (const auto& st : status) ASSERT_TRUE(st.ok()) << st;
      EXPECT_EQ(SortedLines(out), want) << n << " workers, exchange " << exchange;
    }
  }
  // A parameter naming a vertex the graph lacks fails every worker alike, as it fails `run`.
  const Params missing = {{"must-have", "no-such-vertex"}};
  auto run_status = RunNearest(dir_, {.path = path}, missing, 1, false).first;
  EXPECT_EQ(run_status[0], ParamError("must-have", "not in the graph"));
  for (uint32_t n = 2; n <= 3; ++n) {
    for (const auto& st : RunNearest(dir_, {.path = path}, missing, n, true).first) {
      EXPECT_EQ(st, run_status[0]);
    }
  }
  // So does a bad line, with the whole-graph loader's error.
  const std::string bad = dir_.Write("bad.el", "1 2 1\n2 3 1\n3 4 x\n");
  auto bad_run = RunNearest(dir_, {.path = bad}, params, 1, false).first;
  auto bad_parts = RunNearest(dir_, {.path = bad}, params, 3, true).first;
  for (const auto& st : bad_parts) EXPECT_EQ(st, bad_run[0]);
}

}  // namespace
}  // namespace lockstep::load
