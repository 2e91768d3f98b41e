// The LDBC Graphalytics example graphs: every graph whose properties list pr or sssp is run
// through its .properties file (parameters from the file, as the CLI takes them) and compared with
// the expected output by the Graphalytics rule: |expected - actual| <= 1e-4 * expected, infinity
// only matches infinity, and the same vertex set.
#include "lockstep/load/graphalytics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app_test_util.h"
#include "lockstep/apps/pagerank/pagerank.h"
#include "lockstep/apps/sssp/sssp.h"

namespace lockstep::apps {
namespace {

namespace fs = std::filesystem;
using testing::ReadWholeFile;
using testing::RunApp;
using testing::RunResult;

const fs::path kGraphDir = fs::path(LOCKSTEP_SHARED_DIR) / "graphalytics/example-data-sets/graphs";

struct GraphalyticsCase {
  std::string graph;      // e.g. "example-directed"
  std::string algorithm;  // "pr" or "sssp"
};

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// Every (graph, algorithm) pair of the folder with an algorithm lockstep has.
std::vector<GraphalyticsCase> Cases() {
  std::vector<GraphalyticsCase> cases;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kGraphDir, ec)) {
    if (entry.path().extension() != ".properties") continue;
    auto props = load::ReadGraphalyticsProperties(entry.path().string());
    if (!props.ok()) continue;  // GraphalyticsTest.FolderHasTheKnownCases reports it
    for (const std::string& algorithm : SplitList((*props)["algorithms"])) {
      if (algorithm == "pr" || algorithm == "sssp") {
        cases.push_back({entry.path().stem().string(), algorithm});
      }
    }
  }
  std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) {
    return std::tie(a.graph, a.algorithm) < std::tie(b.graph, b.algorithm);
  });
  return cases;
}

// An expected-output file: "vertex value" lines, "infinity" in either case, maybe no final
// newline.
std::map<std::string, double> ReadExpected(const fs::path& path) {
  std::map<std::string, double> values;
  std::istringstream in(ReadWholeFile(path.string()));
  std::string id, value;
  while (in >> id >> value) {
    std::string lower = value;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    char* end = nullptr;
    const double v = lower == "infinity" ? INFINITY : std::strtod(value.c_str(), &end);
    EXPECT_TRUE(lower == "infinity" || *end == '\0') << path << ": bad value " << value;
    values[id] = v;
  }
  return values;
}

class GraphalyticsTest : public ::testing::TestWithParam<GraphalyticsCase> {};

TEST_P(GraphalyticsTest, MatchesExpectedOutput) {
  const GraphalyticsCase& c = GetParam();
  const bsp::GraphSource graph{(kGraphDir / (c.graph + ".properties")).string(), "", false};
  const bool pr = c.algorithm == "pr";
  const RunResult run = RunApp(pr ? pagerank::Info() : sssp::Info(), graph);
  ASSERT_TRUE(run.status.ok()) << run.status;
  const std::map<std::string, double> got = testing::AsDoubles(run);
  const std::map<std::string, double> want =
      ReadExpected(kGraphDir / (c.graph + (pr ? "-PR" : "-SSSP")));
  ASSERT_FALSE(want.empty());
  std::set<std::string> got_ids, want_ids;
  for (const auto& [id, v] : got) got_ids.insert(id);
  for (const auto& [id, v] : want) want_ids.insert(id);
  EXPECT_EQ(got_ids, want_ids);
  for (const auto& [id, expected] : want) {
    auto it = got.find(id);
    if (it == got.end()) continue;
    const double actual = it->second;
    if (std::isinf(expected) || std::isinf(actual)) {
      EXPECT_EQ(actual, expected) << "vertex " << id;
    } else {
      EXPECT_LE(std::abs(expected - actual), 1e-4 * expected)
          << "vertex " << id << ": expected " << expected << ", got " << actual;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ExampleDataSets, GraphalyticsTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<GraphalyticsCase>& param_info) {
                           std::string name =
                               param_info.param.graph + "_" + param_info.param.algorithm;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The folder must be there and hold the cases its README lists, so that a wrong path cannot
// silently make the parameterised test above empty.
TEST(GraphalyticsFolderTest, HasTheKnownCases) {
  ASSERT_TRUE(fs::is_directory(kGraphDir)) << kGraphDir;
  std::set<std::string> names;
  for (const GraphalyticsCase& c : Cases()) names.insert(c.graph + "/" + c.algorithm);
  for (const char* name :
       {"example-directed/pr", "example-directed/sssp", "example-undirected/pr",
        "example-undirected/sssp", "test-pr-directed/pr", "test-pr-undirected/pr",
        "test-sssp-directed/sssp", "test-sssp-undirected/sssp"}) {
    EXPECT_TRUE(names.contains(name)) << name;
  }
  for (const auto& entry : fs::directory_iterator(kGraphDir)) {
    if (entry.path().extension() != ".properties") continue;
    EXPECT_TRUE(load::ReadGraphalyticsProperties(entry.path().string()).ok()) << entry.path();
  }
}

}  // namespace
}  // namespace lockstep::apps
