// Checkpoints of every app (docs/design.md §7.6): a job checkpointed between two supersteps on one
// split and restored on another (more parts, fewer, or one) finishes with exactly the answer of a
// run that never stopped, byte for byte; and writing the checkpoint changes nothing for the job
// that wrote it. PageRank, CDLP and the min-combined broadcasts checkpoint their published values
// (by source), LCC and colouring their delivered messages (by destination), colouring with
// variable-size values; SSSP and WCC also hold values back (kAnyOrder).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "lockstep/apps/bfs/bfs.h"
#include "lockstep/apps/cdlp/cdlp.h"
#include "lockstep/apps/coloring/coloring.h"
#include "lockstep/apps/lcc/lcc.h"
#include "lockstep/apps/pagerank/pagerank.h"
#include "lockstep/apps/sssp/sssp.h"
#include "lockstep/apps/wcc/wcc.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/load/source.h"
#include "minreach.h"  // examples/minreach
#include "util/cluster_output.h"
#include "util/engine_cluster.h"
#include "util/temp_dir.h"

namespace lockstep::apps {
namespace {

// A directed random graph with hubs, dangling vertices, self-loops, parallel edges and small
// integer weights. Not partitioned_test's graph: on this one SSSP holds values back for remote
// vertices at a checkpoint (kAnyOrder's 'H' records), which restoring must take.
std::string WriteGraph(const std::filesystem::path& dir) {
  std::mt19937 rng(29);
  std::uniform_int_distribution<uint32_t> any(0, 1499), hub(0, 7), coin(0, 9), weight(1, 3);
  const std::filesystem::path path = dir / "g.el";
  std::ofstream out(path);
  for (uint32_t e = 0; e < 5000; ++e) {
    const uint32_t a = coin(rng) < 2 ? hub(rng) : any(rng) % 1350;  // 150 never send
    const uint32_t b = coin(rng) == 0 ? a : any(rng);
    out << a * 5 + 1 << ' ' << b * 5 + 1 << ' ' << weight(rng) << '\n';
  }
  return path.string();
}

// A path of 300 vertices, numbered down from one end: its least label crosses every part boundary
// on the way, a superstep per vertex after superstep 0, however each part's union-find joined
// its own stretches (docs/design.md §3.9).
std::string WritePath(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "path.el";
  std::ofstream out(path);
  for (uint32_t v = 1; v < 300; ++v) out << 1000 - v << ' ' << 999 - v << '\n';
  return path.string();
}

// From parts, to parts, the superstep the checkpoint is taken before.
using Case = std::tuple<uint32_t, uint32_t, uint64_t>;

class CheckpointAppsTest : public ::testing::TestWithParam<Case> {
 public:
  // With `partition_step` (docs/design.md §3.9) the run that never stopped is over as many parts
  // as the first (at least 2: one part would end after superstep 0), and the restored run's
  // supersteps, which depend on the split, are not compared.
  template <class App>
  void Check(const bsp::Params& params, const std::string& graph, bool partition_step = false) {
    using P = typename App::Program;
    const auto [given_from, to, at] = GetParam();
    const uint32_t from = partition_step ? std::max<uint32_t>(given_from, 2) : given_from;
    auto input = load::LoadGraph({graph, "edgelist", false}, App::kWeights);
    ASSERT_TRUE(input.ok()) << input.status();
    auto program = App::Make(params, bsp::FactsOf<App>(params, *input));
    ASSERT_TRUE(program.ok()) << program.status();
    auto connect = [](test::EngineCluster<P>& cluster) {
      if (cluster.size() > 1) {
        ASSERT_TRUE(cluster.Connect().ok());
      }
    };

    test::EngineCluster<P> whole(*program, *input, partition_step ? from : 1, false);
    connect(whole);
    ASSERT_TRUE(whole.RunToCompletion().ok());
    const auto expected = test::FormattedValues<App>(whole, *input);
    ASSERT_GT(whole.superstep(), at + 1) << "the job ends before the checkpoint";
    if (partition_step) {
      test::EngineCluster<P> one(*program, *input, 1, false);
      ASSERT_TRUE(one.RunToCompletion().ok());
      EXPECT_TRUE(test::FormattedValues<App>(one, *input) == expected) << "one part differs";
      EXPECT_EQ(one.superstep(), 1u) << "one part ends after superstep 0";
    }

    test::EngineCluster<P> first(*program, *input, from, false);
    connect(first);
    for (uint64_t s = 0; s < at; ++s) {
      auto go_on = first.Step();
      ASSERT_TRUE(go_on.ok()) << go_on.status();
      ASSERT_TRUE(*go_on);
    }
    auto files = first.Checkpoint("app", "job-1");
    ASSERT_TRUE(files.ok()) << files.status();
    for (const bsp::CheckpointFile& f : *files) {
      if constexpr (bsp::RegeneratesPublished<P>()) {
        // Values and flags only: the published values are regenerated on restore.
        EXPECT_TRUE(f.section(bsp::CheckpointSection::kExtra).empty());
        EXPECT_EQ(f.section(bsp::CheckpointSection::kValues).size(),
                  f.num_vertices() * sizeof(typename P::VertexValue));
      }
    }
    // Through the disk, as a recovery reads them.
    std::vector<bsp::CheckpointFile> read;
    const bsp::CheckpointHeader expect{"app", "job-1", at, 0, 0};
    for (const bsp::CheckpointFile& f : *files) {
      const std::string path = bsp::CheckpointFileName(dir_.path().string(), f.header().part);
      const std::string index = bsp::CheckpointIndexName(dir_.path().string(), f.header().part);
      ASSERT_TRUE(bsp::WriteCheckpointFile(path, f.bytes()).ok());
      ASSERT_TRUE(bsp::WriteCheckpointFile(index, f.index_bytes()).ok());
      auto back = bsp::ReadCheckpointFile(path, index, &expect);
      ASSERT_TRUE(back.ok()) << back.status();
      read.push_back(*std::move(back));
    }
    // The writer goes on undisturbed.
    ASSERT_TRUE(first.RunToCompletion().ok());
    EXPECT_TRUE(test::FormattedValues<App>(first, *input) == expected)
        << "checkpointing changed the answer";

    test::EngineCluster<P> second(*program, *input, to, false);
    connect(second);
    const absl::Status restored = second.Restore(read);
    ASSERT_TRUE(restored.ok()) << restored;
    ASSERT_TRUE(second.RunToCompletion().ok());
    const auto got = test::FormattedValues<App>(second, *input);
    EXPECT_EQ(got.size(), expected.size());
    EXPECT_TRUE(got == expected) << "the restored run's answer differs";
    // A program taking messages in any order may deliver them in other supersteps after a
    // restore (its held-back values go out at once); the others run the same supersteps.
    if constexpr (!bsp::IsAnyOrder<P>()) {
      if (!partition_step) {
        EXPECT_EQ(second.superstep(), whole.superstep());
      }
    }
  }

