// The Graphalytics kernels (bfs, wcc, cdlp, lcc) against their serial oracles on random graphs
// with integer and string IDs, self-loops, parallel edges, isolated parts and hubs; and the same
// output bytes at 1 and 2 threads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "lockstep/apps/bfs/bfs.h"
#include "lockstep/apps/cdlp/cdlp.h"
#include "lockstep/apps/common/most_frequent.h"
#include "lockstep/apps/lcc/lcc.h"
#include "lockstep/apps/sssp/sssp.h"
#include "lockstep/apps/wcc/wcc.h"
#include "lockstep/load/source.h"
#include "lockstep/runner/program_runner.h"
#include "minreach.h"  // examples/minreach
#include "tbb/global_control.h"
#include "util/engine_cluster.h"
#include "util/temp_dir.h"

namespace lockstep::apps {
namespace {

namespace fs = std::filesystem;

struct RandomGraph {
  std::string path;
  bool undirected;
};

// Writes a random edge list: a few hubs, a sparse remainder, some self-loops and repeats.
RandomGraph WriteGraph(const fs::path& dir, uint32_t seed, uint32_t n, uint32_t m, bool strings,
                       bool undirected) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> any(0, n - 1), hub(0, 4), coin(0, 9);
  auto name = [&](uint32_t v) {
    return strings ? "v" + std::to_string(v * 7919 % 100003) : std::to_string(v * 13 + 5);
  };
  const fs::path path = dir / ("g" + std::to_string(seed) + ".el");
  std::ofstream out(path);
  for (uint32_t e = 0; e < m; ++e) {
    const uint32_t a = coin(rng) < 3 ? hub(rng) : any(rng);
    const uint32_t b = coin(rng) == 0 ? a : any(rng) % (n * 3 / 4);  // a quarter stay apart
    out << name(a) << ' ' << name(b) << '\n';
    if (coin(rng) == 0) out << name(a) << ' ' << name(b) << '\n';
  }
  return {path.string(), undirected};
}

template <class App>
std::pair<std::string, std::vector<typename App::Program::VertexValue>> RunApp(
    const RandomGraph& g, const bsp::Params& params, int threads) {
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
  runner::ProgramRunner<App> runner;
  runner::JobDetails job;
  job.work.graph = {g.path, "edgelist", g.undirected};
  job.work.params = params;
  job.work.output = g.path + ".out";
  auto executor = runner.StartJob(job, bsp::LocalExecutorFactory());
  EXPECT_TRUE(executor.ok()) << executor.status();
  EXPECT_TRUE((*executor)->RunToCompletion().ok());
  EXPECT_TRUE(runner.CompleteJob(job).ok());
  std::ifstream in(job.work.output);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto values = runner.engine()->values();
  return {text, {values.begin(), values.end()}};
}

class KernelsTest : public ::testing::TestWithParam<std::tuple<uint32_t, bool, bool>> {
 protected:
  void SetUp() override {
    const auto [seed, strings, undirected] = GetParam();
    graph_ = WriteGraph(dir_.path(), seed, 3000, 9000, strings, undirected);
    input_ =
        *load::LoadGraph({graph_.path, "edgelist", graph_.undirected}, bsp::WeightUse::kIgnore);
  }

