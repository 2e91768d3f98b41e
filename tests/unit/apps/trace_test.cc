// Vertex tracing (--trace-vertex, docs/design.md §12): the lines the engine writes for traced
// vertices, the same over 3 parts as over the whole graph, and an answer that tracing never
// changes.
#include "lockstep/bsp/trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "lockstep/apps/bfs/bfs.h"
#include "lockstep/apps/cdlp/cdlp.h"
#include "lockstep/apps/coloring/coloring.h"
#include "lockstep/apps/lcc/lcc.h"
#include "lockstep/apps/pagerank/pagerank.h"
#include "lockstep/apps/sssp/sssp.h"
#include "lockstep/apps/wcc/wcc.h"
#include "lockstep/load/source.h"
#include "util/cluster_output.h"
#include "util/engine_cluster.h"
#include "util/temp_dir.h"

namespace lockstep::apps {
namespace {

// A directed random graph with hubs (more than kTracedMessages in-neighbours), dangling vertices,
// self-loops and small integer weights.
std::string WriteGraph(const std::filesystem::path& dir) {
  std::mt19937 rng(23);
  std::uniform_int_distribution<uint32_t> any(0, 299), hub(0, 4), coin(0, 9), weight(1, 3);
  const std::filesystem::path path = dir / "g.el";
  std::ofstream out(path);
  for (uint32_t e = 0; e < 1200; ++e) {
    const uint32_t a = any(rng) % 280;  // 20 never send
    const uint32_t b = coin(rng) < 2 ? hub(rng) : coin(rng) == 0 ? a : any(rng);
    out << a * 3 + 1 << ' ' << b * 3 + 1 << ' ' << weight(rng) << '\n';
  }
  return path.string();
}

struct TracedRun {
  // Superstep -> its trace lines from every part, sorted.
  std::map<uint64_t, std::vector<std::string>> lines;
  std::map<std::string, std::string> output;  // external ID -> formatted value
};

// Runs App over `parts` connected parts, tracing `trace` (none: tracing off).
template <class App>
TracedRun RunTraced(const std::string& path, const bsp::Params& params, uint32_t parts,
                    const std::vector<std::string>& trace) {
  auto input = load::LoadGraph({path, "edgelist", false}, App::kWeights);
  EXPECT_TRUE(input.ok()) << input.status();
  auto program = App::Make(params, bsp::FactsOf<App>(params, *input));
  EXPECT_TRUE(program.ok()) << program.status();
  test::EngineCluster<typename App::Program> cluster(*program, *input, parts, false);
  const test::InputNames names(*input);
  for (uint32_t p = 0; p < parts; ++p) {
    auto& engine = cluster.engine(p);
    if (trace.empty()) continue;
    engine.SetTrace(trace, [&engine, &names](const typename App::Program::VertexValue& value,
                                             std::string& out) {
      if constexpr (requires { App::Format(engine.program(), value, names, out); }) {
        App::Format(engine.program(), value, names, out);
      } else {
        App::Format(engine.program(), value, out);
      }
    });
  }
  if (parts > 1) {
    const absl::Status st = cluster.Connect();
    EXPECT_TRUE(st.ok()) << st;
  }
  TracedRun run;
  for (bool go_on = true; go_on && cluster.superstep() < 1000;) {
    const uint64_t s = cluster.superstep();
    auto step = cluster.Step();
    EXPECT_TRUE(step.ok()) << step.status();
    if (!step.ok()) break;
    go_on = *step;
    std::vector<std::string>& lines = run.lines[s];
    for (uint32_t p = 0; p < parts; ++p) {
      for (std::string& line : cluster.engine(p).TakeTrace()) lines.push_back(std::move(line));
    }
    std::sort(lines.begin(), lines.end());
  }
  run.output = test::FormattedValues<App>(cluster, *input);
  return run;
}

class TraceTest : public ::testing::Test {
 protected:
  // The traced vertices: a hub, a vertex that never sends, a dangling one, and others; one named
  // twice is traced once.
  std::vector<std::string> Traced() const { return {"1", "4", "841", "898", "37", "nowhere", "4"}; }

  // Traced over 3 parts, the lines equal the whole graph's superstep by superstep (unless the
  // program takes messages in any order: its parts may hold values back by their own frontiers,
  // §3.4), each traced vertex has a line in every superstep, and the answer is the untraced one.
  template <class App>
  void Check(const bsp::Params& params, bool partition_step = false) {
    const TracedRun plain = RunTraced<App>(path_, params, 1, {});
    const TracedRun whole = RunTraced<App>(path_, params, 1, Traced());
    const TracedRun split = RunTraced<App>(path_, params, 3, Traced());
    EXPECT_TRUE(whole.output == plain.output) << "tracing changed the answer";
    EXPECT_TRUE(split.output == plain.output) << "tracing changed the answer over 3 parts";
    ASSERT_FALSE(whole.lines.empty());
    for (const auto& [s, lines] : whole.lines) {
      // Five traced vertices in the graph, and the sixth's line after the first superstep.
      ASSERT_EQ(lines.size(), s == 0 ? 6u : 5u) << "superstep " << s;
      for (const std::string& line : lines) {
        if (line.find("nowhere") != std::string::npos) {
          EXPECT_EQ(line, "vertex 'nowhere' is not in the graph: not traced");
        } else {
          EXPECT_NE(line.find(absl::StrCat(" superstep ", s, ": ")), std::string::npos) << line;
        }
      }
    }
    if constexpr (!bsp::IsAnyOrder<typename App::Program>()) {
      // A partition step's supersteps depend on the split (docs/design.md §3.9).
      if (!partition_step) {
        EXPECT_TRUE(split.lines == whole.lines) << "the trace over 3 parts differs";
      }
    }
    // The last line of each vertex shows its value in the answer.
    for (const char* id : {"1", "4", "841", "898", "37"}) {
      const std::vector<std::string>& last = whole.lines.rbegin()->second;
      const std::string value = ", value " + plain.output.at(id) + ", halted ";
      EXPECT_TRUE(std::any_of(last.begin(), last.end(),
                              [&](const std::string& line) {
                                return line.starts_with(absl::StrCat("vertex '", id, "' ")) &&
                                       line.find(value) != std::string::npos;
                              }))
          << id << " should end at " << value;
    }
  }

