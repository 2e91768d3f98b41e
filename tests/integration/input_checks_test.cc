// Input that only the data can show to be wrong, through real `lockstep` processes: a bad
// parameter value in a Graphalytics `.properties` file. It fails with exit 1 and an error naming
// what is wrong, and writes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Ran {
  int exit_code = -1;
  std::string log;  // stdout and stderr
};

// `lockstep args...` in `dir`, logging under dir/logs.
Ran RunLockstep(const fs::path& dir, const std::vector<std::string>& args) {
  static int runs = 0;
  fs::create_directories(dir / "logs");
  auto p = Process::Start(LOCKSTEP_BINARY, args,
                          {.cwd = dir, .log = dir / "logs" / (std::to_string(runs++) + ".log")});
  const std::optional<int> code = p->Wait(60s);
  EXPECT_TRUE(code.has_value()) << p->command() << " still runs";
  return {code.value_or(-1), p->Log()};
}

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

}  // namespace
}  // namespace lockstep::testing
