// Distributed conformance: every built-in app on a few graphs, through a master and 1, 2 and 4
// workers on 127.0.0.1, gives the local mode's answer (`lockstep run`) — byte-identical sorted
// lines, PageRank's floating point included — and the result is published as DIR -> a job directory
// of part-NNNNN files with _SUCCESS. A user's own binary (examples/indegree) runs distributed the
// same way, and 16 workers work too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cluster.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

// --- Graphs: written once per test process into a temporary directory.

struct Graph {
  std::string path;
  bool undirected = false;
  std::string source;  // an SSSP source that is in the graph
  std::string format;  // empty: by suffix
};

// A directed graph with string IDs (one not ASCII), weights, self-loops, parallel edges of
// different weights, and vertices that only receive edges (dangling for PageRank).
std::string StringGraph() {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  constexpr int kVertices = 300, kWithOutEdges = 240;
  auto name = [](int i) {
    if (i == 7) return std::string("z\xc3\xa9ro");  // "zéro"
    if (i % 5 == 0) return "user:" + std::to_string(i * 7919 % 100003);
    return "v-" + std::to_string(i * 31 % 997) + "-x";
  };
  const double weights[] = {0.5, 1, 1.25, 2, 3, 7.75, 0};
  std::ostringstream out;
  out << "# a directed graph with string IDs\n";
  for (int i = 0; i < kWithOutEdges; ++i) {
    const int degree = 1 + static_cast<int>(next() % 5);
    for (int k = 0; k < degree; ++k) {
      const int j = static_cast<int>(next() % kVertices);
      out << name(i) << ' ' << name(j) << ' ' << weights[next() % 7] << '\n';
      if (next() % 10 == 0) out << name(i) << ' ' << name(j) << ' ' << weights[next() % 7] << '\n';
    }
    if (i % 17 == 0) out << name(i) << ' ' << name(i) << " 1\n";  // self-loop
  }
  // Every dangling vertex is reachable from someone so that SSSP is not trivial there.
  for (int j = kWithOutEdges; j < kVertices; ++j) {
    out << name(j % kWithOutEdges) << ' ' << name(j) << " 2.5\n";
  }
  return out.str();
}

// Hand-drawn: parallel edges, a self-loop on a vertex with other edges, a vertex whose only
// edge is a self-loop, a dangling vertex, and too few vertices for four workers (empty parts).
constexpr char kTinyGraph[] =
    "a b 1\n"
    "a b 2\n"
    "b c 1\n"
    "c c 1\n"
    "c a 4\n"
    "d c 1\n"
    "e e 1\n"
    "e f 2\n"
    "a f 9\n";

// Canonical UUIDs are used as they are: every vertex lies in the first or the last quarter of the
// ID space, so at four workers workers 1 and 2 own nothing, and at two workers the halves talk.
std::string UuidGraph() {
  auto id = [](int i) {
    char buf[40];
    if (i % 2 == 0) {
      std::snprintf(buf, sizeof buf, "%08x-0000-4000-8000-%012x", i * 977, i);
    } else {
      std::snprintf(buf, sizeof buf, "ffff%04x-0000-4000-8000-%012x", i * 13, i);
    }
    return std::string(buf);
  };
  std::ostringstream out;
  for (int i = 0; i < 40; ++i) {
    out << id(i) << ' ' << id((i * 7 + 3) % 40) << " 1\n";
    out << id(i) << ' ' << id((i + 1) % 40) << " 2\n";
    if (i % 9 == 0) out << id(i) << ' ' << id(i) << " 1\n";
  }
  out << id(3) << ' ' << id(41) << " 1\n";  // 41 is dangling
  return out.str();
}

class Graphs {
 public:
  static Graphs& Get() {
    static Graphs graphs;  // removed at exit
    return graphs;
  }
  const Graph& operator[](const std::string& name) const { return graphs_.at(name); }
  const fs::path& dir() const { return dir_.path(); }

