// The `lockstep` command as a real process: bad input fails cleanly (non-zero exit, an error that
// names the file and line or the flag, no output written, an existing --out left alone), results
// have the documented shape, and outputs do not depend on --threads.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "util/temp_dir.h"

extern char** environ;

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Process {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class CliTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
    return Path(name);
  }

  // Runs `lockstep args...` in the test's directory; stdout and stderr go to files there.
  Process Run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv_storage = {LOCKSTEP_BINARY};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out = (dir_ / ".stdout").string(), err = (dir_ / ".stderr").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addchdir_np(&actions, dir_.c_str());
    Process p;
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, LOCKSTEP_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "cannot start " << LOCKSTEP_BINARY;
    if (rc != 0) return p;
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    p.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    p.out = ReadFile(out);
    p.err = ReadFile(err);
    fs::remove(out);
    fs::remove(err);
    return p;
  }

  // The names in the test's directory (the captured stdout and stderr excluded).
  std::set<std::string> Files() const {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.insert(entry.path().filename().string());
    }
    return names;
  }

  test::TempDir temp_{"lockstep-cli"};
  const fs::path& dir_ = temp_.path();
};

// --- Options from a TOML file (--config), as Kubernetes' ConfigMap gives them. ---

TEST_F(CliTest, ConfigFileGivesACommandsOptionsAndTheCommandLineWins) {
  const std::string graph = Write("g.el", "a b\nb c\nc a\nc d\n");
  const std::string config = Write("job.toml", "# a job\n[run.pagerank]\ngraph = \"" + graph +
                                                   "\"\nundirected = true\nmax-iterations = 3\n"
                                                   "tolerance = 0\nout = \"" +
                                                   Path("from-config.txt") + "\"\n");
  const Process p = Run({"--config", config, "run", "pagerank", "--max-iterations", "5"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_THAT(p.err, HasSubstr("6 supersteps"));  // 5 iterations and the first step
  const Process flags = Run({"run", "pagerank", "--graph", graph, "--undirected", "--tolerance",
                             "0", "--max-iterations", "5", "--out", Path("from-flags.txt")});
  ASSERT_EQ(flags.exit_code, 0) << flags.err;
  EXPECT_EQ(ReadFile(Path("from-config.txt")), ReadFile(Path("from-flags.txt")));
}

TEST_F(CliTest, ConfigFileWithAnUnknownKeyIsAnErrorNamingTheFileAndKey) {
  const std::string graph = Write("g.el", "a b\n");
  const std::string config =
      Write("job.toml", "[run.pagerank]\ngraph = \"" + graph + "\"\niterations = 3\n");
  const Process p = Run({"--config", config, "run", "pagerank", "--out", Path("out.txt")});
  EXPECT_NE(p.exit_code, 0);
  EXPECT_THAT(p.err, AllOf(HasSubstr("--config " + config), HasSubstr("run.pagerank.iterations")));
  EXPECT_EQ(Files(), (std::set<std::string>{"g.el", "job.toml"}));

  const Process missing = Run({"--config", Path("none.toml"), "run", "pagerank"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.err, HasSubstr("none.toml"));
}

// --- Bad input: an error naming the file and line, nothing written. ---

TEST_F(CliTest, MalformedEdgeListFailsAndWritesNothing) {
  const std::string graph = Write("bad.el", "1 2\n2 3\n4\n5 6\n");
  for (const std::string app : {"pagerank", "sssp", "coloring"}) {
    std::vector<std::string> args = {"run", app, "--graph", graph, "--out", Path("out.txt")};
    if (app == "sssp") args.insert(args.end(), {"--source", "1"});
    const Process p = Run(args);
    EXPECT_NE(p.exit_code, 0) << app;
    EXPECT_THAT(p.err, HasSubstr(graph + ":3:")) << app;
    EXPECT_EQ(Files(), std::set<std::string>{"bad.el"}) << app << ": an output or temporary file";
  }
}

TEST_F(CliTest, MalformedEdgeListLeavesAnExistingOutputAlone) {
  const std::string graph = Write("bad.el", "a b\n\n# comment\nb c d e\n");
  const std::string before = "precious\nbytes";
  const std::string out = Write("out.txt", before);
  const Process p = Run({"run", "pagerank", "--graph", graph, "--out", out});
  EXPECT_NE(p.exit_code, 0);
  EXPECT_THAT(p.err, AllOf(HasSubstr("bad.el"), HasSubstr(":4:")));
  EXPECT_EQ(ReadFile(out), before);
  EXPECT_EQ(Files(), (std::set<std::string>{"bad.el", "out.txt"}));
}

TEST_F(CliTest, BadWeightsNameTheirLineAndLeaveTheOutputAlone) {
  const std::string out = Write("out.txt", "old\n");
  const Process negative = Run({"run", "sssp", "--graph", Write("neg.el", "0 1 2\n1 2 -1\n"),
                                "--source", "0", "--out", out});
  EXPECT_NE(negative.exit_code, 0);
  EXPECT_THAT(negative.err, HasSubstr("neg.el:2:"));
  const Process missing = Run(
      {"run", "sssp", "--graph", Write("miss.el", "0 1 2\n1 2\n"), "--source", "0", "--out", out});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.err, HasSubstr("miss.el:2:"));
  EXPECT_EQ(ReadFile(out), "old\n");
}

// --- Bad command lines: a non-zero exit and a message naming what is wrong. ---

TEST_F(CliTest, UnknownAppIsNamed) {
  const std::string graph = Write("g.el", "1 2\n");
  const Process p = Run({"run", "nosuchapp", "--graph", graph, "--out", Path("out.txt")});
  EXPECT_NE(p.exit_code, 0);
  EXPECT_THAT(p.err, HasSubstr("nosuchapp"));
  EXPECT_FALSE(fs::exists(Path("out.txt")));
}

TEST_F(CliTest, MissingGraphFileIsNamed) {
  const Process p = Run({"run", "pagerank", "--graph", Path("nope.el"), "--out", Path("o")});
  EXPECT_NE(p.exit_code, 0);
  EXPECT_THAT(p.err, AllOf(HasSubstr("--graph"), HasSubstr("nope.el")));
  EXPECT_FALSE(fs::exists(Path("o")));
}

TEST_F(CliTest, BadFlagValuesNameTheFlag) {
  const std::string graph = Write("g.el", "1 2\n2 3\n");
  const std::string out = Path("out.txt");
  struct Case {
    std::vector<std::string> args;
    std::string flag;
  };
  const std::vector<Case> cases = {
      {{"run", "pagerank", "--threads", "0"}, "--threads"},
      {{"run", "pagerank", "--threads", "two"}, "--threads"},
      {{"run", "pagerank", "--damping", "abc"}, "--damping"},
      {{"run", "pagerank", "--damping", "2"}, "--damping"},
      {{"run", "pagerank", "--tolerance", "-1"}, "--tolerance"},
      {{"run", "pr", "--max-iterations", "x"}, "--max-iterations"},
      {{"run", "pagerank", "--format", "csv"}, "--format"},
      {{"run", "sssp"}, "--source"},
      {{"run", "sssp", "--source", "99"}, "--source"},
      {{"run", "sssp", "--source", "1", "--path-to", "99"}, "--path-to"},
      {{"run", "coloring", "--seed", "x"}, "--seed"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--graph", graph, "--out", out});
    const Process p = Run(args);
    EXPECT_NE(p.exit_code, 0) << c.flag;
    EXPECT_THAT(p.err, HasSubstr(c.flag)) << c.args[1] << " " << c.args[2];
    EXPECT_FALSE(fs::exists(out)) << c.flag;
  }
  // The --threads message should not contradict itself ("0 not in range 0 to ...").
  const Process zero = Run({"run", "pagerank", "--threads", "0", "--graph", graph, "--out", out});
  EXPECT_THAT(zero.err, Not(HasSubstr("range 0")));
}

// --- Output shape. ---

TEST_F(CliTest, TopPrintsThatManyLinesAndTheOutputHasOneLinePerVertex) {
  const std::string graph = Write("g.el", "a b\nb c\nc a\nc d\nd a\ne a\n");
  const Process p =
      Run({"run", "pagerank", "--graph", graph, "--out", Path("out.txt"), "--top", "3"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::vector<std::string> top = Lines(p.out);
  ASSERT_EQ(top.size(), 3u) << p.out;
  EXPECT_THAT(top[0], MatchesRegex("a [0-9.e-]+"));  // a has the most in-links
  for (const std::string& line : top) EXPECT_THAT(line, MatchesRegex("[a-e] [0-9.e-]+"));
  const std::vector<std::string> lines = Lines(ReadFile(Path("out.txt")));
  EXPECT_EQ(lines.size(), 5u);
  std::set<std::string> ids;
  for (const std::string& line : lines) {
    EXPECT_THAT(line, MatchesRegex("[a-e] [0-9][.0-9e-]*")) << line;
    ids.insert(line.substr(0, line.find(' ')));
  }
  EXPECT_EQ(ids, (std::set<std::string>{"a", "b", "c", "d", "e"}));
  // A progress line per superstep and a summary go to stderr.
  EXPECT_THAT(p.err, AllOf(HasSubstr("superstep 0"), HasSubstr("wrote")));
  // The file appears by rename: no temporary file is left beside it.
  EXPECT_EQ(Files(), (std::set<std::string>{"g.el", "out.txt"}));
}

TEST_F(CliTest, SsspPrintsThePathAndInfinity) {
  const std::string graph = Write("g.el", "s a 1\na t 2.5\ns t 4\nx y 1\n");
  const Process p = Run({"run", "sssp", "--graph", graph, "--source", "s", "--path-to", "t",
                         "--out", Path("out.txt")});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out, "path: s -> a -> t (cost 3.5)\n");
  const std::vector<std::string> lines = Lines(ReadFile(Path("out.txt")));
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()),
            (std::set<std::string>{"s 0", "a 1", "t 3.5", "x Infinity", "y Infinity"}));
  const Process none = Run({"run", "sssp", "--graph", graph, "--source", "s", "--path-to", "y",
                            "--out", Path("out.txt")});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "path: none\n");
}

TEST_F(CliTest, HelpListsTheApps) {
  const Process p = Run({"run", "--help"});
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_THAT(p.out, AllOf(HasSubstr("pagerank"), HasSubstr("sssp"), HasSubstr("coloring")));
}

// --- generate, then run at 1 and 2 threads. ---

TEST_F(CliTest, GeneratedGraphGivesTheSameOutputAtAnyThreadCount) {
  const Process gen = Run({"generate", "kronecker", "--scale", "10", "--out", Path("g.el")});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const std::vector<std::string> edges = Lines(ReadFile(Path("g.el")));
  ASSERT_GT(edges.size(), 1000u);
  for (size_t i = 0; i < edges.size(); i += 97) {
    std::istringstream in(edges[i]);
    uint64_t u = 0, v = 0;
    std::string rest;
    ASSERT_TRUE(in >> u >> v) << edges[i];
    EXPECT_FALSE(in >> rest) << edges[i];
    EXPECT_LT(u, v);
    EXPECT_LT(v, 1024u);
  }
  const std::string source = edges[0].substr(0, edges[0].find(' '));
  const std::vector<std::vector<std::string>> apps = {
      {"pagerank"}, {"sssp", "--source", source}, {"coloring", "--seed", "7"}};
  for (const auto& app : apps) {
    std::string outputs[2];
    for (int threads : {1, 2}) {
      const std::string out = Path(app[0] + "-" + std::to_string(threads) + ".txt");
      std::vector<std::string> args = {"run"};
      args.insert(args.end(), app.begin(), app.end());
      args.insert(args.end(), {"--graph", Path("g.el"), "--undirected", "--threads",
                               std::to_string(threads), "--out", out});
      const Process p = Run(args);
      ASSERT_EQ(p.exit_code, 0) << app[0] << ": " << p.err;
      outputs[threads - 1] = ReadFile(out);
    }
    EXPECT_FALSE(outputs[0].empty()) << app[0];
    EXPECT_TRUE(outputs[0] == outputs[1]) << app[0] << ": --threads 1 and 2 differ";
    for (const std::string& line : Lines(outputs[0])) {
      ASSERT_THAT(line, MatchesRegex("[0-9]+ [0-9][.0-9e-]*|[0-9]+ Infinity")) << app[0];
    }
  }
}

TEST_F(CliTest, GeneratedWeightedGraphRunsSssp) {
  const Process gen = Run({"generate", "uniform", "--scale", "8", "--degree", "4", "--weights",
                           "--seed", "5", "--out", Path("w.el")});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const std::string first = Lines(ReadFile(Path("w.el"))).at(0);
  const std::string source = first.substr(0, first.find(' '));
  const Process p = Run({"run", "sssp", "--graph", Path("w.el"), "--undirected", "--source", source,
                         "--out", Path("d.txt")});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_THAT(ReadFile(Path("d.txt")), HasSubstr(source + " 0\n"));
}

TEST_F(CliTest, GraphalyticsPropertiesGiveTheParameters) {
  const std::string props = std::string(LOCKSTEP_SHARED_DIR) +
                            "/graphalytics/example-data-sets/graphs/example-directed.properties";
  ASSERT_TRUE(fs::exists(props)) << props;
  // sssp.source-vertex comes from the file: no --source needed.
  const Process p = Run({"run", "sssp", "--graph", props, "--out", Path("d.txt")});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::vector<std::string> lines = Lines(ReadFile(Path("d.txt")));
  EXPECT_EQ(lines.size(), 10u);
  EXPECT_THAT(lines, ::testing::Contains("1 0"));
  EXPECT_THAT(lines, ::testing::Contains("2 Infinity"));
}

}  // namespace
}  // namespace lockstep
