// Every app against its serial oracle on random graphs with the awkward cases (integer, 64-bit and
// text IDs, dangling vertices, self-loops, parallel edges, several components) and on a Kronecker
// graph, and every app's output byte-identical at 1, 2 and 4 threads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "app_test_util.h"
#include "lockstep/apps/coloring/coloring.h"
#include "lockstep/apps/pagerank/pagerank.h"
#include "lockstep/apps/sssp/sssp.h"
#include "lockstep/generate/generate.h"

namespace lockstep::apps {
namespace {

using ::lockstep::test::TempDir;
using testing::ByInputIndex;
using testing::IdKind;
using testing::LoadOrDie;
using testing::MakeRandomGraph;
using testing::RandomGraph;
using testing::RandomGraphOptions;
using testing::RunApp;
using testing::RunResult;

constexpr size_t kThreadCounts[] = {1, 2, 4};

// Runs `app` at every thread count; all outputs must be byte-identical. Returns the first run.
RunResult RunEverywhere(const catalogue::AppInfo& app, const bsp::GraphSource& graph,
                        const bsp::Params& params) {
  RunResult first;
  for (size_t threads : kThreadCounts) {
    RunResult run = RunApp(app, graph, params, threads);
    EXPECT_TRUE(run.status.ok()) << app.name << " at " << threads << " threads: " << run.status;
    if (threads == kThreadCounts[0]) {
      first = std::move(run);
    } else {
      EXPECT_TRUE(run.output == first.output)
          << app.name << ": output at " << threads << " threads differs from 1 thread";
    }
  }
  return first;
}

// Relative 1e-9 (absolute below 1); infinity only matches infinity.
void ExpectClose(const std::vector<double>& got, const std::vector<double>& want,
                 const bsp::GraphInput& input, double tolerance, bool relative) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t v = 0; v < want.size(); ++v) {
    if (std::isinf(want[v]) || std::isinf(got[v])) {
      EXPECT_EQ(got[v], want[v]) << "vertex " << input.external_ids[v];
      continue;
    }
    const double bound = relative ? tolerance * std::max(1.0, std::abs(want[v])) : tolerance;
    EXPECT_NEAR(got[v], want[v], bound) << "vertex " << input.external_ids[v];
  }
}

void CheckPageRank(const bsp::GraphSource& graph) {
  const RunResult run =
      RunEverywhere(pagerank::Info(), graph, {{"tolerance", "1e-13"}, {"max-iterations", "1000"}});
  const bsp::GraphInput input = LoadOrDie(graph, bsp::WeightUse::kIgnore);
  const std::vector<double> got = ByInputIndex(run, input);
  ExpectClose(got, pagerank::Oracle(input, 0.85, 1e-13, 1000), input, 1e-9, false);
  double sum = 0;
  for (double x : got) sum += x;
  EXPECT_NEAR(sum, 1.0, 1e-9);
}

void CheckSssp(const bsp::GraphSource& graph, uint64_t seed) {
  const bsp::GraphInput input = LoadOrDie(graph, bsp::WeightUse::kNonNegative);
  ASSERT_GT(input.num_vertices(), 0u);
  const uint32_t source = static_cast<uint32_t>(seed * 7919 % input.num_vertices());
  const RunResult run =
      RunEverywhere(sssp::Info(), graph, {{"source", input.external_ids[source]}});
  const std::vector<double> got = ByInputIndex(run, input);
  const std::vector<double> want = sssp::Oracle(input, source);
  ExpectClose(got, want, input, 1e-9, true);
  // With several components some vertices are unreachable: written as "Infinity".
  const auto unreachable =
      std::find_if(want.begin(), want.end(), [](double d) { return std::isinf(d); });
  if (unreachable != want.end()) {
    EXPECT_EQ(run.values.at(input.external_ids[unreachable - want.begin()]), "Infinity");
  }
}

void CheckColoring(const bsp::GraphSource& graph, uint64_t seed) {
  const RunResult run = RunEverywhere(coloring::Info(), graph, {{"seed", std::to_string(seed)}});
  const bsp::GraphInput input = LoadOrDie(graph, bsp::WeightUse::kIgnore);
  std::vector<int64_t> colors;
  for (const std::string& id : input.external_ids) {
    auto it = run.values.find(id);
    ASSERT_NE(it, run.values.end()) << id;
    colors.push_back(std::stoll(it->second));
  }
  EXPECT_TRUE(coloring::Verify(input, colors).ok()) << coloring::Verify(input, colors);
  // An independent, tighter check: neighbours counted once whatever the edge direction or
  // multiplicity; a Jones-Plassmann colour never exceeds the vertex's own neighbour count.
  std::vector<std::set<uint32_t>> neighbours(input.num_vertices());
  for (size_t e = 0; e < input.num_stored_edges(); ++e) {
    const uint32_t u = input.src[e], v = input.dst[e];
    if (u == v) continue;
    EXPECT_NE(colors[u], colors[v]) << input.external_ids[u] << " - " << input.external_ids[v];
    neighbours[u].insert(v);
    neighbours[v].insert(u);
  }
  size_t max_degree = 0;
  for (size_t v = 0; v < input.num_vertices(); ++v) {
    max_degree = std::max(max_degree, neighbours[v].size());
    EXPECT_GE(colors[v], 0);
    EXPECT_LE(static_cast<size_t>(colors[v]), neighbours[v].size()) << input.external_ids[v];
  }
  EXPECT_LE(std::set<int64_t>(colors.begin(), colors.end()).size(), max_degree + 1);
}