 private:
  Graphs() : dir_("lockstep-conformance-graphs") {
    {
      const fs::path kron = dir_ / "kron10.el";
      Process::Options o;
      o.cwd = dir_.path();
      o.log = dir_ / "generate.log";
      auto p = Process::Start(
          LOCKSTEP_BINARY, {"generate", "kronecker", "--scale", "10", "--out", kron.string()}, o);
      EXPECT_EQ(p->Wait(60s), 0) << ReadFile(o.log);
      const std::string text = ReadFile(kron);
      graphs_["kron10"] = {kron.string(), true, text.substr(0, text.find(' ')), ""};
    }
    auto write = [&](const std::string& name, const std::string& text, const std::string& source) {
      WriteFile(dir_ / name, text);
      graphs_[name.substr(0, name.find('.'))] = {(dir_ / name).string(), false, source, ""};
    };
    write("strings.el", StringGraph(), "v-31-x");
    write("tiny.el", kTinyGraph, "a");
    write("uuids.el", UuidGraph(), "00000000-0000-4000-8000-000000000000");
    // Graphalytics: vertices listed apart, so some have no edges at all.
    WriteFile(dir_ / "iso.v", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n");
    WriteFile(dir_ / "iso.e", "1 2 0.5\n2 3 1.5\n3 1 1\n3 4 2\n4 4 1\n1 5 3\n5 2 1\n9 10 1\n");
    WriteFile(dir_ / "iso.properties",
              "graph.iso.vertex-file = iso.v\n"
              "graph.iso.edge-file = iso.e\n"
              "graph.iso.directed = true\n"
              "graph.iso.edge-properties.names = weight\n"
              "graph.iso.edge-properties.types = real\n"
              "graph.iso.sssp.source-vertex = 1\n");
    graphs_["iso"] = {(dir_ / "iso.properties").string(), false, "1", "graphalytics"};
    write("empty.el", "# no edges: every worker's part is empty\n", "");
  }

  TempDir dir_;
  std::map<std::string, Graph> graphs_;
};

// --- Comparing results

std::map<std::string, std::string> ById(const std::vector<std::string>& lines) {
  std::map<std::string, std::string> out;
  for (const std::string& line : lines) {
    const size_t sp = line.rfind(' ');
    out[line.substr(0, sp)] = sp == std::string::npos ? "" : line.substr(sp + 1);
  }
  return out;
}

// Exact: the same sorted lines. Reports the first differences only, not two whole files.
void ExpectSameLines(const std::vector<std::string>& expected,
                     const std::vector<std::string>& actual, const std::string& what) {
  if (expected == actual) return;
  const auto e = ById(expected), a = ById(actual);
  std::ostringstream diff;
  int shown = 0;
  for (const auto& [id, value] : e) {
    auto it = a.find(id);
    if (it == a.end()) {
      if (shown++ < 10) diff << "  missing " << id << " (local " << value << ")\n";
    } else if (it->second != value) {
      if (shown++ < 10)
        diff << "  " << id << ": local " << value << ", distributed " << it->second << "\n";
    }
  }
  for (const auto& [id, value] : a) {
    if (!e.contains(id) && shown++ < 10) diff << "  extra " << id << " " << value << "\n";
  }
  ADD_FAILURE() << what << ": " << expected.size() << " local lines, " << actual.size()
                << " distributed, differing:\n"
                << diff.str();
}

// --- Running

struct Case {
  std::string app;
  std::string graph;
  std::vector<std::string> options;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return info.param.app + "_" + info.param.graph;
}

std::vector<std::string> GraphArgs(const Graph& g) {
  std::vector<std::string> args = {"--graph", g.path};
  if (g.undirected) args.push_back("--undirected");
  if (!g.format.empty()) args.insert(args.end(), {"--format", g.format});
  return args;
}

std::vector<std::string> AppOptions(const Case& c, const Graph& g) {
  std::vector<std::string> options = c.options;
  if (c.app == "sssp" || c.app == "bfs") options.insert(options.end(), {"--source", g.source});
  return options;
}

// `binary run app ...` into dir/local.txt; returns its sorted lines.
std::vector<std::string> RunLocal(const std::string& binary, const std::string& app,
                                  const std::vector<std::string>& args, const TempDir& dir) {
  Process::Options o;
  o.cwd = dir.path();
  o.log = dir / "local.log";
  std::vector<std::string> full = {"run", app, "--out", (dir / "local.txt").string()};
  full.insert(full.end(), args.begin(), args.end());
  auto p = Process::Start(binary, full, o);
  const auto code = p->Wait(120s);
  EXPECT_EQ(code, 0) << p->command() << "\n" << ReadFile(o.log);
  return SortedLines(ReadFile(dir / "local.txt"));
}

// One job on a fresh master and `workers` workers (each serving one job); returns what it
// published, after checking that every process exited 0 and nothing but DIR and its job
// directory is left beside DIR.
std::optional<Published> RunDistributed(const std::string& binary, const std::string& app,
                                        const std::vector<std::string>& args, int workers,
                                        const TempDir& dir,
                                        const std::vector<std::string>& worker_args = {},
                                        const std::string& relay = "direct") {
  const fs::path run_dir = dir / ("w" + std::to_string(workers) + "-" + relay);
  fs::create_directories(run_dir / "res");
  const fs::path out = run_dir / "res" / "out";
  Cluster cluster(binary, run_dir);
  std::vector<std::string> margs = {"--app",         app,
                                    "--out",         out.string(),
                                    "--min-workers", std::to_string(workers),
                                    "--max-workers", std::to_string(workers),
                                    "--relay",       relay};
  margs.insert(margs.end(), args.begin(), args.end());
  Process& master = cluster.StartMaster(margs);
  if (cluster.port() == 0) return std::nullopt;
  std::vector<std::string> wargs = {"--max-jobs", "1"};
  wargs.insert(wargs.end(), worker_args.begin(), worker_args.end());
  for (int i = 0; i < workers; ++i) cluster.StartWorker(wargs);
  if (!cluster.WaitAll(120s)) return std::nullopt;
  EXPECT_EQ(master.exit_code(), 0) << master.Log();
  for (Process* w : cluster.workers()) EXPECT_EQ(w->exit_code(), 0) << w->Log();
  const std::string log = master.Log();
  EXPECT_THAT(log, HasSubstr("on " + std::to_string(workers) + " worker"));
  EXPECT_THAT(log, HasSubstr("superstep 0 | active"));  // progress lines
  auto published = ReadPublished(out, static_cast<size_t>(workers));
  if (published) {
    std::set<std::string> beside;
    for (const auto& e : fs::directory_iterator(run_dir / "res")) {
      beside.insert(e.path().filename().string());
    }
    const std::string job_dir = fs::read_symlink(out).filename().string();
    EXPECT_EQ(beside, (std::set<std::string>{"out", job_dir})) << "temporary files beside DIR";
    EXPECT_THAT(log, HasSubstr("job " + published->job_id + ": completed"));
  }
  if (::testing::Test::HasFailure()) std::cerr << cluster.Logs();
  return published;
}

// The clusters each case runs on: in the suite, direct relay at 1, 2 and 3 workers and the master's
// relay at 2; with LOCKSTEP_CONFORMANCE_FULL=1 (ctest -L matrix), 1 to 4 workers in both modes.
std::vector<std::pair<int, std::string>> Clusters() {
  const char* full = std::getenv("LOCKSTEP_CONFORMANCE_FULL");
  if (full != nullptr && std::string(full) == "1") {
    std::vector<std::pair<int, std::string>> all;
    for (const char* relay : {"direct", "master"}) {
      for (int workers = 1; workers <= 4; ++workers) all.emplace_back(workers, relay);
    }
    return all;
  }
  return {{1, "direct"}, {2, "direct"}, {3, "direct"}, {2, "master"}};
}

class ConformanceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ConformanceTest, EveryClusterGivesTheLocalAnswer) {
  const Case& c = GetParam();
  const Graph& g = Graphs::Get()[c.graph];
  TempDir dir("lockstep-conformance");
  std::vector<std::string> args = GraphArgs(g);
  const std::vector<std::string> options = AppOptions(c, g);
  args.insert(args.end(), options.begin(), options.end());
  const std::vector<std::string> local = RunLocal(LOCKSTEP_BINARY, c.app, args, dir);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(local.empty(), c.graph == "empty");
  for (const auto& [workers, relay] : Clusters()) {
    SCOPED_TRACE(::testing::Message() << workers << " workers, " << relay << " relay");
    auto published = RunDistributed(LOCKSTEP_BINARY, c.app, args, workers, dir, {}, relay);
    ASSERT_TRUE(published.has_value());
    const std::string what = c.app + " on " + c.graph + " at " + std::to_string(workers) +
                             " workers, " + relay + " relay";
    ExpectSameLines(local, published->lines, what);
  }
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(BuiltinApps, ConformanceTest, ::testing::Values(
    Case{"pagerank", "kron10", {"--tolerance", "0", "--max-iterations", "30"}},
    Case{"pagerank", "strings", {"--tolerance", "0", "--max-iterations", "30"}},
    Case{"pagerank", "tiny", {"--tolerance", "0", "--max-iterations", "30"}},
    Case{"pagerank", "uuids", {"--tolerance", "0", "--max-iterations", "30"}},
    Case{"pagerank", "iso", {"--tolerance", "0", "--max-iterations", "30"}},
    Case{"pagerank", "empty", {"--tolerance", "0", "--max-iterations", "30"}},
    Case{"sssp", "kron10", {}},
    Case{"sssp", "strings", {}},
    Case{"sssp", "tiny", {}},
    Case{"sssp", "uuids", {}},
    Case{"sssp", "iso", {}},
    Case{"coloring", "kron10", {}},
    Case{"coloring", "strings", {"--seed", "7"}},
    Case{"coloring", "tiny", {}},
    Case{"coloring", "uuids", {}},
    Case{"coloring", "iso", {}},
    Case{"coloring", "empty", {}}), CaseName);

// The Graphalytics kernels registered beside them: integer (or exactly computed) results, so the
// distributed answer must be byte-identical too.
INSTANTIATE_TEST_SUITE_P(GraphalyticsApps, ConformanceTest, ::testing::Values(
    Case{"bfs", "kron10", {}},
    Case{"bfs", "strings", {}},
    Case{"bfs", "uuids", {}},
    Case{"wcc", "kron10", {}},
    Case{"wcc", "strings", {}},
    Case{"wcc", "tiny", {}},
    Case{"wcc", "iso", {}},
    Case{"cdlp", "kron10", {}},
    Case{"cdlp", "strings", {}},
    Case{"cdlp", "uuids", {}},
    Case{"lcc", "kron10", {}},
    Case{"lcc", "strings", {"--phases", "3"}},
    Case{"lcc", "tiny", {}},
    Case{"lcc", "iso", {}}), CaseName);
// clang-format on

// Checkpoints (docs/design.md §7.6): with `--checkpoint-every 2` the workers write their state
// every two supersteps and the master the manifest, and the job still gives the local answer, byte
// for byte: broadcasts (PageRank, SSSP, CDLP) and programs whose messages are written (LCC,
// colouring with its variable-size values). The job's checkpoint directory is gone once it has
// published.
TEST(CheckpointedJobs, GiveTheLocalAnswerAndLeaveNothingBehind) {
  TempDir dir("lockstep-conformance-checkpoints");
  const fs::path checkpoints = dir / "checkpoints";
  const std::vector<Case> cases = {
      {"pagerank", "kron10", {"--tolerance", "0", "--max-iterations", "9"}},
      {"sssp", "strings", {}},
      {"cdlp", "uuids", {}},
      {"lcc", "strings", {"--phases", "3"}},
      {"coloring", "strings", {"--seed", "7"}}};
  int workers = 2;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.app + " on " + c.graph);
    const Graph& g = Graphs::Get()[c.graph];
    std::vector<std::string> args = GraphArgs(g);
    const std::vector<std::string> options = AppOptions(c, g);
    args.insert(args.end(), options.begin(), options.end());
    TempDir case_dir("lockstep-conformance-checkpoint");
    const std::vector<std::string> local = RunLocal(LOCKSTEP_BINARY, c.app, args, case_dir);
    args.insert(args.end(), {"--checkpoint-dir", checkpoints.string(), "--checkpoint-every", "2"});
    auto published = RunDistributed(LOCKSTEP_BINARY, c.app, args, workers, case_dir);
    ASSERT_TRUE(published.has_value());
    ExpectSameLines(local, published->lines, c.app + " with checkpoints");
    const fs::path run_dir = case_dir / ("w" + std::to_string(workers) + "-direct");
    EXPECT_THAT(ReadFile(run_dir / "master.log"),
                HasSubstr("checkpoint before superstep 2 taken: "));
    EXPECT_TRUE(fs::is_empty(checkpoints)) << "a job's checkpoints outlived it";
    workers = 5 - workers;  // 2, 3, 2, ...
  }
}

