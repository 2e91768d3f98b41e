// Colouring on the original framework's small graph (docs/design.md §9), with and without
// pre-coloured vertices. The original numbered colours from 1 (0 = uncoloured); lockstep numbers
// them from 0, so the original's pre-colour 1 is still colour 1 here, simply not the smallest.
#include "lockstep/apps/coloring/coloring.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "app_test_util.h"

namespace lockstep::apps::coloring {
namespace {

using ::lockstep::apps::testing::LoadOrDie;
using ::lockstep::apps::testing::RunApp;
using ::lockstep::apps::testing::RunResult;
using ::lockstep::test::TempDir;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Adjacency 0:{1,2}, 1:{2,3}, 2:{3}, 3:{4}, taken as undirected.
constexpr char kOriginalGraph[] = "0 1\n0 2\n1 2\n1 3\n2 3\n3 4\n";

std::vector<int64_t> Colors(const RunResult& run, const bsp::GraphInput& input) {
  std::vector<int64_t> colors;
  for (const std::string& id : input.external_ids) {
    auto it = run.values.find(id);
    if (it == run.values.end()) {
      ADD_FAILURE() << "vertex " << id << " has no colour";
      colors.push_back(-1);
      continue;
    }
    colors.push_back(std::stoll(it->second));
  }
  return colors;
}

uint32_t IndexOf(const bsp::GraphInput& input, const std::string& id) {
  for (size_t v = 0; v < input.num_vertices(); ++v) {
    if (input.external_ids[v] == id) return static_cast<uint32_t>(v);
  }
  ADD_FAILURE() << "no vertex " << id;
  return 0;
}

TEST(ColoringTest, OriginalGraphSeed42) {
  TempDir dir;
  const bsp::GraphSource graph{dir.Write("g.el", kOriginalGraph), "", false};
  const RunResult run = RunApp(Info(), graph, {{"seed", "42"}});
  ASSERT_TRUE(run.status.ok()) << run.status;
  const bsp::GraphInput input = LoadOrDie(graph, bsp::WeightUse::kIgnore);
  const std::vector<int64_t> colors = Colors(run, input);
  EXPECT_TRUE(Verify(input, colors).ok()) << Verify(input, colors);
  // At most max degree + 1 = 4 colours, numbered from 0.
  const std::set<int64_t> distinct(colors.begin(), colors.end());
  EXPECT_LE(distinct.size(), 4u);
  for (int64_t c : colors) EXPECT_THAT(c, AllOf(::testing::Ge(0), ::testing::Le(3)));
}

TEST(ColoringTest, OriginalGraphSeed101KeepsPrecolors) {
  TempDir dir;
  const bsp::GraphSource graph{dir.Write("g.el", kOriginalGraph), "", false};
  const std::string precolored = dir.Write("pre.txt", "# id colour\n0 1\n3 1\n");
  const RunResult run = RunApp(Info(), graph, {{"seed", "101"}, {"precolored", precolored}});
  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(run.values.at("0"), "1");
  EXPECT_EQ(run.values.at("3"), "1");
  const bsp::GraphInput input = LoadOrDie(graph, bsp::WeightUse::kIgnore);
  const std::vector<int64_t> colors = Colors(run, input);
  const std::map<uint32_t, uint32_t> pre = {{IndexOf(input, "0"), 1}, {IndexOf(input, "3"), 1}};
  EXPECT_TRUE(Verify(input, colors, pre).ok()) << Verify(input, colors, pre);
  const std::set<int64_t> distinct(colors.begin(), colors.end());
  EXPECT_LE(distinct.size(), 4u);
}

TEST(ColoringTest, SeedsChangeNothingButPriorities) {
  TempDir dir;
  const bsp::GraphSource graph{dir.Write("g.el", kOriginalGraph), "", false};
  const bsp::GraphInput input = LoadOrDie(graph, bsp::WeightUse::kIgnore);
  for (int seed = 0; seed < 50; ++seed) {
    const RunResult run = RunApp(Info(), graph, {{"seed", std::to_string(seed)}});
    ASSERT_TRUE(run.status.ok()) << run.status;
    const std::vector<int64_t> colors = Colors(run, input);
    EXPECT_TRUE(Verify(input, colors).ok()) << "seed " << seed << ": " << Verify(input, colors);
    for (int64_t c : colors) EXPECT_LE(c, 3) << "seed " << seed;
  }
}

TEST(ColoringTest, AdjacentPrecolorsWithOneColourFail) {
  TempDir dir;
  const bsp::GraphSource graph{dir.Write("g.el", kOriginalGraph), "", false};
  const std::string precolored = dir.Write("pre.txt", "0 1\n1 1\n");
  const RunResult run = RunApp(Info(), graph, {{"precolored", precolored}});
  ASSERT_FALSE(run.status.ok());
  EXPECT_THAT(run.error(), HasSubstr("pre-coloured"));
  EXPECT_THAT(run.error(), ::testing::ContainsRegex("vertex '[01]'"));
}

TEST(ColoringTest, BadPrecolorFilesNameTheirLine) {
  TempDir dir;
  const bsp::GraphSource graph{dir.Write("g.el", kOriginalGraph), "", false};
  EXPECT_THAT(RunApp(Info(), graph, {{"precolored", dir.Write("a.txt", "0 1\n9 2\n")}}).error(),
              AllOf(HasSubstr("a.txt:2:"), HasSubstr("'9'")));
  EXPECT_THAT(RunApp(Info(), graph, {{"precolored", dir.Write("b.txt", "0 1\n1 -2\n")}}).error(),
              HasSubstr("b.txt:2:"));
  EXPECT_THAT(RunApp(Info(), graph, {{"precolored", dir.File("none.txt")}}).error(),
              HasSubstr("none.txt"));
  EXPECT_THAT(RunApp(Info(), graph, {{"seed", "x"}}).error(), StartsWith("seed: "));
}

TEST(ColoringTest, SelfLoopsAreIgnored) {
  TempDir dir;
  const bsp::GraphSource graph{dir.Write("g.el", "a a\na b\nb b\nc c\n"), "", false};
  const RunResult run = RunApp(Info(), graph);
  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_NE(run.values.at("a"), run.values.at("b"));
  EXPECT_EQ(run.values.at("c"), "0");
  const bsp::GraphInput input = LoadOrDie(graph, bsp::WeightUse::kIgnore);
  EXPECT_TRUE(Verify(input, Colors(run, input)).ok());
}

TEST(ColoringTest, VerifyCatchesViolations) {
  TempDir dir;
  const bsp::GraphInput input =
      LoadOrDie({dir.Write("g.el", kOriginalGraph), "", false}, bsp::WeightUse::kIgnore);
  // Vertices 0..4 have indexes 0..4.
  EXPECT_TRUE(Verify(input, {0, 1, 2, 0, 1}).ok());
  EXPECT_FALSE(Verify(input, {0, 0, 2, 0, 1}).ok());            // 0 - 1 clash
  EXPECT_FALSE(Verify(input, {0, 1, 2, 0, -1}).ok());           // uncoloured
  EXPECT_FALSE(Verify(input, {0, 1, 2, 0, 9}).ok());            // above max degree
  EXPECT_FALSE(Verify(input, {0, 1, 2, 0}).ok());               // too few
  EXPECT_FALSE(Verify(input, {0, 1, 2, 0, 1}, {{4, 2}}).ok());  // pre-colour lost
}

// Largest degree first: a hub colours before its leaves, so it takes colour 0 at every seed (with
// random priorities it would wait for any leaf ranked above it), and a leaf joined to another
// leaf colours after the hub and after the higher-degree leaf of the pair.
TEST(ColoringTest, LargestDegreeColoursFirst) {
  TempDir dir;
  std::string text;
  for (int leaf = 1; leaf <= 12; ++leaf) text += "hub " + std::to_string(leaf) + "\n";
  text += "1 2\n1 3\n";  // leaf 1 has degree 3, leaves 2 and 3 degree 2
  const bsp::GraphSource graph{dir.Write("star.el", text), "", true};
  const bsp::GraphInput input = LoadOrDie(graph, bsp::WeightUse::kIgnore);
  for (int seed = 0; seed < 20; ++seed) {
    const RunResult run = RunApp(Info(), graph, {{"seed", std::to_string(seed)}});
    ASSERT_TRUE(run.status.ok()) << run.status;
    EXPECT_TRUE(Verify(input, Colors(run, input)).ok()) << "seed " << seed;
    EXPECT_EQ(run.values.at("hub"), "0") << "seed " << seed;
    EXPECT_EQ(run.values.at("1"), "1") << "seed " << seed;
    EXPECT_EQ(run.values.at("2"), "2") << "seed " << seed;
    EXPECT_EQ(run.values.at("3"), "2") << "seed " << seed;
    EXPECT_EQ(run.values.at("12"), "1") << "seed " << seed;
  }
}

}  // namespace
}  // namespace lockstep::apps::coloring
