// Shortest paths on the original framework's 9-vertex graph (docs/design.md §9): every distance and
// every --path-to line.
#include "lockstep/apps/sssp/sssp.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "app_test_util.h"

namespace lockstep::apps::sssp {
namespace {

using ::lockstep::apps::testing::AsDoubles;
using ::lockstep::apps::testing::RunApp;
using ::lockstep::apps::testing::RunResult;
using ::lockstep::test::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Each undirected edge once; the run adds the reverse direction.
constexpr char kOriginalGraph[] =
    "0 1 4\n0 7 8\n1 2 8\n1 7 11\n2 3 7\n2 5 4\n2 8 2\n"
    "3 4 9\n3 5 14\n4 5 10\n5 6 2\n6 7 1\n6 8 6\n7 8 7\n";

struct Expected {
  std::string target;
  std::string path;
  double cost;
};

const Expected kExpected[] = {
    {"0", "0", 0},
    {"1", "0 -> 1", 4},
    {"2", "0 -> 1 -> 2", 12},
    {"3", "0 -> 1 -> 2 -> 3", 19},
    {"4", "0 -> 7 -> 6 -> 5 -> 4", 21},
    {"5", "0 -> 7 -> 6 -> 5", 11},
    {"6", "0 -> 7 -> 6", 9},
    {"7", "0 -> 7", 8},
    {"8", "0 -> 1 -> 2 -> 8", 14},
};

TEST(SsspTest, OriginalDistances) {
  TempDir dir;
  const RunResult run =
      RunApp(Info(), {dir.Write("g.el", kOriginalGraph), "", true}, {{"source", "0"}});
  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(run.report, "");  // no --path-to, no report
  const auto dist = AsDoubles(run);
  ASSERT_EQ(dist.size(), 9u);
  for (const Expected& e : kExpected) EXPECT_EQ(dist.at(e.target), e.cost) << e.target;
  // Distances are integers here, so they are written as integers.
  EXPECT_EQ(run.values.at("4"), "21");
}

TEST(SsspTest, OriginalPaths) {
  TempDir dir;
  const std::string graph = dir.Write("g.el", kOriginalGraph);
  for (const Expected& e : kExpected) {
    const RunResult run =
        RunApp(Info(), {graph, "", true}, {{"source", "0"}, {"path-to", e.target}});
    ASSERT_TRUE(run.status.ok()) << run.status;
    char cost[32];
    std::snprintf(cost, sizeof cost, "%g", e.cost);
    EXPECT_EQ(run.report, "path: " + e.path + " (cost " + cost + ")\n") << e.target;
  }
}

TEST(SsspTest, PathsAreTheSameAtEveryThreadCount) {
  TempDir dir;
  const std::string graph = dir.Write("g.el", kOriginalGraph);
  for (const size_t threads : {1, 2, 4}) {
    const RunResult run =
        RunApp(Info(), {graph, "", true}, {{"source", "0"}, {"path-to", "4"}}, threads);
    ASSERT_TRUE(run.status.ok()) << run.status;
    EXPECT_EQ(run.report, "path: 0 -> 7 -> 6 -> 5 -> 4 (cost 21)\n") << threads;
  }
}

TEST(SsspTest, UnreachableTargetHasNoPath) {
  TempDir dir;
  const std::string graph = dir.Write("g.el", std::string(kOriginalGraph) + "9 10 3\n");
  const RunResult run = RunApp(Info(), {graph, "", true}, {{"source", "0"}, {"path-to", "10"}});
  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(run.report, "path: none\n");
  EXPECT_EQ(run.values.at("9"), "Infinity");
  EXPECT_EQ(run.values.at("10"), "Infinity");
  EXPECT_TRUE(std::isinf(AsDoubles(run).at("10")));
}

TEST(SsspTest, DirectedEdgesAreFollowedForwardOnly) {
  TempDir dir;
  const RunResult run =
      RunApp(Info(), {dir.Write("g.el", "a b 1\nc a 1\nb d 0.5\n"), "", false}, {{"source", "a"}});
  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(run.values.at("a"), "0");
  EXPECT_EQ(run.values.at("b"), "1");
  EXPECT_EQ(run.values.at("d"), "1.5");
  EXPECT_EQ(run.values.at("c"), "Infinity");
}

TEST(SsspTest, LightestParallelEdgeAndUnitWeights) {
  TempDir dir;
  RunResult run = RunApp(Info(), {dir.Write("w.el", "s t 5\ns t 2\ns t 9\nt t 0\n"), "", false},
                         {{"source", "s"}, {"path-to", "t"}});
  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(run.values.at("t"), "2");
  EXPECT_EQ(run.report, "path: s -> t (cost 2)\n");
  run = RunApp(Info(), {dir.Write("u.el", "s t\nt u\ns u\n"), "", false}, {{"source", "s"}});
  ASSERT_TRUE(run.status.ok()) << run.status;
  EXPECT_EQ(run.values.at("u"), "1");
}

TEST(SsspTest, RejectsBadInput) {
  TempDir dir;
  const std::string graph = dir.Write("g.el", kOriginalGraph);
  EXPECT_THAT(RunApp(Info(), {graph, "", true}).error(), StartsWith("source: "));
  EXPECT_THAT(RunApp(Info(), {graph, "", true}, {{"source", "42"}}).error(),
              StartsWith("source: "));
  EXPECT_THAT(RunApp(Info(), {graph, "", true}, {{"source", "0"}, {"path-to", "42"}}).error(),
              StartsWith("path-to: "));
  EXPECT_THAT(
      RunApp(Info(), {dir.Write("n.el", "0 1 2\n1 2 -1\n"), "", false}, {{"source", "0"}}).error(),
      HasSubstr("n.el:2:"));
  EXPECT_THAT(
      RunApp(Info(), {dir.Write("m.el", "0 1 2\n1 2\n"), "", false}, {{"source", "0"}}).error(),
      HasSubstr("m.el:2:"));
}

}  // namespace
}  // namespace lockstep::apps::sssp