// The partitioned binary form (`lockstep partition`): master and workers on the directory give
// the local answer on the text, each worker reading only the files of its range, whatever the
// number of files and of workers.
class PartitionedFormTest : public ::testing::TestWithParam<Case> {};

TEST_P(PartitionedFormTest, WorkersOnThePartitionedGraphGiveTheLocalAnswerOnTheText) {
  const Case& c = GetParam();
  const Graph& g = Graphs::Get()[c.graph];
  TempDir dir("lockstep-conformance-parts");
  std::vector<std::string> args = GraphArgs(g);
  const std::vector<std::string> options = AppOptions(c, g);
  args.insert(args.end(), options.begin(), options.end());
  const std::vector<std::string> local = RunLocal(LOCKSTEP_BINARY, c.app, args, dir);
  ASSERT_FALSE(HasFailure());
  for (const char* files : {"1", "5"}) {
    const fs::path parts = dir / (std::string("parts-") + files);
    std::vector<std::string> pargs = {"partition", "--out", parts.string(), "--parts", files};
    const std::vector<std::string> graph_args = GraphArgs(g);
    pargs.insert(pargs.end(), graph_args.begin(), graph_args.end());
    Process::Options o;
    o.log = dir / "partition.log";
    auto p = Process::Start(LOCKSTEP_BINARY, pargs, o);
    ASSERT_EQ(p->Wait(60s), 0) << ReadFile(o.log);
    std::vector<std::string> dargs = {"--graph", parts.string()};
    dargs.insert(dargs.end(), options.begin(), options.end());
    for (int workers : {1, 3}) {
      SCOPED_TRACE(::testing::Message() << files << " files, " << workers << " workers");
      TempDir run_dir("lockstep-conformance-parts-run");
      auto published = RunDistributed(LOCKSTEP_BINARY, c.app, dargs, workers, run_dir);
      ASSERT_TRUE(published.has_value());
      ExpectSameLines(local, published->lines,
                      c.app + " on " + c.graph + " partitioned in " + files + " at " +
                          std::to_string(workers) + " workers");
    }
  }
}