  test::TempDir dir_{"lockstep-trace"};
  std::string path_ = WriteGraph(dir_.path());
};

TEST_F(TraceTest, PageRank) {
  Check<pagerank::App>({{"damping", "0.85"}, {"tolerance", "0"}, {"max-iterations", "5"}});
}
TEST_F(TraceTest, Sssp) { Check<sssp::App>({{"source", "1"}, {"start", "source"}}); }
// Delta-stepping's distances show in superstep 0's lines, where local mode ends.
TEST_F(TraceTest, SsspDeltaStepping) { Check<sssp::App>({{"source", "1"}}, true); }
TEST_F(TraceTest, Bfs) { Check<bfs::App>({{"source", "1"}, {"start", "source"}}); }
// The search's depths show in superstep 0's lines, where local mode ends.
TEST_F(TraceTest, BfsSearch) { Check<bfs::App>({{"source", "1"}}, true); }
TEST_F(TraceTest, Wcc) { Check<wcc::App>({{"start", "own-label"}}); }
// The union-find's labels show in superstep 0's lines, where local mode ends.
TEST_F(TraceTest, WccUnionFind) { Check<wcc::App>({}, true); }
TEST_F(TraceTest, Cdlp) { Check<cdlp::App>({{"max-iterations", "4"}}); }
TEST_F(TraceTest, Coloring) { Check<coloring::App>({{"seed", "5"}}); }
TEST_F(TraceTest, Lcc) { Check<lcc::App>({{"phases", "1"}}); }

// A line says what the vertex received as compute saw it (the first kTracedMessages, then how
// many more), what it sent, its value after compute and whether it halted; a vertex that did not
// run says so.
TEST(TraceLineTest, SaysWhatTheVertexDid) {
  test::TempDir dir("lockstep-trace-line");
  const std::string path = (dir.path() / "star.el").string();
  {
    std::ofstream out(path);
    for (int leaf = 1; leaf <= 10; ++leaf) out << leaf << " 0\n";
    out << "0 11\n";
  }
  const bsp::Params params{{"max-iterations", "2"}};
  auto input = load::LoadGraph({path, "edgelist", false}, cdlp::App::kWeights);
  ASSERT_TRUE(input.ok()) << input.status();
  auto program = cdlp::App::Make(params, bsp::FactsOf<cdlp::App>(params, *input));
  ASSERT_TRUE(program.ok()) << program.status();
  test::EngineCluster<cdlp::Program> cluster(*program, *input, 1, false);
  cluster.engine(0).SetTrace({"0", "11"}, [](const uint32_t& label, std::string& out) {
    out += "label ";
    bsp::AppendUint(label, out);
  });
  ASSERT_TRUE(cluster.Step().ok());
  std::vector<std::string> lines = cluster.engine(0).TakeTrace();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "vertex '0' superstep 0: ran, received 0, sent 11, value label 0, halted no");
  EXPECT_TRUE(cluster.engine(0).TakeTrace().empty()) << "lines are taken once";
  ASSERT_TRUE(cluster.Step().ok());
  lines = cluster.engine(0).TakeTrace();
  ASSERT_EQ(lines.size(), 2u);
  // Vertex 0 hears its ten in-neighbours and its out-neighbour (CDLP ignores direction); labels
  // are global indexes, the leaves' 1-10 and 11's.
  EXPECT_TRUE(lines[0].starts_with("vertex '0' superstep 1: ran, received 11 [")) << lines[0];
  EXPECT_TRUE(lines[0].find(", ... 3 more], sent 11, value label ") != std::string::npos)
      << lines[0];
  EXPECT_TRUE(lines[1].starts_with("vertex '11' superstep 1: ran, received 1 [")) << lines[1];
}

TEST(TraceTextTest, NumbersAsNumbersAndOtherMessagesBySize) {
  std::string out;
  bsp::AppendTraceText(0.5, out);
  out += ' ';
  bsp::AppendTraceText(int64_t{-3}, out);
  out += ' ';
  bsp::AppendTraceText(uint32_t{7}, out);
  out += ' ';
  bsp::AppendTraceText(true, out);
  out += ' ';
  bsp::AppendTraceText(coloring::Announcement{}, out);
  EXPECT_EQ(out, absl::StrCat("0.5 -3 7 true <", sizeof(coloring::Announcement), " bytes>"));
}

}  // namespace
}  // namespace lockstep::apps