  test::TempDir dir_{"lockstep-kernels"};
  RandomGraph graph_;
  bsp::GraphInput input_;
};

TEST_P(KernelsTest, BfsMatchesOracle) {
  const uint32_t source = 7;
  auto [text1, depth] = RunApp<bfs::App>(graph_, {{"source", input_.external_ids[source]}}, 1);
  auto [text2, depth2] = RunApp<bfs::App>(graph_, {{"source", input_.external_ids[source]}}, 2);
  EXPECT_EQ(depth, bfs::Oracle(input_, source));
  EXPECT_EQ(text1, text2);
}

// Runs App on 1 to 4 parts with its `start` parameter at `step` (its partition step, docs/design.md
// §3.9) and at `plain`: every vertex ends with `expected`'s value, and one part with the step ends
// after superstep 0.
template <class App, class V>
void ExpectOnEveryPartCount(const bsp::GraphInput& input, bsp::Params params,
                            const std::string& step, const std::string& plain,
                            const std::vector<V>& expected) {
  for (const std::string& start : {step, plain}) {
    params["start"] = start;
    auto program = App::Make(params, bsp::FactsOf<App>(params, input));
    ASSERT_TRUE(program.ok()) << program.status();
    for (uint32_t parts : {1u, 2u, 3u, 4u}) {
      SCOPED_TRACE(::testing::Message() << start << ", " << parts << " parts");
      test::EngineCluster<typename App::Program> cluster(*program, input, parts);
      ASSERT_TRUE(cluster.Connect().ok());
      ASSERT_TRUE(cluster.RunToCompletion().ok());
      const auto values = cluster.Values();
      ASSERT_EQ(values.size(), expected.size());
      for (size_t v = 0; v < expected.size(); ++v) {
        EXPECT_EQ(values.at(input.external_ids[v]), expected[v])
            << "vertex " << input.external_ids[v];
      }
      if (parts == 1 && start == step) {
        EXPECT_EQ(cluster.superstep(), 1u) << "one part ends after superstep 0";
      }
    }
  }
}

// BFS with the direction-optimising search where a part stands alone and without it, from a
// source in the middle of the input and from the first vertex: the oracle's depths.
TEST_P(KernelsTest, BfsOnEveryPartCountMatchesOracle) {
  for (const uint32_t source : {7u, 0u}) {
    ExpectOnEveryPartCount<bfs::App>(input_, {{"source", input_.external_ids[source]}}, "search",
                                     "source", bfs::Oracle(input_, source));
  }
}

// SSSP on a graph without weights: its partition step searches as BFS's does (every weight is 1),
// and the distances are the BFS oracle's depths, on 1 to 4 parts.
TEST_P(KernelsTest, SsspWithoutWeightsGivesTheDepths) {
  auto input = load::LoadGraph({graph_.path, "edgelist", graph_.undirected}, sssp::App::kWeights);
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_TRUE(input->weights.empty());
  const uint32_t source = 7;
  const std::vector<int64_t> depth = bfs::Oracle(input_, source);
  const bsp::Params params{{"source", input_.external_ids[source]}};
  auto program = sssp::App::Make(params, bsp::FactsOf<sssp::App>(params, *input));
  ASSERT_TRUE(program.ok()) << program.status();
  for (uint32_t parts : {1u, 2u, 3u, 4u}) {
    test::EngineCluster<sssp::Program> cluster(*program, *input, parts);
    ASSERT_TRUE(cluster.Connect().ok());
    ASSERT_TRUE(cluster.RunToCompletion().ok());
    const auto values = cluster.Values();
    for (size_t v = 0; v < depth.size(); ++v) {
      const double want =
          depth[v] == bfs::kUnreachable ? sssp::kUnreachable : static_cast<double>(depth[v]);
      EXPECT_EQ(values.at(input_.external_ids[v]), want) << parts << " parts";
    }
    if (parts == 1) {
      EXPECT_EQ(cluster.superstep(), 1u);
    }
  }
}

TEST_P(KernelsTest, WccMatchesOracleWithSmallestIdLabels) {
  auto [text1, labels] = RunApp<wcc::App>(graph_, {}, 1);
  auto [text2, labels2] = RunApp<wcc::App>(graph_, {}, 2);
  EXPECT_EQ(labels, wcc::Oracle(input_));
  EXPECT_EQ(text1, text2);
}

// WCC with each part's union-find before superstep 0 and without it: the oracle's labels. The
// graphs have hubs (far more edges than the two sampled), vertices apart from the rest, and on the
// directed ones vertices reached only by in-edges.
TEST_P(KernelsTest, WccOnEveryPartCountMatchesOracle) {
  ExpectOnEveryPartCount<wcc::App>(input_, {}, "union-find", "own-label", wcc::Oracle(input_));
}

// The union-find's skip: a hub in the largest component whose edge to a small component comes
// after the two sampled neighbours, at both ends. Directed, the small component reaches it by an
// in-edge; undirected, by its third out-edge. Both ways, at 1 and 2 threads and on 1 to 3 parts.
TEST(WccUnionFindTest, AVertexBeyondTheSampledEdgesOfTheLargestComponentJoinsIt) {
  test::TempDir dir("lockstep-wcc-skip");
  const fs::path path = dir.path() / "skip.el";
  {
    std::ofstream out(path);
    for (uint32_t v = 10; v < 60; ++v) out << "5 " << v << "\n" << v << " " << v + 1 << "\n";
    // 200's own edges come first, so its edge with the hub is its third (undirected) or an
    // in-edge (directed); the hub's edge to it is its last.
    out << "200 201\n200 202\n5 200\n";
    out << "300 301\n";  // a component of its own
  }
  for (bool undirected : {false, true}) {
    SCOPED_TRACE(undirected ? "undirected" : "directed");
    const RandomGraph g{path.string(), undirected};
    const bsp::GraphInput input =
        *load::LoadGraph({g.path, "edgelist", undirected}, bsp::WeightUse::kIgnore);
    const std::vector<uint32_t> expected = wcc::Oracle(input);
    auto [text1, labels1] = RunApp<wcc::App>(g, {}, 1);
    auto [text2, labels2] = RunApp<wcc::App>(g, {}, 2);
    EXPECT_EQ(labels1, expected);
    EXPECT_EQ(text1, text2);
    EXPECT_EQ(labels1[input.external_ids.size() - 3], 0u) << "202 joins the hub's component";
    auto program = wcc::App::Make({}, bsp::FactsOf<wcc::App>({}, input));
    for (uint32_t parts : {2u, 3u}) {
      test::EngineCluster<wcc::Program> cluster(*program, input, parts);
      ASSERT_TRUE(cluster.Connect().ok());
      ASSERT_TRUE(cluster.RunToCompletion().ok());
      const auto values = cluster.Values();
      for (size_t v = 0; v < expected.size(); ++v) {
        EXPECT_EQ(values.at(input.external_ids[v]), expected[v]) << parts << " parts";
      }
    }
  }
}

TEST_P(KernelsTest, CdlpMatchesOracle) {
  auto [text1, labels] = RunApp<cdlp::App>(graph_, {{"max-iterations", "6"}}, 1);
  auto [text2, labels2] = RunApp<cdlp::App>(graph_, {{"max-iterations", "6"}}, 2);
  EXPECT_EQ(labels, cdlp::Oracle(input_, 6));
  EXPECT_EQ(text1, text2);
}

TEST_P(KernelsTest, LccMatchesOracleAtAnyPhaseCount) {
  const std::vector<double> expected = lcc::Oracle(input_);
  for (const char* phases : {"1", "3"}) {
    auto [text1, values] = RunApp<lcc::App>(graph_, {{"phases", phases}}, 1);
    auto [text2, values2] = RunApp<lcc::App>(graph_, {{"phases", phases}}, 2);
    ASSERT_EQ(values.size(), expected.size());
    for (size_t v = 0; v < values.size(); ++v) {
      const double k = static_cast<double>(values[v].k);
      const double got =
          values[v].k < 2 ? 0.0 : static_cast<double>(values[v].edges) / (k * (k - 1));
      EXPECT_NEAR(got, expected[v], 1e-12) << "vertex " << input_.external_ids[v];
    }
    EXPECT_EQ(text1, text2);
  }
}

// LCC on the engine's neighbour lists split over 1 to 4 parts, each receiving its remote
// neighbours' lists from their owners, intersected through the table of marks and by merging
// (mark_up_to 0): the oracle's coefficients.
TEST_P(KernelsTest, LccOnEveryPartCountMatchesOracle) {
  const std::vector<double> expected = lcc::Oracle(input_);
  lcc::Program program;
  program.phases = 2;
  for (const uint64_t marks : {program.mark_up_to, uint64_t{0}}) {
    program.mark_up_to = marks;
    for (uint32_t parts : {1u, 2u, 3u, 4u}) {
      SCOPED_TRACE(::testing::Message() << parts << " parts, marks up to " << marks);
      test::EngineCluster<lcc::Program> cluster(program, input_, parts);
      ASSERT_TRUE(cluster.Connect().ok());
      ASSERT_TRUE(cluster.RunToCompletion().ok());
      const auto values = cluster.Values();
      ASSERT_EQ(values.size(), expected.size());
      for (size_t v = 0; v < expected.size(); ++v) {
        const lcc::Value& got = values.at(input_.external_ids[v]);
        const double k = static_cast<double>(got.k);
        EXPECT_NEAR(got.k < 2 ? 0.0 : static_cast<double>(got.edges) / (k * (k - 1)), expected[v],
                    1e-12)
            << "vertex " << input_.external_ids[v];
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RandomGraphs, KernelsTest,
                         ::testing::Values(std::make_tuple(1u, false, false),
                                           std::make_tuple(2u, true, false),
                                           std::make_tuple(3u, false, true),
                                           std::make_tuple(4u, true, true)));

// 2000 vertices, 6000 edges with weights 0 to 40; the source, "0", reaches most vertices along
// directed edges too.
fs::path WriteWeightedGraph(const fs::path& dir) {
  std::mt19937 rng(29);
  const fs::path path = dir / "w.el";
  std::ofstream out(path);
  std::uniform_int_distribution<uint32_t> any(0, 1999), weight(0, 40);
  for (int e = 0; e < 6000; ++e) {
    out << (e < 4 ? 0 : any(rng)) << ' ' << any(rng) << ' ' << weight(rng) << '\n';
  }
  return path;
}

// The weighted graph, directed or not, its source's index and the oracle's distances from it.
struct WeightedCase {
  bsp::GraphInput input;
  uint32_t source = 0;
  std::vector<double> oracle;
};

WeightedCase LoadWeighted(const fs::path& path, bool undirected) {
  WeightedCase c;
  auto input =
      load::LoadGraph({path.string(), "edgelist", undirected}, bsp::WeightUse::kNonNegative);
  EXPECT_TRUE(input.ok()) << input.status();
  c.input = *std::move(input);
  const auto& ids = c.input.external_ids;
  c.source = static_cast<uint32_t>(std::find(ids.begin(), ids.end(), "0") - ids.begin());
  EXPECT_LT(c.source, ids.size());
  c.oracle = sssp::Oracle(c.input, c.source);
  const auto unreachable = std::count(c.oracle.begin(), c.oracle.end(), sssp::kUnreachable);
  EXPECT_GT(unreachable, 0);
  EXPECT_LT(unreachable, static_cast<long>(c.oracle.size() / 4));
  return c;
}

// SSSP pushes (a compare-and-swap minimum per target) or pulls per superstep, and by choice
// pushes the cheapest of a large frontier first and holds the rest back (kAnyOrder;
// docs/design.md §3.4). Without the partition step, on 1 to 4 parts, forced either way or chosen,
// directed or undirected: every distance is the oracle's, and values were held back.
TEST(SsspDirectionTest, EveryPartCountAndDirectionGivesTheOraclesDistances) {
  test::TempDir dir("lockstep-sssp-direction");
  const fs::path path = WriteWeightedGraph(dir.path());
  for (bool undirected : {false, true}) {
    SCOPED_TRACE(undirected ? "undirected" : "directed");
    const WeightedCase c = LoadWeighted(path, undirected);
    const bsp::GraphInput* input = &c.input;
    const std::vector<double>& oracle = c.oracle;
    sssp::Program program;
    program.source = bsp::VertexIdFromExternal("0");
    program.delta_stepping = false;
    using Direction = bsp::Engine<sssp::Program>::Direction;
    uint64_t held_back = 0;
    for (uint32_t parts : {1u, 2u, 3u, 4u}) {
      for (Direction d : {Direction::kChoose, Direction::kPush, Direction::kPull}) {
        SCOPED_TRACE(::testing::Message() << parts << " parts, direction " << static_cast<int>(d));
        test::EngineCluster<sssp::Program> cluster(program, *input, parts);
        ASSERT_TRUE(cluster.Connect().ok());
        for (uint32_t p = 0; p < parts; ++p) cluster.engine(p).SetDirection(d);
        ASSERT_TRUE(cluster.RunToCompletion().ok());
        for (uint32_t p = 0; p < parts; ++p) {
          const uint64_t held = cluster.engine(p).held_back_supersteps();
          if (d != Direction::kChoose) {
            EXPECT_EQ(held, 0u);
          }
          held_back += held;
        }
        const auto values = cluster.Values();
        ASSERT_EQ(values.size(), oracle.size());
        for (size_t v = 0; v < oracle.size(); ++v) {
          EXPECT_EQ(values.at(input->external_ids[v]), oracle[v]) << input->external_ids[v];
        }
      }
    }
    EXPECT_GT(held_back, 0u);
  }
}

// The partition step's delta-stepping (docs/design.md §3.9; one part) and the parts that skip it
// (2 to 4), directed or undirected, with buckets chosen from the weights, narrower than the
// lightest positive weight, so narrow that distances run past the buckets a thread keeps apart
// (and past any integer bucket), and wider than any path: every distance is the oracle's, and one
// part ends after superstep 0.
TEST(SsspDeltaSteppingTest, EveryPartCountAndBucketWidthGivesTheOraclesDistances) {
  test::TempDir dir("lockstep-sssp-delta");
  const fs::path path = WriteWeightedGraph(dir.path());
  for (bool undirected : {false, true}) {
    const WeightedCase c = LoadWeighted(path, undirected);
    for (const char* delta : {"auto", "0.5", "0.01", "1e-300", "100000"}) {
      const bsp::Params params{{"source", "0"}, {"delta", delta}};
      auto program = sssp::App::Make(params, bsp::FactsOf<sssp::App>(params, c.input));
      ASSERT_TRUE(program.ok()) << program.status();
      for (uint32_t parts : {1u, 2u, 3u, 4u}) {
        SCOPED_TRACE(::testing::Message() << (undirected ? "undirected" : "directed") << ", delta "
                                          << delta << ", " << parts << " parts");
        test::EngineCluster<sssp::Program> cluster(*program, c.input, parts);
        ASSERT_TRUE(cluster.Connect().ok());
        ASSERT_TRUE(cluster.RunToCompletion().ok());
        const auto values = cluster.Values();
        ASSERT_EQ(values.size(), c.oracle.size());
        for (size_t v = 0; v < c.oracle.size(); ++v) {
          EXPECT_EQ(values.at(c.input.external_ids[v]), c.oracle[v]) << c.input.external_ids[v];
        }
        if (parts == 1) {
          EXPECT_EQ(cluster.superstep(), 1u) << "one part ends after superstep 0";
        }
      }
    }
  }
}

// A distance exactly at a bucket's start, where delta * bucket rounds above it (0.63 * 3 > 1.89,
// though 1.89 / 0.63 == 3): the vertex is still relaxed. With the width chosen from these weights
// (0.63) and others that meet such sums.
TEST(SsspDeltaSteppingTest, ADistanceAtABucketsRoundedStartIsRelaxed) {
  test::TempDir dir("lockstep-sssp-rounding");
  const fs::path path = dir.path() / "r.el";
  std::ofstream(path) << "s v 1.89\nv x 0.63\nx y 1.7\ny z 3.4999999999999996\nz q 0.25\n";
  const WeightedCase c = [&] {
    WeightedCase w;
    auto input = load::LoadGraph({path.string(), "edgelist", false}, bsp::WeightUse::kNonNegative);
    EXPECT_TRUE(input.ok()) << input.status();
    w.input = *std::move(input);
    const auto& ids = w.input.external_ids;
    w.source = static_cast<uint32_t>(std::find(ids.begin(), ids.end(), "s") - ids.begin());
    w.oracle = sssp::Oracle(w.input, w.source);
    return w;
  }();
  ASSERT_EQ(std::count(c.oracle.begin(), c.oracle.end(), sssp::kUnreachable), 0);
  for (const char* delta : {"auto", "0.63", "0.1", "0.7"}) {
    SCOPED_TRACE(delta);
    const bsp::Params params{{"source", "s"}, {"delta", delta}};
    auto program = sssp::App::Make(params, bsp::FactsOf<sssp::App>(params, c.input));
    ASSERT_TRUE(program.ok()) << program.status();
    test::EngineCluster<sssp::Program> cluster(*program, c.input, 1);
    ASSERT_TRUE(cluster.RunToCompletion().ok());
    const auto values = cluster.Values();
    for (size_t v = 0; v < c.oracle.size(); ++v) {
      EXPECT_EQ(values.at(c.input.external_ids[v]), c.oracle[v]) << c.input.external_ids[v];
    }
  }
}

// The step's parameters are checked when the program is made.
TEST(SsspDeltaSteppingTest, ABadStartOrDeltaIsRefused) {
  const bsp::GraphFacts none;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"start", "bellman"}, {"delta", "0"}, {"delta", "-1"}, {"delta", "inf"}, {"delta", "x"}};
  for (const auto& [name, value] : bad) {
    const auto program = sssp::App::Make({{"source", "0"}, {name, value}}, none);
    ASSERT_FALSE(program.ok()) << name << " " << value;
    EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument) << program.status();
    EXPECT_EQ(program.status().message().find(name + ":"), 0u) << program.status();
  }
  EXPECT_TRUE(sssp::App::Make({{"source", "0"}, {"delta", "2.5"}}, none).ok());
  EXPECT_FALSE(bfs::App::Make({{"source", "0"}, {"start", "dfs"}}, none).ok());
}

// examples/minreach declares only its combiner (min, with Improves) and that it broadcasts: the
// engine pushes and pulls it by itself, on any part count, with the oracle's answer.
TEST_P(KernelsTest, AnExampleProgramGetsPushAndPullForFree) {
  // The oracle: vertices in index order, each labelling what it reaches that is not labelled yet
  // (what a labelled vertex reaches is labelled already).
  const size_t n = input_.num_vertices();
  const bsp::GraphInput all = bsp::WithReverseEdges(input_);
  std::vector<std::vector<uint32_t>> out(n);
  for (size_t e = 0; e < all.num_edges(); ++e) out[all.src[e]].push_back(all.dst[e]);
  std::vector<uint32_t> expected(n, bsp::kNoVertex);
  for (uint32_t v = 0; v < n; ++v) {
    if (expected[v] != bsp::kNoVertex) continue;
    std::vector<uint32_t> queue = {v};
    expected[v] = v;
    for (size_t i = 0; i < queue.size(); ++i) {
      for (uint32_t w : out[queue[i]]) {
        if (expected[w] == bsp::kNoVertex) {
          expected[w] = v;
          queue.push_back(w);
        }
      }
    }
  }
  for (uint32_t parts : {1u, 2u, 3u}) {
    SCOPED_TRACE(::testing::Message() << parts << " parts");
    test::EngineCluster<example::MinReach> cluster(example::MinReach{}, input_, parts);
    ASSERT_TRUE(cluster.Connect().ok());
    ASSERT_TRUE(cluster.RunToCompletion().ok());
    uint64_t pushed = 0, pulled = 0;
    for (uint32_t p = 0; p < parts; ++p) {
      pushed += cluster.engine(p).pushed_supersteps();
      pulled += cluster.engine(p).pulled_supersteps();
    }
    EXPECT_GT(pushed, 0u);
    EXPECT_GT(pulled, 0u);
    const auto values = cluster.Values();
    for (size_t v = 0; v < n; ++v) {
      EXPECT_EQ(values.at(input_.external_ids[v]), expected[v]) << input_.external_ids[v];
    }
  }
  auto [text1, values1] = RunApp<example::MinReachApp>(graph_, {}, 1);
  auto [text2, values2] = RunApp<example::MinReachApp>(graph_, {}, 2);
  EXPECT_EQ(text1, text2);
  EXPECT_EQ(values1, expected);
}

// Long lists take a radix sort: the same label as counting every label, ties to the smallest.
TEST(CdlpTest, MostFrequentOfLongListsCountsEveryLabel) {
  std::mt19937 rng(3);
  for (size_t size : {1u, 7u, 255u, 256u, 1000u, 5000u}) {
    for (uint32_t range : {3u, 300u, 70000u, 0xfffffffeu}) {
      std::uniform_int_distribution<uint32_t> any(0, range);
      std::vector<uint32_t> labels(size);
      for (uint32_t& l : labels) l = any(rng);
      std::map<uint32_t, size_t> count;
      for (uint32_t l : labels) ++count[l];
      uint32_t want = 0;
      size_t most = 0;
      for (const auto& [l, c] : count) {
        if (c > most) {
          want = l;
          most = c;
        }
      }
      EXPECT_EQ(common::MostFrequent(labels), want) << size << " labels up to " << range;
    }
  }
}

TEST(CdlpTest, MostFrequentBreaksTiesToTheSmallestLabel) {
  std::vector<uint32_t> labels = {9, 4, 9, 4, 7};
  EXPECT_EQ(common::MostFrequent(labels), 4u);
  labels = {3, 8, 8};
  EXPECT_EQ(common::MostFrequent(labels), 8u);
}

}  // namespace
}  // namespace lockstep::apps
