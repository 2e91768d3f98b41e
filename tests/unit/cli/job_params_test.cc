// An app's parameters on the command line: what the graph's Graphalytics properties give, what the
// flags override, and an app's error about a parameter named as the user gave it: the flag, or the
// file, line and key.
#include "lockstep/cli/job_params.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "absl/status/status.h"
#include "lockstep/cli/registry.h"
#include "lockstep/load/partitioned_form.h"
#include "lockstep/load/source.h"
#include "util/temp_dir.h"

namespace lockstep::cli {
namespace {

constexpr char kProperties[] =
    "graph.g.vertex-file = g.v\n"
    "graph.g.edge-file = g.e\n"
    "graph.g.directed = true\n"
    "# PageRank\n"
    "graph.g.pr.damping-factor = 2\n"
    "graph.g.pr.num-iterations = 7\n";

class JobParamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("g.v", "1\n2\n");
    dir_.Write("g.e", "1 2\n");
    props_ = dir_.Write("g.properties", kProperties);
  }
  const catalogue::AppInfo& PageRank() const { return *apps_.Find("pagerank"); }

  test::TempDir dir_{"lockstep-job-params"};
  std::string props_;
  catalogue::AppRegistry apps_ = BuiltinApps();
};

TEST_F(JobParamsTest, PropertiesGiveParametersAndSayWhere) {
  auto job = MakeJobParams(PageRank(), {.path = props_}, {});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->values,
            (bsp::Params{{"damping", "2"}, {"max-iterations", "7"}, {"tolerance", "0"}}));
  EXPECT_EQ(job->from_file.at("damping"), props_ + ":5: graph.g.pr.damping-factor");
  EXPECT_EQ(job->from_file.at("max-iterations"), props_ + ":6: graph.g.pr.num-iterations");
}

TEST_F(JobParamsTest, ABadValueInTheFileNamesTheFileLineAndKey) {
  auto job = MakeJobParams(PageRank(), {.path = props_}, {});
  ASSERT_TRUE(job.ok()) << job.status();
  const NamedError e = NameParam(PageRank(), job->from_file,
                                 absl::InvalidArgumentError("damping: must be in [0, 1]"));
  EXPECT_TRUE(e.in_file);
  EXPECT_EQ(e.status.message(), props_ + ":5: graph.g.pr.damping-factor: must be in [0, 1]");
}

TEST_F(JobParamsTest, AFlagOverridesTheFileAndIsNamedAsAFlag) {
  auto job = MakeJobParams(PageRank(), {.path = props_}, {{"damping", "3"}});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->values.at("damping"), "3");
  EXPECT_FALSE(job->from_file.contains("damping"));
  const NamedError e = NameParam(PageRank(), job->from_file,
                                 absl::InvalidArgumentError("damping: must be in [0, 1]"));
  EXPECT_FALSE(e.in_file);
  EXPECT_EQ(e.status.message(), "--damping: must be in [0, 1]");
  // An error about no parameter is left as it is.
  const NamedError other = NameParam(PageRank(), job->from_file, absl::DataLossError("g.e:1: bad"));
  EXPECT_FALSE(other.in_file);
  EXPECT_EQ(other.status, absl::DataLossError("g.e:1: bad"));
}

TEST_F(JobParamsTest, APartitionedGraphNamesItsManifestAndTheProperty) {
  auto input = load::LoadGraph({.path = props_}, bsp::WeightUse::kNonNegative);
  ASSERT_TRUE(input.ok()) << input.status();
  const std::string parts = dir_.File("parts");
  ASSERT_TRUE(
      load::WritePartitionedForm(*input, parts, {.shards = 1, .format = "graphalytics"}).ok());
  auto job = MakeJobParams(PageRank(), {.path = parts}, {});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->values.at("damping"), "2");
  EXPECT_EQ(job->from_file.at("damping"),
            parts + "/lockstep-parts.manifest: Graphalytics property pr.damping-factor");
}

TEST_F(JobParamsTest, AnEdgeListGivesOnlyDefaults) {
  auto job = MakeJobParams(PageRank(), {.path = dir_.Write("g.el", "1 2\n")}, {});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->values,
            (bsp::Params{{"damping", "0.85"}, {"max-iterations", "100"}, {"tolerance", "1e-9"}}));
  EXPECT_TRUE(job->from_file.empty());
}

}  // namespace
}  // namespace lockstep::cli