// `master --save-parts DIR`: the workers write the partitioned form from their partitioned load
// (no process reads the whole graph) and run the job on it; the directory then serves `run` and
// other clusters, all with the local answer on the text.
TEST_P(PartitionedFormTest, WorkersSaveThePartitionedGraphAndRunOnIt) {
  const Case& c = GetParam();
  const Graph& g = Graphs::Get()[c.graph];
  TempDir dir("lockstep-conformance-save-parts");
  std::vector<std::string> args = GraphArgs(g);
  const std::vector<std::string> options = AppOptions(c, g);
  args.insert(args.end(), options.begin(), options.end());
  const std::vector<std::string> local = RunLocal(LOCKSTEP_BINARY, c.app, args, dir);
  ASSERT_FALSE(HasFailure());
  const fs::path parts = dir / "saved";
  std::vector<std::string> save_args = args;
  save_args.insert(save_args.end(), {"--save-parts", parts.string()});
  {
    TempDir run_dir("lockstep-conformance-save-run");
    auto published = RunDistributed(LOCKSTEP_BINARY, c.app, save_args, 3, run_dir);
    ASSERT_TRUE(published.has_value());
    ExpectSameLines(local, published->lines, c.app + " on " + c.graph + " while saving");
  }
  ASSERT_TRUE(fs::exists(parts / "lockstep-parts.manifest"));
  std::vector<std::string> dargs = {"--graph", parts.string()};
  dargs.insert(dargs.end(), options.begin(), options.end());
  EXPECT_EQ(RunLocal(LOCKSTEP_BINARY, c.app, dargs, dir), local) << "run on the saved graph";
  TempDir run_dir("lockstep-conformance-saved-run");
  auto published = RunDistributed(LOCKSTEP_BINARY, c.app, dargs, 2, run_dir);
  ASSERT_TRUE(published.has_value());
  ExpectSameLines(local, published->lines, c.app + " on " + c.graph + " saved, at 2 workers");
}