 protected:
  test::TempDir dir_{"lockstep-checkpoint-apps"};
  std::string path_ = WriteGraph(dir_.path());
  std::string chain_ = WritePath(dir_.path());
};

TEST_P(CheckpointAppsTest, PageRank) {
  Check<pagerank::App>({{"damping", "0.85"}, {"tolerance", "0"}, {"max-iterations", "8"}}, path_);
}
TEST_P(CheckpointAppsTest, Sssp) {
  Check<sssp::App>({{"source", "6"}, {"start", "source"}}, path_);
}
TEST_P(CheckpointAppsTest, SsspDeltaStepping) {
  Check<sssp::App>({{"source", "999"}}, chain_, true);
}
TEST_P(CheckpointAppsTest, Bfs) { Check<bfs::App>({{"source", "6"}, {"start", "source"}}, path_); }
TEST_P(CheckpointAppsTest, BfsSearch) { Check<bfs::App>({{"source", "999"}}, chain_, true); }
TEST_P(CheckpointAppsTest, Wcc) { Check<wcc::App>({{"start", "own-label"}}, path_); }
TEST_P(CheckpointAppsTest, WccUnionFind) { Check<wcc::App>({}, chain_, true); }
TEST_P(CheckpointAppsTest, Cdlp) { Check<cdlp::App>({{"max-iterations", "6"}}, path_); }
TEST_P(CheckpointAppsTest, Coloring) { Check<coloring::App>({{"seed", "5"}}, path_); }
TEST_P(CheckpointAppsTest, Lcc) { Check<lcc::App>({{"phases", "5"}}, path_); }
TEST_P(CheckpointAppsTest, UsersProgram) { Check<example::MinReachApp>({}, path_); }

INSTANTIATE_TEST_SUITE_P(FromToAt, CheckpointAppsTest,
                         ::testing::Values(Case{1, 3, 1}, Case{3, 2, 2}, Case{2, 4, 3},
                                           Case{4, 1, 2}, Case{2, 2, 0}));

}  // namespace
}  // namespace lockstep::apps

