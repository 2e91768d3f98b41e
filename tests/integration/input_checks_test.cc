// Input that only the data can show to be wrong, through real `lockstep` processes: a source an
// (empty) graph lacks, a bad parameter value in a Graphalytics `.properties` file, a damaged names
// file or a missing manifest of a partitioned graph. Each fails with exit 1 and an error naming
// what is wrong, writes nothing, and on a cluster leaves the previous result published.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster.h"
#include "run_lockstep.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A Graphalytics graph `g` in `dir` with the given vertex and edge lines and extra properties
// (from line 4 on); returns the .properties path.
std::string WriteGraphalytics(const fs::path& dir, const std::string& vertices,
                              const std::string& edges, const std::string& properties) {
  WriteFile(dir / "g.v", vertices);
  WriteFile(dir / "g.e", edges);
  WriteFile(
      dir / "g.properties",
      "graph.g.vertex-file = g.v\ngraph.g.edge-file = g.e\ngraph.g.directed = true\n" + properties);
  return (dir / "g.properties").string();
}

// --- A bad parameter value in a .properties file. ---

TEST(GraphalyticsProperties, ABadValueIsBadInputNamingTheFileAndKey) {
  TempDir dir("lockstep-bad-properties");
  struct Case {
    const char* app;
    const char* key;
    const char* value;
  };
  const Case cases[] = {
      {"pagerank", "pr.damping-factor", "2"},   {"pagerank", "pr.damping-factor", "-0.5"},
      {"pagerank", "pr.damping-factor", "x"},   {"pagerank", "pr.damping-factor", "nan"},
      {"pagerank", "pr.damping-factor", ""},    {"pagerank", "pr.num-iterations", "-1"},
      {"pagerank", "pr.num-iterations", "1.5"}, {"cdlp", "cdlp.max-iterations", "x"},
      {"cdlp", "cdlp.max-iterations", "-1"},
  };
  for (const Case& c : cases) {
    WriteGraphalytics(dir.path(), "1\n2\n", "1 2\n",
                      std::string("graph.g.") + c.key + " = " + c.value + "\n");
    const std::string where = std::string("g.properties:4: graph.g.") + c.key + ": ";
    const Ran r =
        RunLockstep(dir.path(), {"run", c.app, "--graph", "g.properties", "--out", "o.txt"});
    EXPECT_EQ(r.exit_code, 1) << c.key << " = " << c.value << "\n" << r.log;
    EXPECT_THAT(r.log, HasSubstr(where)) << c.key << " = " << c.value;
    EXPECT_THAT(r.log, Not(HasSubstr("--"))) << c.key << " = " << c.value;
    EXPECT_FALSE(fs::exists(dir / "o.txt"));
    // The master refuses the job before it waits for any worker, alike.
    const Ran m = RunLockstep(dir.path(), {"master", "--listen", "127.0.0.1:0", "--app", c.app,
                                           "--graph", "g.properties", "--out", "res"});
    EXPECT_EQ(m.exit_code, 1) << c.key << " = " << c.value << "\n" << m.log;
    EXPECT_THAT(m.log, HasSubstr(where)) << c.key << " = " << c.value;
  }
  // A flag overrides the file; a bad flag is a usage error naming the flag.
  WriteGraphalytics(dir.path(), "1\n2\n", "1 2\n", "graph.g.pr.damping-factor = 2\n");
  const Ran good = RunLockstep(dir.path(), {"run", "pagerank", "--graph", "g.properties",
                                            "--damping", "0.5", "--out", "o.txt"});
  EXPECT_EQ(good.exit_code, 0) << good.log;
  const Ran flag = RunLockstep(dir.path(), {"run", "pagerank", "--graph", "g.properties",
                                            "--damping", "3", "--out", "o.txt"});
  EXPECT_EQ(flag.exit_code, 2) << flag.log;
  EXPECT_THAT(flag.log, HasSubstr("--damping: must be in [0, 1]"));
  // The partitioned form keeps the properties, and names them in its manifest.
  ASSERT_EQ(
      RunLockstep(dir.path(), {"partition", "--graph", "g.properties", "--out", "parts"}).exit_code,
      0);
  const Ran parts =
      RunLockstep(dir.path(), {"run", "pagerank", "--graph", "parts", "--out", "p.txt"});
  EXPECT_EQ(parts.exit_code, 1) << parts.log;
  EXPECT_THAT(parts.log, HasSubstr("parts/lockstep-parts.manifest: Graphalytics property "
                                   "pr.damping-factor: must be in [0, 1]"));
}