// A directory of edge-list files (the input as splits: uneven, one file without a final newline,
// one empty) is one input to both writers of the partitioned form: `lockstep partition` and
// `master --save-parts`, whose workers' shares cross file boundaries.
TEST(PartitionedFormFromSplits, BothWritersReadADirectoryOfEdgeListsAsOneInput) {
  const Graph& g = Graphs::Get()["strings"];
  TempDir dir("lockstep-conformance-parts-splits");
  const std::vector<std::string> local = RunLocal(LOCKSTEP_BINARY, "wcc", GraphArgs(g), dir);
  ASSERT_FALSE(local.empty());
  const std::string text = ReadFile(g.path);
  const fs::path splits = dir / "splits";
  fs::create_directory(splits);
  const size_t a = text.find('\n', text.size() / 5) + 1, b = text.find('\n', text.size() / 2) + 1;
  WriteFile(splits / "part-0", text.substr(0, a));
  WriteFile(splits / "part-1", text.substr(a, b - a - 1));  // its last line has no newline
  WriteFile(splits / "part-2", "");
  WriteFile(splits / "part-3", text.substr(b));
  Graph split = g;
  split.path = splits.string();

  const fs::path parts = dir / "parts";
  std::vector<std::string> pargs = {"partition", "--out", parts.string(), "--parts", "4"};
  const std::vector<std::string> graph_args = GraphArgs(split);
  pargs.insert(pargs.end(), graph_args.begin(), graph_args.end());
  Process::Options o;
  o.log = dir / "partition.log";
  auto p = Process::Start(LOCKSTEP_BINARY, pargs, o);
  ASSERT_EQ(p->Wait(60s), 0) << ReadFile(o.log);
  EXPECT_EQ(RunLocal(LOCKSTEP_BINARY, "wcc", {"--graph", parts.string()}, dir), local)
      << "partition --graph DIR";

  const fs::path saved = dir / "saved";
  std::vector<std::string> save_args = graph_args;
  save_args.insert(save_args.end(), {"--save-parts", saved.string()});
  TempDir run_dir("lockstep-conformance-splits-save");
  auto published = RunDistributed(LOCKSTEP_BINARY, "wcc", save_args, 3, run_dir);
  ASSERT_TRUE(published.has_value());
  ExpectSameLines(local, published->lines, "wcc while saving from a directory of splits");
  EXPECT_EQ(RunLocal(LOCKSTEP_BINARY, "wcc", {"--graph", saved.string()}, dir), local)
      << "run on what master --save-parts wrote from a directory";
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Apps, PartitionedFormTest, ::testing::Values(
    Case{"pagerank", "kron10", {"--tolerance", "0", "--max-iterations", "30"}},
    Case{"sssp", "iso", {}},
    Case{"wcc", "strings", {}},
    Case{"cdlp", "uuids", {}}), CaseName);
// clang-format on

// The user-written example: its own binary is the master and the workers.
TEST(ConformanceExample, IndegreeRunsDistributedWithItsOwnBinary) {
  const Graph& g = Graphs::Get()["strings"];
  TempDir dir("lockstep-conformance-indegree");
  std::vector<std::string> args = GraphArgs(g);
  args.insert(args.end(), {"--min-weight", "1"});
  const std::vector<std::string> local = RunLocal(INDEGREE_BINARY, "indegree", args, dir);
  ASSERT_FALSE(local.empty());
  for (int workers : {1, 2, 4}) {
    SCOPED_TRACE(::testing::Message() << workers << " workers");
    auto published = RunDistributed(INDEGREE_BINARY, "indegree", args, workers, dir);
    ASSERT_TRUE(published.has_value());
    ExpectSameLines(local, published->lines, "indegree at " + std::to_string(workers) + " workers");
  }
}

// The user's app is only in the user's binary: a stock `lockstep worker` cannot run it and says
// so, and the master's job fails with that reason instead of hanging.
TEST(ConformanceExample, AStockWorkerRefusesAnUnknownApp) {
  const Graph& g = Graphs::Get()["tiny"];
  TempDir dir("lockstep-conformance-unknown-app");
  const fs::path out = dir / "out";
  Cluster cluster(INDEGREE_BINARY, dir.path());
  std::vector<std::string> margs = {"--app", "indegree", "--out", out.string()};
  const auto gargs = GraphArgs(g);
  margs.insert(margs.end(), gargs.begin(), gargs.end());
  Process& master = cluster.StartMaster(margs);
  ASSERT_NE(cluster.port(), 0);
  cluster.set_binary(LOCKSTEP_BINARY);
  Process& worker = cluster.StartWorker({"--max-jobs", "1"});
  ASSERT_TRUE(cluster.WaitAll(30s));
  EXPECT_NE(master.exit_code(), 0);
  EXPECT_THAT(master.Log(), HasSubstr("no app named 'indegree'"));
  EXPECT_THAT(worker.Log(), HasSubstr("no app named 'indegree'"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(out)));
}

