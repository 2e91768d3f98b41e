// The apps on a graph's partitioned form (load/partitioned_form.h): each worker's part is read
// from the files through LoadPartition (threads over an in-process Exchange, as a job's workers
// load), the engines run together, and every vertex's output must equal the text's whole-graph
// run, byte for byte, at 1, 2 and 4 workers and for files written with 1 and 3 parts.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/apps/pagerank/pagerank.h"
#include "lockstep/apps/sssp/sssp.h"
#include "lockstep/apps/wcc/wcc.h"
#include "lockstep/load/partition_input.h"
#include "lockstep/load/partitioned_form.h"
#include "lockstep/load/source.h"
#include "util/cluster_output.h"
#include "util/engine_cluster.h"
#include "util/temp_dir.h"
#include "util/thread_exchange.h"

namespace lockstep::apps {
namespace {

using test::InputNames;

// Every vertex's formatted value by external ID after running App on `parts` engines. With
// `by_partition`, the engines' graphs come from LoadPartition on `source` (one thread per
// worker); otherwise from the whole graph.
template <class App>
std::map<std::string, std::string> RunApp(const bsp::GraphSource& source, const bsp::Params& params,
                                          uint32_t parts, bool by_partition) {
  auto input = load::LoadGraph(source, App::kWeights);
  EXPECT_TRUE(input.ok()) << input.status();
  if (!input.ok()) return {};
  auto program = App::Make(params, bsp::FactsOf<App>(params, *input));
  EXPECT_TRUE(program.ok()) << program.status();
  using Program = typename App::Program;
  using Graph = bsp::Graph<typename Program::EdgeValue>;
  std::unique_ptr<test::EngineCluster<Program>> cluster;
  if (by_partition) {
    std::vector<absl::StatusOr<Graph>> graphs(parts, absl::UnknownError("not loaded"));
    auto group = std::make_shared<test::ThreadExchangeGroup>(parts);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < parts; ++r) {
      threads.emplace_back([&, r] {
        test::ThreadExchange exchange(group, r);
        const bool in_edges = bsp::NeedsInEdges<Program>();
        auto part = load::LoadPartition(source, App::kWeights, exchange, in_edges);
        if (!part.ok()) {
          graphs[r] = part.status();
          return;
        }
        auto split = partition::Range::Whole(parts);
        // As the worker builds it (bsp/app.h): no in-edges for a min broadcast on a symmetric
        // graph.
        const bool symmetric = part->packed ? part->edges.symmetric : part->input.symmetric;
        graphs[r] = load::BuildPartGraph<typename Program::EdgeValue>(
            *part, *split, r, bsp::NeedsInEdges<Program>(symmetric));
      });
    }
    for (auto& t : threads) t.join();
    std::vector<Graph> built;
    for (auto& g : graphs) {
      EXPECT_TRUE(g.ok()) << g.status();
      if (!g.ok()) return {};
      built.push_back(std::move(*g));
    }
    cluster = std::make_unique<test::EngineCluster<Program>>(*program, std::move(built));
  } else {
    cluster = std::make_unique<test::EngineCluster<Program>>(*program, *input, parts);
  }
  EXPECT_TRUE(cluster->Connect().ok());
  const absl::Status st = cluster->RunToCompletion();
  EXPECT_TRUE(st.ok()) << st;
  std::map<std::string, std::string> output;
  for (uint32_t p = 0; p < parts; ++p) {
    const auto& engine = cluster->engine(p);
    for (uint32_t v = 0; v < engine.topology().num_local(); ++v) {
      std::string& text = output[std::string(engine.topology().external_id(v))];
      if constexpr (requires(std::string & out) {
                      App::Format(engine.program(), engine.values()[v], InputNames(*input), out);
                    }) {
        App::Format(engine.program(), engine.values()[v], InputNames(*input), text);
      } else {
        App::Format(engine.program(), engine.values()[v], text);
      }
    }
  }
  return output;
}

class PartFilesAppsTest : public ::testing::Test {
 protected:
  // A graph with hubs, self-loops, parallel edges, text IDs and small weights.
  void SetUp() override {
    std::mt19937 rng(23);
    std::uniform_int_distribution<uint32_t> any(0, 699), hub(0, 5), coin(0, 9), weight(1, 3);
    std::string text;
    for (uint32_t e = 0; e < 3000; ++e) {
      const uint32_t a = coin(rng) < 2 ? hub(rng) : any(rng) % 650;
      const uint32_t b = coin(rng) == 0 ? a : any(rng);
      auto name = [](uint32_t v) {
        return v % 4 == 0 ? "t" + std::to_string(v) : std::to_string(v);
      };
      text += name(a) + ' ' + name(b) + ' ' + std::to_string(weight(rng)) + '\n';
    }
    path_ = dir_.Write("g.el", text);
  }

  template <class App>
  void Check(const bsp::Params& params, bool undirected) {
    const bsp::GraphSource text{.path = path_, .undirected = undirected};
    const auto want = RunApp<App>(text, params, 1, false);
    ASSERT_FALSE(want.empty());
    auto input = load::LoadGraph(text, bsp::WeightUse::kNonNegative);
    ASSERT_TRUE(input.ok());
    for (uint32_t files : {1u, 3u}) {
      const std::string dir = dir_.File("parts");
      ASSERT_TRUE(load::WritePartitionedForm(*input, dir, {.shards = files}).ok());
      for (uint32_t workers : {1u, 2u, 4u}) {
        EXPECT_TRUE(RunApp<App>({.path = dir}, params, workers, true) == want)
            << files << " files, " << workers << " workers: the values differ";
      }
    }
  }

  test::TempDir dir_{"lockstep-parts-apps"};
  std::string path_;
};

TEST_F(PartFilesAppsTest, PageRank) {
  Check<pagerank::App>({{"damping", "0.85"}, {"tolerance", "0"}, {"max-iterations", "20"}}, false);
  Check<pagerank::App>({{"damping", "0.85"}, {"tolerance", "0"}, {"max-iterations", "20"}}, true);
}

TEST_F(PartFilesAppsTest, Wcc) {
  Check<wcc::App>({}, false);
  Check<wcc::App>({}, true);
}

TEST_F(PartFilesAppsTest, Sssp) {
  Check<sssp::App>({{"source", "t4"}}, false);
  Check<sssp::App>({{"source", "1"}}, true);
}

}  // namespace
}  // namespace lockstep::apps
