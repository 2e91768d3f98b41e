// The `lockstep` command as a real process: bad input fails cleanly (non-zero exit, an error that
// names the file and line or the flag, no output written, an existing --out left alone), results
// have the documented shape, and outputs do not depend on --threads.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "util/lockstep_process.h"
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
  Process Run(const std::vector<std::string>& args) const { return Wait(Start(args)); }

  // Runs `bash -c script` (e.g. to set a ulimit before exec'ing lockstep) the same way.
  Process RunShell(const std::string& script) const {
    return Wait(Start({"-c", script}, "/bin/bash"));
  }

  // Starts `program args...` (lockstep by default) without waiting; Wait collects it.
  pid_t Start(const std::vector<std::string>& args,
              const std::string& program = LOCKSTEP_BINARY) const {
    std::vector<std::string> argv_storage = {program};
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
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "cannot start " << program;
    return rc == 0 ? pid : -1;
  }

  Process Wait(pid_t pid) const {
    Process p;
    if (pid < 0) return p;
    const std::string out = (dir_ / ".stdout").string(), err = (dir_ / ".stderr").string();
    // A deadline, so that a regression (a flag accepted, a worker serving for ever) fails the
    // test instead of hanging it.
    p.exit_code = test::WaitExitCode(pid);
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

// An edge-list --graph may be a directory: its files in byte-wise name order are one input (the
// output is the concatenated file's, byte for byte); a bad line names its file and the line in
// it; a directory without input files is bad input naming it.
TEST_F(CliTest, ADirectoryOfEdgeListsIsOneInput) {
  fs::create_directories(dir_ / "g");
  Write("g/b", "c d 2\nd a 1\n");
  Write("g/a", "a b 1\nb c 3");  // no final newline: its last line ends with the file
  Write("g/.skip", "not an edge\n");
  const std::string whole = Write("whole.el", "a b 1\nb c 3\nc d 2\nd a 1\n");
  for (const std::string app : {"pagerank", "sssp"}) {
    std::vector<std::string> source;
    if (app == "sssp") source = {"--source", "a"};
    std::vector<std::string> from_dir = {"run", app, "--graph", Path("g"), "--out", Path("d.txt")};
    std::vector<std::string> from_file = {"run", app, "--graph", whole, "--out", Path("f.txt")};
    from_dir.insert(from_dir.end(), source.begin(), source.end());
    from_file.insert(from_file.end(), source.begin(), source.end());
    const Process d = Run(from_dir);
    ASSERT_EQ(d.exit_code, 0) << d.err;
    const Process f = Run(from_file);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    EXPECT_EQ(ReadFile(Path("d.txt")), ReadFile(Path("f.txt"))) << app;
  }
  Write("g/b", "c d 2\nd\n");
  const Process bad = Run({"run", "pagerank", "--graph", Path("g"), "--out", Path("bad.txt")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr(Path("g") + "/b:2: expected 'src dst [weight]', found 1 field"));
  EXPECT_FALSE(fs::exists(Path("bad.txt")));
  fs::create_directories(dir_ / "empty");
  const Process empty = Run({"run", "pagerank", "--graph", Path("empty"), "--out", Path("e.txt")});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.err, HasSubstr(Path("empty") + ": the directory holds no input files"));
}

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

// --- Exit codes: 0 success, 1 the job failed, 2 the command line or configuration is wrong. ---

TEST_F(CliTest, UsageErrorsExitTwoNamingWhatIsWrong) {
  const std::string graph = Write("g.el", "1 2\n2 3\n");
  const std::string out = Path("out.txt");
  const std::string config = Write("bad.toml", "[run.pagerank]\niterations = 3\n");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"run", "pagerank", "--graph", graph, "--out", out, "--bogus"}, "--bogus"},
      {{"run", "pagerank", "--graph", Path("nope.el"), "--out", out}, "nope.el"},
      {{"run", "pagerank", "--out", out}, "--graph"},
      {{"run", "nosuchapp", "--graph", graph, "--out", out}, "nosuchapp"},
      {{"run", "pagerank", "--graph", graph, "--out", out, "--top", "-1"}, "--top"},
      {{"run", "pagerank", "--graph", graph, "--out", out, "--top", "x"}, "--top"},
      {{"run", "pagerank", "--graph", graph, "--out", out, "--max-supersteps", "-1"},
       "--max-supersteps"},
      {{"run", "pagerank", "--graph", graph, "--out", out, "--damping", "2"}, "--damping"},
      {{"run", "pagerank", "--graph", graph, "--out", out, "--damping", "abc"}, "--damping"},
      {{"run", "sssp", "--graph", graph, "--out", out}, "--source"},
      {{"--config", config, "run", "pagerank", "--graph", graph, "--out", out}, "iterations"},
      {{"--config", Path("none.toml"), "run", "pagerank", "--graph", graph, "--out", out},
       "none.toml"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "nosuchapp", "--graph", graph, "--out", out},
       "nosuchapp"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--every", "soon"},
       "--every"},
      // An option only `run` supports is refused by the master, never ignored (defect 2).
      {{"master", "--listen", "127.0.0.1:0", "--app", "sssp", "--graph", graph, "--out", out,
        "--source", "1", "--path-to", "3"},
       "--path-to is not supported by `lockstep master`"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--peer-timeout", "soon"},
       "--peer-timeout"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--acquire-timeout", "-5s"},
       "--acquire-timeout"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--min-workers", "3", "--max-workers", "2"},
       "--min-workers"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--damping", "7"},
       "--damping"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--source", "1"},
       "--source"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--checkpoint-every", "3"},
       "--checkpoint-every needs --checkpoint-dir"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--checkpoint-dir", Path("ck")},
       "--checkpoint-dir needs --checkpoint-every"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--replace-stragglers"},
       "--replace-stragglers needs --max-restarts"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--straggler-timeout", "soon"},
       "--straggler-timeout"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--checkpoint-interval", "1s"},
       "--checkpoint-interval needs --checkpoint-dir"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--checkpoint-dir", Path("ck"), "--checkpoint-interval", "soon"},
       "--checkpoint-interval"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out", out,
        "--checkpoint-dir", Path("ck"), "--checkpoint-every", "2", "--checkpoint-keep", "0"},
       "--checkpoint-keep"},
      {{"master", "--listen", "127.0.0.1:0", "--graph", graph, "--out", out}, "--app is required"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--out", out},
       "--graph is required"},
      {{"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph},
       "--out is required"},
      // Without --app, --checkpoint-dir resumes the job there as recorded: nothing else goes.
      {{"master", "--listen", "127.0.0.1:0", "--checkpoint-dir", Path("ck"), "--graph", graph},
       "--graph without --app"},
      {{"master", "--listen", "127.0.0.1:0", "--checkpoint-dir", Path("ck")},
       "holds no unfinished job to resume"},
      {{"worker", "--master", "127.0.0.1:1", "--max-jobs", "-1"}, "--max-jobs"},
      {{"health", "127.0.0.1:1", "--timeout", "never"}, "--timeout"},
      {{"generate", "kronecker", "--scale", "0", "--out", Path("k.el")}, "--scale"},
      {{"generate", "kronecker", "--scale", "-3", "--out", Path("k.el")}, "--scale"},
      {{"validate", "--expected", graph, "--actual", graph}, "--rule"},
      {{"validate", "--expected", graph, "--actual", graph, "--rule", "close"}, "--rule"},
      {{"bogus-command"}, "bogus-command"},
  };
  for (const Case& c : cases) {
    const Process p = Run(c.args);
    std::string line;
    for (const std::string& a : c.args) line += a + " ";
    EXPECT_EQ(p.exit_code, 2) << line << "\n" << p.err;
    EXPECT_THAT(p.err, HasSubstr(c.says)) << line;
    EXPECT_FALSE(fs::exists(out)) << line;
  }
}