// Paths on the master's command line are the master's: workers started elsewhere (another working
// directory, as on another machine with a shared file system) must still find them.
class RelativePathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "master");
    fs::create_directories(dir_ / "workers");
    WriteFile(dir_ / "master" / "tiny.el", kTinyGraph);
    WriteFile(dir_ / "master" / "pre.txt", "c 5\n");
  }
  // Runs `run` in the master's directory and a two-worker job with the workers elsewhere.
  void ExpectSameAsLocal(const std::vector<std::string>& app_args) {
    std::vector<std::string> args = {"--graph", "tiny.el"};
    args.insert(args.end(), app_args.begin() + 1, app_args.end());
    Process::Options o;
    o.cwd = dir_ / "master";
    o.log = dir_ / "local.log";
    std::vector<std::string> run = {"run", app_args[0], "--out", "local.txt"};
    run.insert(run.end(), args.begin(), args.end());
    ASSERT_EQ(Process::Start(LOCKSTEP_BINARY, run, o)->Wait(60s), 0) << ReadFile(o.log);
    const auto local = SortedLines(ReadFile(dir_ / "master" / "local.txt"));

    Cluster cluster(LOCKSTEP_BINARY, dir_ / "master");
    std::vector<std::string> margs = {"--app",   app_args[0],     "--out",
                                      "res/out", "--min-workers", "2"};
    margs.insert(margs.end(), args.begin(), args.end());
    Process& master = cluster.StartMaster(margs);
    ASSERT_NE(cluster.port(), 0);
    cluster.set_worker_cwd(dir_ / "workers");
    cluster.StartWorker({"--max-jobs", "1"});
    cluster.StartWorker({"--max-jobs", "1"});
    ASSERT_TRUE(cluster.WaitAll(60s));
    ASSERT_EQ(master.exit_code(), 0) << master.Log();
    auto published = ReadPublished(dir_ / "master" / "res" / "out", 2);
    ASSERT_TRUE(published.has_value());
    ExpectSameLines(local, published->lines, app_args[0] + " with relative paths");
  }
  TempDir dir_{"lockstep-conformance-paths"};
};

TEST_F(RelativePathsTest, TheGraphPathIsResolvedByTheMaster) { ExpectSameAsLocal({"pagerank"}); }

// File-valued app parameters (AppParam::is_path), such as coloring's --precolored, are made
// absolute by the master like --graph, so a worker in another directory opens the same file.
TEST_F(RelativePathsTest, AppParametersThatNameFilesAreResolvedByTheMaster) {
  ExpectSameAsLocal({"coloring", "--precolored", "pre.txt"});
}

TEST(ConformanceScale, SixteenWorkersComplete) {
  const Graph& g = Graphs::Get()["kron10"];
  TempDir dir("lockstep-conformance-16");
  std::vector<std::string> args = GraphArgs(g);
  args.insert(args.end(), {"--tolerance", "0", "--max-iterations", "30"});
  const std::vector<std::string> local = RunLocal(LOCKSTEP_BINARY, "pagerank", args, dir);
  ASSERT_FALSE(local.empty());
  auto published = RunDistributed(LOCKSTEP_BINARY, "pagerank", args, 16, dir, {"--threads", "1"});
  ASSERT_TRUE(published.has_value());
  EXPECT_EQ(published->parts, 16u);
  ExpectSameLines(local, published->lines, "pagerank on kron10 at 16 workers");
}

// --- No process reads or holds the whole graph (docs/design.md §4.4)

// What a worker logged when its partitioned load ended.
struct LoadFigures {
  uint64_t lines = 0, records = 0, vertices = 0, edges = 0, rounds = 0;
};

std::optional<LoadFigures> LoadFiguresOf(const std::string& log) {
  const std::string key = "loaded its share: ";
  const size_t at = log.find(key);
  if (at == std::string::npos) return std::nullopt;
  LoadFigures f;
  if (std::sscanf(log.c_str() + at + key.size(),
                  "lines %" SCNu64 " | records %" SCNu64 " | vertices known %" SCNu64
                  " | edges held %" SCNu64 " | rounds %" SCNu64,
                  &f.lines, &f.records, &f.vertices, &f.edges, &f.rounds) != 5) {
    return std::nullopt;
  }
  return f;
}

// The bytes process `pid` has read through read(2) and its kin: /proc/PID/io's rchar (-1 if
// unreadable). Sockets read with recvmsg(2), as gRPC reads them, do not count.
int64_t BytesRead(pid_t pid) {
  std::istringstream io(ReadFile("/proc/" + std::to_string(pid) + "/io"));
  for (std::string key; io >> key;) {
    int64_t value;
    if (!(io >> value)) break;
    if (key == "rchar:") return value;
  }
  return -1;
}