// --- A source the graph lacks, the graph being empty. ---

TEST(EmptyGraph, ASourceItLacksFailsTheRun) {
  TempDir dir("lockstep-empty-run");
  WriteFile(dir / "e.el", "\n\n");
  for (const char* app : {"bfs", "sssp"}) {
    const Ran r =
        RunLockstep(dir.path(), {"run", app, "--graph", "e.el", "--source", "9", "--out", "o.txt"});
    EXPECT_EQ(r.exit_code, 1) << app << "\n" << r.log;
    EXPECT_THAT(r.log, HasSubstr("--source: vertex '9' is not in the graph")) << app;
    EXPECT_FALSE(fs::exists(dir / "o.txt")) << app;
  }
  // The source from the .properties file: the error names the file, line and key.
  WriteGraphalytics(dir.path(), "", "",
                    "graph.g.bfs.source-vertex = 9\ngraph.g.sssp.source-vertex = 9\n");
  for (const auto& [app, line] : {std::pair{"bfs", "4"}, std::pair{"sssp", "5"}}) {
    const Ran r =
        RunLockstep(dir.path(), {"run", app, "--graph", "g.properties", "--out", "o.txt"});
    EXPECT_EQ(r.exit_code, 1) << app << "\n" << r.log;
    EXPECT_THAT(r.log, HasSubstr(std::string("g.properties:") + line + ": graph.g." + app +
                                 ".source-vertex: vertex '9' is not in the graph"));
    EXPECT_FALSE(fs::exists(dir / "o.txt")) << app;
  }
  // The partitioned form of an empty graph is empty too.
  const Ran part = RunLockstep(dir.path(), {"partition", "--graph", "e.el", "--out", "parts"});
  ASSERT_EQ(part.exit_code, 0) << part.log;
  const Ran r = RunLockstep(dir.path(),
                            {"run", "bfs", "--graph", "parts", "--source", "9", "--out", "o.txt"});
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_THAT(r.log, HasSubstr("--source: vertex '9' is not in the graph"));
}

// One job of `args` on a master and two workers in dir/name, publishing to dir/res/out; returns
// the master's exit code.
int RunOnCluster(const TempDir& dir, const std::string& name, std::vector<std::string> args) {
  fs::create_directories(dir / name);
  Cluster cluster(LOCKSTEP_BINARY, dir / name);
  args.insert(args.end(), {"--out", (dir / "res" / "out").string(), "--min-workers", "2",
                           "--max-workers", "2"});
  Process& master = cluster.StartMaster(args);
  if (cluster.port() == 0) return -1;
  for (int i = 0; i < 2; ++i) cluster.StartWorker({"--max-jobs", "1"});
  if (!cluster.WaitAll(60s)) return -1;
  if (master.exit_code() != 0) {
    EXPECT_THAT(master.Log(), HasSubstr("is not in the graph")) << master.Log();
  }
  return master.exit_code().value_or(-1);
}

