// `--symmetric` through real `lockstep` processes: a graph that lists every edge both ways answers
// byte for byte as the list of its edges from their lower ends read `--undirected`, in local mode,
// from its partitioned form, and on a master with two workers; an edge without its reverse fails
// the run naming its line and writes nothing; the flag is refused (exit 2) where it cannot apply.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cluster.h"
#include "run_lockstep.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

// Writes dir/both.el (every line of g.el followed by its reverse, a self-loop once) and
// dir/half.el (every line of g.el from its lower end; the IDs are integers).
void WriteBothAndHalf(const fs::path& dir) {
  std::istringstream in(ReadFile(dir / "g.el"));
  std::string both, half;
  for (std::string a, b, w; in >> a >> b >> w;) {
    both += a + " " + b + " " + w + "\n";
    if (a != b) both += b + " " + a + " " + w + "\n";
    if (std::stoull(b) < std::stoull(a)) std::swap(a, b);
    half += a + " " + b + " " + w + "\n";
  }
  WriteFile(dir / "both.el", both);
  WriteFile(dir / "half.el", half);
}

TEST(Symmetric, AGraphListedBothWaysAnswersAsItsHalfUndirectedInEveryMode) {
  TempDir dir("lockstep-symmetric");
  ASSERT_EQ(RunLockstep(dir.path(), {"generate", "kronecker", "--scale", "9", "--degree", "8",
                                     "--weights", "--out", "g.el"})
                .exit_code,
            0);
  WriteBothAndHalf(dir.path());
  const std::string source =
      ReadFile(dir / "half.el").substr(0, ReadFile(dir / "half.el").find(' '));
  const std::vector<std::vector<std::string>> apps = {
      {"pagerank"}, {"sssp", "--source", source}, {"wcc"}, {"lcc"}, {"cdlp"}};
  const Ran part = RunLockstep(dir.path(), {"partition", "--graph", "both.el", "--symmetric",
                                            "--out", "parts", "--parts", "3"});
  ASSERT_EQ(part.exit_code, 0) << part.log;
  for (const auto& app : apps) {
    SCOPED_TRACE(app[0]);
    auto run = [&](std::vector<std::string> graph, const std::string& out) {
      std::vector<std::string> args = {"run"};
      args.insert(args.end(), app.begin(), app.end());
      args.insert(args.end(), graph.begin(), graph.end());
      args.insert(args.end(), {"--threads", "2", "--out", out});
      const Ran r = RunLockstep(dir.path(), args);
      EXPECT_EQ(r.exit_code, 0) << r.log;
      return ReadFile(dir / out);
    };
    const std::string want = run({"--graph", "half.el", "--undirected"}, "half.txt");
    ASSERT_FALSE(want.empty());
    EXPECT_TRUE(run({"--graph", "both.el", "--symmetric"}, "both.txt") == want);
    EXPECT_TRUE(run({"--graph", "parts"}, "parts.txt") == want);
  }
  // A master with two workers reads the partitioned form and publishes the same lines.
  fs::create_directories(dir / "cluster");
  Cluster cluster(LOCKSTEP_BINARY, dir / "cluster");
  Process& master =
      cluster.StartMaster({"--app", "pagerank", "--graph", (dir / "parts").string(), "--out",
                           (dir / "res").string(), "--min-workers", "2", "--max-workers", "2"});
  ASSERT_NE(cluster.port(), 0);
  for (int i = 0; i < 2; ++i) cluster.StartWorker({"--max-jobs", "1"});
  ASSERT_TRUE(cluster.WaitAll(90s)) << cluster.Logs();
  ASSERT_EQ(master.exit_code(), 0) << cluster.Logs();
  const std::optional<Published> published = ReadPublished(dir / "res", 2);
  ASSERT_TRUE(published.has_value());
  const Ran local = RunLockstep(
      dir.path(), {"run", "pagerank", "--graph", "both.el", "--symmetric", "--out", "local.txt"});
  ASSERT_EQ(local.exit_code, 0) << local.log;
  EXPECT_EQ(published->lines, SortedLines(ReadFile(dir / "local.txt")));
}

TEST(Symmetric, AnEdgeWithoutItsReverseFailsNamingItsLineAndWritesNothing) {
  TempDir dir("lockstep-symmetric-bad");
  WriteFile(dir / "g.el", "1 2 1\n2 1 1\n2 3 1\n3 2 1\n# c\n3 4 1\n");
  for (const char* command : {"run", "partition"}) {
    std::vector<std::string> args = {command};
    if (std::string(command) == "run") args.push_back("sssp");
    args.insert(args.end(), {"--graph", "g.el", "--symmetric", "--out", "o"});
    if (std::string(command) == "run") args.insert(args.end(), {"--source", "1"});
    const Ran r = RunLockstep(dir.path(), args);
    EXPECT_EQ(r.exit_code, 1) << r.log;
    EXPECT_THAT(r.log, HasSubstr("g.el:6: the edge 3 -> 4 with weight 1 is listed 1 time(s), its "
                                 "reverse 4 -> 3 with that weight 0 time(s)"));
    EXPECT_FALSE(fs::exists(dir / "o")) << command;
  }
}

TEST(Symmetric, IsRefusedWhereItCannotApply) {
  TempDir dir("lockstep-symmetric-usage");
  WriteFile(dir / "g.el", "1 2\n2 1\n");
  ASSERT_EQ(RunLockstep(dir.path(), {"partition", "--graph", "g.el", "--symmetric", "--out", "p"})
                .exit_code,
            0);
  WriteFile(dir / "g.v", "1\n2\n");
  WriteFile(dir / "g.e", "1 2\n");
  WriteFile(dir / "g.properties",
            "graph.g.vertex-file = g.v\ngraph.g.edge-file = g.e\ngraph.g.directed = false\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "wcc", "--graph", "g.el", "--symmetric", "--undirected", "--out", "o"},
       "--undirected and --symmetric: give one"},
      {{"run", "wcc", "--graph", "p", "--symmetric", "--out", "o"},
       "--symmetric applies to edge lists; a partitioned graph"},
      {{"run", "wcc", "--graph", "g.properties", "--symmetric", "--out", "o"},
       "--symmetric applies to edge lists; a Graphalytics graph"},
      {{"partition", "--graph", "g.properties", "--symmetric", "--out", "q"},
       "--symmetric applies to edge lists; a Graphalytics graph"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "wcc", "--graph", "g.el", "--symmetric",
        "--out", "o"},
       "write the edge list with `lockstep partition --symmetric`"}};
  // A flag given as false is not given.
  const Ran off = RunLockstep(dir.path(), {"run", "wcc", "--graph", "g.el", "--undirected",
                                           "--symmetric=false", "--out", "off"});
  EXPECT_EQ(off.exit_code, 0) << off.log;
  for (const auto& [args, error] : cases) {
    const Ran r = RunLockstep(dir.path(), args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[3] << "\n" << r.log;
    EXPECT_THAT(r.log, HasSubstr(error));
    EXPECT_FALSE(fs::exists(dir / "o"));
  }
}

}  // namespace
}  // namespace lockstep::testing