namespace lockstep::apps {
namespace {

// A checkpoint is restored only onto the graph it was taken of: every vertex once.
TEST(CheckpointRestoreTest, RefusesAnotherGraphsCheckpoint) {
  test::TempDir dir("lockstep-checkpoint-graphs");
  const std::string path = WriteGraph(dir.path());
  const bsp::Params params = {{"damping", "0.85"}, {"tolerance", "0"}, {"max-iterations", "5"}};
  auto load = [&](const std::string& extra) {
    std::ofstream(path, std::ios::app) << extra;
    auto input = load::LoadGraph({path, "edgelist", false}, pagerank::App::kWeights);
    EXPECT_TRUE(input.ok()) << input.status();
    return *std::move(input);
  };
  const bsp::GraphInput small = load("");
  const bsp::GraphInput large = load("99991 99993\n");
  auto program = pagerank::App::Make(params, bsp::FactsOf<pagerank::App>(params, small));
  ASSERT_TRUE(program.ok()) << program.status();
  test::EngineCluster<pagerank::Program> taken(*program, small, 2, false);
  ASSERT_TRUE(taken.Connect().ok());
  ASSERT_TRUE(taken.Step().ok());
  auto files = taken.Checkpoint("pagerank", "job-1");
  ASSERT_TRUE(files.ok()) << files.status();

  test::EngineCluster<pagerank::Program> onto(*program, large, 3, false);
  ASSERT_TRUE(onto.Connect().ok());
  absl::Status st = onto.Restore(*files);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << st;
  EXPECT_NE(st.message().find("holds " + std::to_string(small.num_vertices()) +
                              " vertices; the graph has " + std::to_string(large.num_vertices())),
            std::string::npos)
      << st;
  // Without one of its parts it is not a checkpoint at all.
  test::EngineCluster<pagerank::Program> again(*program, small, 3, false);
  ASSERT_TRUE(again.Connect().ok());
  st = again.Restore(std::span<const bsp::CheckpointFile>(*files).first(1));
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound) << st;
  EXPECT_NE(st.message().find("lacks part 1 of 2"), std::string::npos) << st;

  // A program whose messages go by destination reads only the files whose ranges meet its own;
  // a vertex there that the graph lacks is refused by the partition whose range holds it.
  const bsp::Params seed = {{"seed", "5"}};
  auto coloring = coloring::App::Make(seed, bsp::FactsOf<coloring::App>(seed, large));
  ASSERT_TRUE(coloring.ok()) << coloring.status();
  test::EngineCluster<coloring::Program> big(*coloring, large, 2, false);
  ASSERT_TRUE(big.Connect().ok());
  ASSERT_TRUE(big.Step().ok());
  auto colours = big.Checkpoint("coloring", "job-2");
  ASSERT_TRUE(colours.ok()) << colours.status();
  test::EngineCluster<coloring::Program> smaller(*coloring, small, 3, false);
  ASSERT_TRUE(smaller.Connect().ok());
  st = smaller.Restore(*colours);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << st;
  EXPECT_NE(st.message().find("range, but not a vertex of the graph"), std::string::npos) << st;
}

}  // namespace
}  // namespace lockstep::apps