// On a master and 4 worker processes, over one file and over a directory of files holding the
// same lines: each worker parses under half of the input's lines and holds under 3/4 of its
// edges and fewer vertices than the graph has (the figures it logs when its load ends); together
// the shares cover every line once; the master reads less than the graph's size in all (it reads
// none of it); and the result is `run`'s on the file.
TEST(PartitionedLoad, NoProcessReadsOrHoldsTheWholeGraph) {
  TempDir dir("lockstep-partitioned-load");
  // Sparse, so that no worker meets every vertex: 6,000 vertices, 9,000 edges, text IDs.
  constexpr int kVertices = 6000;
  std::string text = "# every vertex has out-edges\n";
  std::vector<std::string> files(3);
  for (int i = 0; i < kVertices; ++i) {
    for (int k = 0; k < (i % 2 == 0 ? 2 : 1); ++k) {
      const std::string line = "vertex-" + std::to_string(i) + " vertex-" +
                               std::to_string((i * 7919 + 13 * k + 1) % kVertices) + "\n";
      text += line;
      files[static_cast<size_t>(i) * 3 / kVertices] += line;
    }
  }
  files[0] = "# every vertex has out-edges\n" + files[0];
  const uint64_t lines = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  const uint64_t edges = lines - 1;
  const std::string graph = dir.Write("g.el", text);
  fs::create_directories(dir / "g.d");
  for (size_t i = 0; i < files.size(); ++i) {
    WriteFile(dir / "g.d" / ("part-" + std::to_string(i)), files[i]);
  }
  const std::vector<std::string> local =
      RunLocal(LOCKSTEP_BINARY, "pagerank", {"--graph", graph}, dir);
  ASSERT_EQ(local.size(), static_cast<size_t>(kVertices));
  for (const std::string& input : {graph, (dir / "g.d").string()}) {
    SCOPED_TRACE(input);
    const fs::path run_dir = dir / (input == graph ? "file" : "directory");
    fs::create_directories(run_dir / "res");
    Cluster cluster(LOCKSTEP_BINARY, run_dir);
    // A service master (--every), so that it is still there to be asked what it read.
    Process& master = cluster.StartMaster({"--app", "pagerank", "--graph", input, "--out",
                                           (run_dir / "res" / "out").string(), "--min-workers", "4",
                                           "--max-workers", "4", "--every", "1h"});
    ASSERT_NE(cluster.port(), 0);
    // What the master read to start (its libraries, its configuration), before the job.
    const int64_t read_before = BytesRead(master.pid());
    ASSERT_GE(read_before, 0);
    for (int i = 0; i < 4; ++i) cluster.StartWorker({"--max-jobs", "1"});
    ASSERT_TRUE(master.WaitForLog(": completed: ", 60s)) << master.Log();
    const int64_t read_after = BytesRead(master.pid());
    uint64_t parts = 0;
    const fs::path job_dir = run_dir / "res" / fs::read_symlink(run_dir / "res" / "out");
    for (const auto& e : fs::directory_iterator(job_dir)) {
      if (e.path().filename().string().starts_with("part-")) parts += e.file_size();
    }
    ASSERT_GE(read_after, read_before);
    const uint64_t during = static_cast<uint64_t>(read_after - read_before);
    std::cout << "the master read " << during << " bytes during the job, " << parts
              << " of them the parts it checks; the graph has " << text.size() << "\n";
    EXPECT_GE(during, parts);
    // Besides the parts: a few hundred bytes of eventfd wake-ups and /proc or /sys files, at
    // times some tens of KiB (/proc/self/maps); reading the graph would add all of its bytes.
    EXPECT_LT(during, parts + text.size() / 2) << "the master read the graph";
    LoadFigures sum;
    for (Process* w : cluster.workers()) {
      ASSERT_TRUE(w->Wait(30s).has_value()) << w->command();
      auto f = LoadFiguresOf(w->Log());
      ASSERT_TRUE(f.has_value()) << w->Log();
      std::cout << w->log_path().filename() << ": lines " << f->lines << ", edges held " << f->edges
                << ", vertices known " << f->vertices << "\n";
      EXPECT_LT(f->lines, lines / 2);
      EXPECT_LT(f->edges, edges * 3 / 4);
      EXPECT_LT(f->vertices, static_cast<uint64_t>(kVertices));
      sum.lines += f->lines;
      sum.records += f->records;
    }
    EXPECT_EQ(sum.lines, lines);
    EXPECT_EQ(sum.records, edges);
    cluster.Stop();
    EXPECT_EQ(master.exit_code(), 0) << master.Log();
    auto published = ReadPublished(run_dir / "res" / "out", 4);
    ASSERT_TRUE(published.has_value());
    ExpectSameLines(local, published->lines, "pagerank at 4 workers from " + input);
  }
}

// Every job option a worker needs travels in the job details: --max-supersteps above the default
// 10,000 reaches the workers, which used to fail at superstep 10,000 asking for the flag already
// raised (issue 10, defect 1). A nearly empty superstep costs a few milliseconds.
TEST(ConformanceScale, ABfsOverAPathLongerThanTenThousandSuperstepsCompletes) {
  TempDir dir("lockstep-conformance-path");
  std::string path;
  for (int i = 0; i + 1 < 10050; ++i)
    path += std::to_string(i) + " " + std::to_string(i + 1) + "\n";
  const std::string graph = dir.Write("path.el", path);
  const std::vector<std::string> args = {"--graph",          graph,  "--source", "0",
                                         "--max-supersteps", "20000"};
  const std::vector<std::string> local = RunLocal(LOCKSTEP_BINARY, "bfs", args, dir);
  ASSERT_EQ(local.size(), 10050u);
  const auto start = std::chrono::steady_clock::now();
  auto published = RunDistributed(LOCKSTEP_BINARY, "bfs", args, 2, dir);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(published.has_value());
  EXPECT_EQ(published->supersteps, 10050u);
  ExpectSameLines(local, published->lines, "bfs over a path of 10,050 vertices at 2 workers");
  EXPECT_LT(seconds, 300.0);
  std::cout << "10,050 supersteps on 2 workers: " << seconds << " s\n";
}

// --- PageRank is bit-identical at any worker count (issue 10, defect 3)
//
// The dangling mass and the L1 change are sums over every vertex, which the workers split
// differently at each count; they are summed exactly (bsp/exact_sum.h), so the sorted part files
// hold the very lines of `lockstep run` at 1, 2, 3 and 4 workers, and a tolerance stops the job at
// the same superstep.