std::string IdKindName(IdKind kind) {
  switch (kind) {
    case IdKind::kInteger:
      return "Integer";
    case IdKind::kWide:
      return "Wide";
    case IdKind::kText:
      return "Text";
  }
  return "?";
}

// (seed, ID kind, undirected)
using RandomCase = std::tuple<uint64_t, IdKind, bool>;

class RandomGraphTest : public ::testing::TestWithParam<RandomCase> {
 protected:
  RandomGraphOptions Options(bool weights) const {
    const uint64_t seed = std::get<0>(GetParam());
    RandomGraphOptions options;
    options.seed = seed;
    options.ids = std::get<1>(GetParam());
    // Sizes from a few vertices to several engine blocks (1024 vertices each).
    options.vertices =
        static_cast<uint32_t>(std::vector<uint32_t>{7, 60, 900, 3000, 5000}[seed % 5]);
    options.components = static_cast<uint32_t>(1 + seed % 4);
    options.average_degree = 1.0 + static_cast<double>(seed % 3);
    options.weights = weights;
    return options;
  }
  bool undirected() const { return std::get<2>(GetParam()); }

  TempDir dir_;
};

TEST_P(RandomGraphTest, GraphIsReadAsWritten) {
  const RandomGraph graph = MakeRandomGraph(Options(true));
  const bsp::GraphInput input =
      LoadOrDie({dir_.Write("g.el", graph.text), "", undirected()}, bsp::WeightUse::kNonNegative);
  const std::set<std::string> want(graph.ids.begin(), graph.ids.end());
  const std::set<std::string> got(input.external_ids.begin(), input.external_ids.end());
  EXPECT_TRUE(want == got);
  size_t self_loops = 0;
  for (size_t e = 0; e < input.num_stored_edges(); ++e) self_loops += input.src[e] == input.dst[e];
  if (undirected()) {
    EXPECT_EQ(input.num_edges(), 2 * graph.edges - self_loops);
  } else {
    EXPECT_EQ(input.num_edges(), graph.edges);
  }
  EXPECT_EQ(input.symmetric, undirected());
  EXPECT_EQ(input.weights.size(), input.num_stored_edges());
}

TEST_P(RandomGraphTest, PageRankMatchesOracle) {
  const RandomGraph graph = MakeRandomGraph(Options(false));
  CheckPageRank({dir_.Write("g.el", graph.text), "", undirected()});
}

TEST_P(RandomGraphTest, SsspMatchesOracle) {
  const RandomGraph graph = MakeRandomGraph(Options(true));
  CheckSssp({dir_.Write("g.el", graph.text), "", undirected()}, std::get<0>(GetParam()));
}

TEST_P(RandomGraphTest, UnweightedSsspMatchesOracle) {
  const RandomGraph graph = MakeRandomGraph(Options(false));
  CheckSssp({dir_.Write("g.el", graph.text), "", undirected()}, std::get<0>(GetParam()) + 1);
}

TEST_P(RandomGraphTest, ColoringIsProper) {
  const RandomGraph graph = MakeRandomGraph(Options(false));
  CheckColoring({dir_.Write("g.el", graph.text), "", undirected()}, std::get<0>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomGraphTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
                                            ::testing::Values(IdKind::kInteger, IdKind::kWide,
                                                              IdKind::kText),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<RandomCase>& param_info) {
                           return "Seed" + std::to_string(std::get<0>(param_info.param)) +
                                  IdKindName(std::get<1>(param_info.param)) +
                                  (std::get<2>(param_info.param) ? "Undirected" : "Directed");
                         });

// A Kronecker graph from the `generate` command's generator, read with --undirected.
class KroneckerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    generate::GenerateOptions options;
    options.kind = "kronecker";
    options.scale = 12;
    auto edges = generate::GenerateEdges(options);
    ASSERT_TRUE(edges.ok()) << edges.status();
    dir_ = new TempDir;
    std::string text;
    for (const generate::GeneratedEdge& e : *edges) {
      text += std::to_string(e.u) + " " + std::to_string(e.v) + "\n";
    }
    path_ = dir_->Write("kronecker-12.el", text);
    first_ = std::to_string(edges->front().u);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static bsp::GraphSource Graph() { return {path_, "", true}; }

  static TempDir* dir_;
  static std::string path_;
  static std::string first_;
};

TempDir* KroneckerTest::dir_ = nullptr;
std::string KroneckerTest::path_;
std::string KroneckerTest::first_;

TEST_F(KroneckerTest, PageRankMatchesOracle) { CheckPageRank(Graph()); }

TEST_F(KroneckerTest, SsspMatchesOracle) {
  const bsp::GraphInput input = LoadOrDie(Graph(), bsp::WeightUse::kNonNegative);
  EXPECT_EQ(input.num_edges() % 2, 0u);  // every edge both ways, no self-loops
  const RunResult run = RunEverywhere(sssp::Info(), Graph(), {{"source", first_}});
  uint32_t source = 0;
  while (input.external_ids[source] != first_) ++source;
  ExpectClose(ByInputIndex(run, input), sssp::Oracle(input, source), input, 1e-9, true);
}

TEST_F(KroneckerTest, ColoringIsProper) {
  CheckColoring(Graph(), 42);
  CheckColoring(Graph(), 7);
}

}  // namespace
}  // namespace lockstep::apps