TEST_F(CliTest, HelpExitsZero) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"--help-all"}, {"run", "pagerank", "--help"}, {"master", "--help"}}) {
    const Process p = Run(args);
    EXPECT_EQ(p.exit_code, 0) << args[0] << "\n" << p.err;
    EXPECT_THAT(p.out, HasSubstr("--")) << args[0];
  }
}

TEST_F(CliTest, FailedJobsExitOne) {
  const Process bad =
      Run({"run", "pagerank", "--graph", Write("bad.el", "1 2\n3\n"), "--out", Path("out.txt")});
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  // A source the graph lacks is known only once the graph is read: the job fails.
  const Process source = Run({"run", "sssp", "--graph", Write("g.el", "1 2\n"), "--source", "9",
                              "--out", Path("out.txt")});
  EXPECT_EQ(source.exit_code, 1) << source.err;
  EXPECT_THAT(source.err, HasSubstr("--source"));
  const Process unwritable =
      Run({"run", "pagerank", "--graph", Path("g.el"), "--out", Path("no-such-dir/out.txt")});
  EXPECT_EQ(unwritable.exit_code, 1) << unwritable.err;
  const Process mismatch = Run({"validate", "--expected", Write("a.txt", "1 1\n2 2\n"), "--actual",
                                Write("b.txt", "1 1\n2 3\n"), "--rule", "exact"});
  EXPECT_EQ(mismatch.exit_code, 1) << mismatch.err;
  EXPECT_EQ(Files(), (std::set<std::string>{"bad.el", "g.el", "a.txt", "b.txt"}));
}