TEST(EmptyGraph, ASourceItLacksPublishesNothingOnACluster) {
  TempDir dir("lockstep-empty-cluster");
  fs::create_directories(dir / "res");
  WriteFile(dir / "g.el", "1 2\n2 3\n");
  WriteFile(dir / "e.el", "\n\n");
  const std::string graph =
      WriteGraphalytics(dir.path(), "", "", "graph.g.sssp.source-vertex = 9\n");
  ASSERT_EQ(RunOnCluster(dir, "good",
                         {"--app", "bfs", "--graph", (dir / "g.el").string(), "--source", "1"}),
            0);
  const auto before = ReadPublished(dir / "res" / "out", 2);
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->lines, (std::vector<std::string>{"1 0", "2 1", "3 2"}));
  EXPECT_EQ(RunOnCluster(dir, "empty",
                         {"--app", "bfs", "--graph", (dir / "e.el").string(), "--source", "9"}),
            1);
  EXPECT_EQ(RunOnCluster(dir, "graphalytics", {"--app", "sssp", "--graph", graph}), 1);
  // The previous result stays, and nothing else is left beside it.
  const auto after = ReadPublished(dir / "res" / "out", 2);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->job_id, before->job_id);
  EXPECT_EQ(after->lines, before->lines);
  std::set<std::string> beside;
  for (const auto& e : fs::directory_iterator(dir / "res")) {
    beside.insert(e.path().filename().string());
  }
  EXPECT_EQ(beside.size(), 2u) << "left beside the result: " << ::testing::PrintToString(beside);
}

// --- The partitioned form: what `run` checks. ---

TEST(PartitionedGraph, RunRefusesADamagedNamesFile) {
  TempDir dir("lockstep-names-file");
  std::string text;
  for (int i = 0; i < 300; ++i) {
    text += "v" + std::to_string(i) + " " + std::to_string((i * 7 + 3) % 300) + "\n";
  }
  WriteFile(dir / "g.el", text);
  ASSERT_EQ(
      RunLockstep(dir.path(), {"partition", "--graph", "g.el", "--out", "parts", "--parts", "3"})
          .exit_code,
      0);
  const fs::path names = dir / "parts" / "names-00000-of-00001.lsp";
  const std::string original = ReadFile(names);
  ASSERT_GT(original.size(), 200u);
  std::vector<std::pair<std::string, std::string>> damaged;  // what, the file's bytes
  for (size_t at : {size_t{0}, size_t{40}, size_t{100}, original.size() / 2, original.size() - 1}) {
    std::string flipped = original;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x01);
    damaged.emplace_back("byte " + std::to_string(at) + " flipped", flipped);
  }
  damaged.emplace_back("truncated by one byte", original.substr(0, original.size() - 1));
  damaged.emplace_back("truncated to its header", original.substr(0, 80));
  damaged.emplace_back("a byte appended", original + "x");
  damaged.emplace_back("a name appended", original + "v300");
  for (const auto& [what, bytes] : damaged) {
    WriteFile(names, bytes);
    const Ran r = RunLockstep(dir.path(), {"run", "wcc", "--graph", "parts", "--out", "o.txt"});
    EXPECT_EQ(r.exit_code, 1) << what << "\n" << r.log;
    EXPECT_THAT(r.log, HasSubstr("names-00000-of-00001.lsp: ")) << what;
    EXPECT_FALSE(fs::exists(dir / "o.txt")) << what;
  }
  WriteFile(names, original);
  const Ran r = RunLockstep(dir.path(), {"run", "wcc", "--graph", "parts", "--out", "o.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.log;
}

TEST(PartitionedGraph, OneWithoutItsManifestIsIncomplete) {
  TempDir dir("lockstep-half-written");
  WriteFile(dir / "g.el", "1 2\n2 3\n");
  ASSERT_EQ(RunLockstep(dir.path(), {"partition", "--graph", "g.el", "--out", "parts"}).exit_code,
            0);
  fs::remove(dir / "parts" / "lockstep-parts.manifest");
  const Ran r = RunLockstep(dir.path(), {"run", "pagerank", "--graph", "parts", "--out", "o.txt"});
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_THAT(r.log, HasSubstr("parts: holds the files of a graph in partitioned binary form but "
                               "no lockstep-parts.manifest: the partitioned graph is incomplete"));
  EXPECT_FALSE(fs::exists(dir / "o.txt"));
}

}  // namespace
}  // namespace lockstep::testing