// A directed graph with integer IDs in no particular order, hubs, parallel edges, self-loops, and
// about a fifth of its vertices dangling (no out-edges; each has an in-edge).
std::string DanglingGraph(uint64_t seed, int vertices) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  auto name = [&](int i) {
    return std::to_string((static_cast<uint64_t>(i) * 7919 + seed) % 1000003);
  };
  const int with_out_edges = vertices - vertices / 5;
  std::ostringstream out;
  for (int i = 0; i < with_out_edges; ++i) {
    const int degree = 1 + static_cast<int>(next() % 6);
    for (int k = 0; k < degree; ++k) {
      int j = static_cast<int>(next() % static_cast<uint64_t>(vertices));
      if (next() % 4 == 0) j = static_cast<int>(next() % 16);  // hubs
      out << name(i) << ' ' << name(j) << '\n';
    }
  }
  for (int j = with_out_edges; j < vertices; ++j) {
    out << name(static_cast<int>(next() % static_cast<uint64_t>(with_out_edges))) << ' ' << name(j)
        << '\n';
  }
  return out.str();
}

// The supersteps of a local run, from its summary line ("pagerank: N vertices, S supersteps").
uint64_t LocalSupersteps(const TempDir& dir) {
  const std::string log = ReadFile(dir / "local.log");
  const size_t at = log.rfind(" supersteps,");  // the log may hold earlier runs too
  if (at == std::string::npos) return 0;
  const size_t begin = log.rfind(' ', at - 1) + 1;
  return std::stoull(log.substr(begin, at - begin));
}

std::string SeventeenDigits(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

struct PageRankCase {
  uint64_t seed;
  int vertices;
  bool tolerance;  // stop on a tolerance that the change sum crosses (else 0: a fixed count)
};

std::string PageRankCaseName(const ::testing::TestParamInfo<PageRankCase>& info) {
  return "seed" + std::to_string(info.param.seed) +
         (info.param.tolerance ? "_tolerance" : "_fixed");
}

class PageRankBitsTest : public ::testing::TestWithParam<PageRankCase> {};

TEST_P(PageRankBitsTest, OneToFourWorkersWriteTheLocalLinesByteForByte) {
  const PageRankCase& c = GetParam();
  TempDir dir("lockstep-conformance-pagerank-bits");
  const fs::path graph = dir / "graph.el";
  WriteFile(graph, DanglingGraph(c.seed, c.vertices));
  std::vector<std::string> args = {"--graph", graph.string()};
  if (c.tolerance) {
    // The tolerance is the change of iteration 6 itself, computed here from the ranks of
    // iterations 5 and 6: a change summed with any rounding in between lands on one side or the
    // other of it at random, so the job's length depends on the exact sum.
    constexpr int kIteration = 6;
    std::map<std::string, double> before, after;
    for (int it : {kIteration - 1, kIteration}) {
      std::vector<std::string> fixed = args;
      fixed.insert(fixed.end(), {"--tolerance", "0", "--max-iterations", std::to_string(it)});
      for (const auto& [id, value] : ById(RunLocal(LOCKSTEP_BINARY, "pagerank", fixed, dir))) {
        (it == kIteration ? after : before)[id] = std::strtod(value.c_str(), nullptr);
      }
    }
    ASSERT_EQ(before.size(), after.size());
    std::vector<long double> changes;
    for (const auto& [id, rank] : after) changes.push_back(std::abs(rank - before.at(id)));
    std::sort(changes.begin(), changes.end());  // smallest first: as exact as long double gets
    long double change = 0;
    for (long double x : changes) change += x;
    args.insert(args.end(), {"--tolerance", SeventeenDigits(static_cast<double>(change)),
                             "--max-iterations", "100"});
  } else {
    args.insert(args.end(), {"--tolerance", "0", "--max-iterations", "25"});
  }
  const std::vector<std::string> local = RunLocal(LOCKSTEP_BINARY, "pagerank", args, dir);
  ASSERT_EQ(local.size(), static_cast<size_t>(c.vertices));
  const uint64_t supersteps = LocalSupersteps(dir);
  if (c.tolerance) {
    EXPECT_TRUE(supersteps == 7 || supersteps == 8) << supersteps << " supersteps";
  }
  const std::pair<int, std::string> clusters[] = {
      {1, "direct"}, {2, "direct"}, {3, "direct"}, {4, "direct"}, {2, "master"}};
  for (const auto& [workers, relay] : clusters) {
    SCOPED_TRACE(::testing::Message() << workers << " workers, " << relay << " relay");
    auto published = RunDistributed(LOCKSTEP_BINARY, "pagerank", args, workers, dir, {}, relay);
    ASSERT_TRUE(published.has_value());
    EXPECT_EQ(published->supersteps, supersteps);
    ExpectSameLines(local, published->lines,
                    "pagerank (seed " + std::to_string(c.seed) + ") at " + std::to_string(workers) +
                        " workers");
  }
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(DanglingGraphs, PageRankBitsTest, ::testing::Values(
    PageRankCase{1, 3000, false},
    PageRankCase{2, 5000, false},
    PageRankCase{3, 4000, true},
    PageRankCase{4, 6000, true}), PageRankCaseName);
// clang-format on

}  // namespace
}  // namespace lockstep::testing