TEST_F(CliTest, MasterServiceEndedBySigtermExitsZero) {
  const std::string graph = Write("g.el", "1 2\n2 3\n");
  // No worker ever comes: the service waits in its first job until SIGTERM.
  const pid_t pid =
      Start({"master", "--listen", "127.0.0.1:0", "--app", "pagerank", "--graph", graph, "--out",
             Path("result"), "--every", "1s", "--port-file", Path("port")});
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 300 && !fs::exists(Path("port")); ++i) ::usleep(20000);
  ASSERT_TRUE(fs::exists(Path("port")));
  ::usleep(200000);  // into the job's wait for workers
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  const Process p = Wait(pid);
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_FALSE(fs::exists(Path("result")));
}

// --- Output onto what is not a regular file: written into, never replaced. ---

// As root, replacing /dev/null with a regular file breaks every program on the machine. The
// device here is one made in the test's directory with /dev/null's numbers; the real one is never
// named.
TEST_F(CliTest, OutputOntoADeviceKeepsTheDevice) {
  const std::string device = Path("null");
  // CI runs the tests as root; without root this fails rather than skip the check.
  ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0)
      << "mknod " << device << ": " << std::strerror(errno) << " (this test needs root)";
  const std::string graph = Write("g.el", "1 2\n2 3\n3 1\n");
  const Process p = Run({"run", "pagerank", "--graph", graph, "--out", device});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  // --top reads the result back from --out, which a device cannot give.
  const Process top = Run({"run", "pagerank", "--graph", graph, "--out", device, "--top", "2"});
  EXPECT_EQ(top.exit_code, 2) << top.err;
  EXPECT_THAT(top.err, HasSubstr("--top"));
  struct stat st;
  ASSERT_EQ(::lstat(device.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device was replaced by a regular file";
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_EQ(Files(), (std::set<std::string>{"g.el", "null"}));  // no temporary beside it
  // generate writes its own file the same way.
  const Process gen = Run({"generate", "uniform", "--scale", "6", "--out", device});
  EXPECT_EQ(gen.exit_code, 0) << gen.err;
  ASSERT_EQ(::lstat(device.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "generate replaced the device by a regular file";
  EXPECT_EQ(Files(), (std::set<std::string>{"g.el", "null"}));
}

TEST_F(CliTest, OutputOntoAFifoReachesItsReader) {
  const std::string fifo = Path("results.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const std::string graph = Write("g.el", "a b\nb c\nc a\n");
  // Detached: if the FIFO were replaced, its reader would wait for a writer for ever.
  auto received = std::make_shared<std::promise<std::string>>();
  std::future<std::string> done = received->get_future();
  std::thread([fifo, received] { received->set_value(ReadFile(fifo)); }).detach();
  const Process p = Run({"run", "wcc", "--graph", graph, "--out", fifo});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  ASSERT_EQ(done.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the reader got nothing: the FIFO was replaced";
  const std::vector<std::string> lines = Lines(done.get());
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()),
            (std::set<std::string>{"a a", "b a", "c a"}));
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// --- Graphalytics input that used to be accepted silently. ---

TEST_F(CliTest, GraphalyticsDirectedMustBeTrueOrFalse) {
  Write("t.v", "1\n2\n3\n");
  Write("t.e", "1 2\n2 3\n");
  for (const std::string line :
       {"graph.t.directed = maybe\n", "graph.t.directed = False\n", "graph.t.directed =\n", ""}) {
    const std::string props =
        Write("t.properties", "graph.t.vertex-file = t.v\ngraph.t.edge-file = t.e\n" + line);
    const Process p = Run({"run", "wcc", "--graph", props, "--out", Path("out.txt")});
    EXPECT_EQ(p.exit_code, 1) << line << p.err;
    EXPECT_THAT(p.err, AllOf(HasSubstr(props + (line.empty() ? ": " : ":3: ")),
                             HasSubstr("graph.t.directed"), HasSubstr("true or false")))
        << line;
    EXPECT_FALSE(fs::exists(Path("out.txt")));
  }
  // --undirected cannot override it: the flag is for edge lists.
  const std::string props =
      Write("t.properties",
            "graph.t.vertex-file = t.v\ngraph.t.edge-file = t.e\ngraph.t.directed = true\n");
  const Process flag = Run({"run", "wcc", "--graph", props, "--undirected", "--out", Path("o")});
  EXPECT_EQ(flag.exit_code, 2) << flag.err;
  EXPECT_THAT(flag.err, HasSubstr("--undirected"));
}

TEST_F(CliTest, GraphalyticsVertexListedTwiceIsAnError) {
  Write("t.v", "1\n2\n3\n2\n");
  Write("t.e", "1 2\n2 3\n");
  const std::string props =
      Write("t.properties",
            "graph.t.vertex-file = t.v\ngraph.t.edge-file = t.e\ngraph.t.directed = true\n");
  const Process p = Run({"run", "wcc", "--graph", props, "--out", Path("out.txt")});
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_THAT(p.err, HasSubstr(Path("t.v") + ":4: vertex 2 is listed twice (first on line 2)"));
  EXPECT_FALSE(fs::exists(Path("out.txt")));
}

// --- A bad token is quoted short and clean: one line, whatever the input holds. ---

TEST_F(CliTest, HugeOrBinaryTokensGiveAShortCleanError) {
  const std::string huge = Write("huge.el", "1 2\n2 3 " + std::string(1 << 20, '7') + "x\n");
  const Process p = Run({"run", "pagerank", "--graph", huge, "--out", Path("out.txt")});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_THAT(
      p.err, AllOf(HasSubstr(huge + ":2: invalid weight '7777"), HasSubstr("... (1048577 bytes)")));
  EXPECT_LT(p.err.size(), 400u);
  EXPECT_EQ(Lines(p.err).size(), 1u) << p.err;
  const std::string binary = Write("binary.el", std::string("1 2\n2 3 \xff\xfe\x1b[2J\x01\n", 15));
  const Process b = Run({"run", "pagerank", "--graph", binary, "--out", Path("out.txt")});
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_THAT(b.err, HasSubstr(binary + ":2: invalid weight '\\xff\\xfe\\x1b[2J\\x01'"));
  EXPECT_EQ(Lines(b.err).size(), 1u) << b.err;
}

// --- Out of memory: a failed job with a message, not an abort. ---

TEST_F(CliTest, OutOfMemoryFailsTheJobWithAMessage) {
  // The address space an idle run needs here (the binary, its libraries, a thread or two):
  // the smallest limit, in 16 MiB steps, under which a tiny graph runs.
  const std::string tiny = Write("tiny.el", "1 2\n");
  int idle_mib = 0;
  for (int mib = 32; mib <= 2048 && idle_mib == 0; mib += 16) {
    const Process p =
        RunShell("ulimit -v " + std::to_string(mib * 1024) + "; exec " + LOCKSTEP_BINARY +
                 " run pagerank --threads 1 --graph " + tiny + " --out " + Path("tiny.txt"));
    if (p.exit_code == 0) idle_mib = mib;
  }
  ASSERT_GT(idle_mib, 0) << "no limit up to 2 GiB runs even a tiny graph";
  // A graph that needs far more: about 4 million edges, a few hundred MiB to load and run.
  const Process gen = Run({"generate", "kronecker", "--scale", "18", "--out", Path("big.el")});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const Process p = RunShell("ulimit -v " + std::to_string((idle_mib + 48) * 1024) + "; exec " +
                             LOCKSTEP_BINARY + " run pagerank --threads 1 --undirected --graph " +
                             Path("big.el") + " --out " + Path("big.txt"));
  EXPECT_EQ(p.exit_code, 1) << "idle needs " << idle_mib << " MiB\n" << p.err;
  EXPECT_THAT(p.err, MatchesRegex("(.|\n)*out of memory while building [^\n]+ \\(needed about "
                                  "[0-9]+ MiB\\)(.|\n)*"));
  EXPECT_FALSE(fs::exists(Path("big.txt")));
}

// A worker under an address-space limit below what its part of the graph needs fails the job with
// its out-of-memory message, which the master shows (it said only "worker disconnected" when the
// worker died of an uncaught std::bad_alloc); the master serves on and publishes nothing.
TEST_F(CliTest, AWorkerOutOfMemoryFailsTheJobAndTheMasterShowsWhy) {
  const Process gen = Run({"generate", "kronecker", "--scale", "18", "--out", Path("big.el")});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const Process started = RunShell(
      "cd " + Path("") + " || exit 1; " + LOCKSTEP_BINARY +
      " master --listen 127.0.0.1:0 --port-file port --app pagerank --undirected --graph big.el "
      "--out res --min-workers 1 --every 100ms > master.log 2>&1 & echo $! > master.pid");
  ASSERT_EQ(started.exit_code, 0) << started.err;
  std::string port;
  for (int i = 0; i < 500 && port.empty(); ++i) {
    ::usleep(10000);
    port = ReadFile(Path("port"));
  }
  ASSERT_FALSE(port.empty()) << ReadFile(Path("master.log"));
  while (!port.empty() && port.back() == '\n') port.pop_back();
  const pid_t master = static_cast<pid_t>(std::stol(ReadFile(Path("master.pid"))));
  // From a limit too small to hold the graph upwards, until a worker connects and takes a job
  // (below some limit it cannot even start its threads). Under an address-space limit gRPC 1.51
  // can stall for good when one of its threads fails to start: a worker that never reaches the
  // master is killed after 30 s and the next limit is tried; one that failed its job must exit
  // (its teardown is bounded, docs/design.md §7).
  bool failed = false;
  int limit_mib = 0;
  for (int mib = 112; mib <= 1024 && !failed; mib += 16) {
    const Process w =
        RunShell("ulimit -v " + std::to_string(mib * 1024) + "; exec timeout -s KILL 30 " +
                 LOCKSTEP_BINARY + " worker --threads 1 --max-jobs 1 --master 127.0.0.1:" + port);
    failed = ReadFile(Path("master.log")).find("out of memory while building") != std::string::npos;
    if (failed) {
      limit_mib = mib;
      EXPECT_EQ(w.exit_code, 1) << w.err;
      EXPECT_THAT(w.err, HasSubstr("out of memory while building")) << w.err;
    }
  }
  // The master logs the worker's failure when it arrives and "job failed: ..." once the job is
  // over: wait for that line, after the failure (an earlier job, whose worker could not start,
  // may have logged its own), before stopping it.
  auto job_over = [&] {
    const std::string log = ReadFile(Path("master.log"));
    const size_t oom = log.find("out of memory while building");
    return oom != std::string::npos && log.find("job failed: ", oom) != std::string::npos;
  };
  for (int i = 0; i < 2000 && failed && !job_over(); ++i) ::usleep(10000);
  ::kill(master, SIGTERM);
  for (int i = 0; i < 1000 && ::kill(master, 0) == 0; ++i) ::usleep(10000);
  const std::string log = ReadFile(Path("master.log"));
  ASSERT_TRUE(failed) << log;
  EXPECT_THAT(log, MatchesRegex("(.|\n)*job failed: worker 0 \\(ipv4:127\\.0\\.0\\.1:[0-9]+\\): "
                                "failed: [^\n]*out of memory while building [^\n]+ \\(needed "
                                "about [0-9]+ MiB\\)(.|\n)*"))
      << "limit " << limit_mib << " MiB\n"
      << log;
  EXPECT_FALSE(fs::exists(Path("res"))) << "a failed job published something";
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

// The largest values of an app with a source are those of the vertices it reaches: an unreachable
// vertex's value (Infinity, INT64_MAX) is never among them.
TEST_F(CliTest, TopListsTheLargestReachableValues) {
  const std::string graph = Write("g.el", "s a 1\na t 2.5\nx y 1\nz s 1\n");
  const Process sssp =
      Run({"run", "sssp", "--graph", graph, "--source", "s", "--out", Path("d.txt"), "--top", "3"});
  ASSERT_EQ(sssp.exit_code, 0) << sssp.err;
  EXPECT_EQ(sssp.out, "t 3.5\na 1\ns 0\n");
  const Process bfs =
      Run({"run", "bfs", "--graph", graph, "--source", "s", "--out", Path("b.txt"), "--top", "5"});
  ASSERT_EQ(bfs.exit_code, 0) << bfs.err;
  EXPECT_EQ(bfs.out, "t 2\na 1\ns 0\n");
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

// `partition` writes the binary form once; `run` on it gives byte for byte what `run` on the text
// gives, takes its weights and its Graphalytics parameters along, and a damaged file fails the job
// with an error naming it.
TEST_F(CliTest, PartitionedGraphRunsLikeItsText) {
  const Process gen = Run({"generate", "kronecker", "--scale", "10", "--degree", "8", "--weights",
                           "--out", Path("g.el")});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const Process part = Run({"partition", "--graph", Path("g.el"), "--undirected", "--out",
                            Path("parts"), "--parts", "3"});
  ASSERT_EQ(part.exit_code, 0) << part.err;
  ASSERT_TRUE(fs::exists(Path("parts/lockstep-parts.manifest")));
  const std::string first = Lines(ReadFile(Path("g.el"))).at(0);
  const std::string source = first.substr(0, first.find(' '));
  const std::vector<std::vector<std::string>> apps = {
      {"pagerank"}, {"sssp", "--source", source}, {"wcc"}};
  for (const auto& app : apps) {
    std::vector<std::string> text = {"run"}, binary = {"run"};
    text.insert(text.end(), app.begin(), app.end());
    binary.insert(binary.end(), app.begin(), app.end());
    text.insert(text.end(), {"--graph", Path("g.el"), "--undirected", "--out", Path("t.txt")});
    binary.insert(binary.end(), {"--graph", Path("parts"), "--out", Path("b.txt")});
    const Process a = Run(text);
    ASSERT_EQ(a.exit_code, 0) << app[0] << ": " << a.err;
    const Process b = Run(binary);
    ASSERT_EQ(b.exit_code, 0) << app[0] << ": " << b.err;
    EXPECT_FALSE(ReadFile(Path("t.txt")).empty());
    EXPECT_TRUE(ReadFile(Path("t.txt")) == ReadFile(Path("b.txt"))) << app[0] << " differs";
  }
  // A flipped byte: the job fails (exit 1) naming the file, and writes nothing.
  {
    std::fstream f(Path("parts/part-00001-of-00003.lsp"),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(300);
    f.put('\x7f');
  }
  const Process bad = Run({"run", "pagerank", "--graph", Path("parts"), "--out", Path("x.txt")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("part-00001-of-00003.lsp: checksum mismatch"));
  EXPECT_FALSE(fs::exists(Path("x.txt")));
  // Into a directory that is not a partitioned graph: refused, nothing touched (exit 2).
  fs::create_directories(Path("other"));
  Write("other/keep.txt", "x");
  const Process refused = Run({"partition", "--graph", Path("g.el"), "--out", Path("other")});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("is not a partitioned graph"));
}

TEST_F(CliTest, PartitionedGraphalyticsGraphKeepsItsParameters) {
  const std::string props = std::string(LOCKSTEP_SHARED_DIR) +
                            "/graphalytics/example-data-sets/graphs/example-directed.properties";
  const Process part = Run({"partition", "--graph", props, "--out", Path("parts")});
  ASSERT_EQ(part.exit_code, 0) << part.err;
  // sssp.source-vertex and the weights come from the partitioned graph.
  const Process a = Run({"run", "sssp", "--graph", props, "--out", Path("a.txt")});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const Process b = Run({"run", "sssp", "--graph", Path("parts"), "--out", Path("b.txt")});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(ReadFile(Path("a.txt")), ReadFile(Path("b.txt")));
  EXPECT_THAT(Lines(ReadFile(Path("b.txt"))), ::testing::Contains("1 0"));
}

}  // namespace
}  // namespace lockstep
