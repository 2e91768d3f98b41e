// The benchmark harness, GAP style (Beamer et al., "The GAP Benchmark Suite", 2015): every kernel
// is timed the same way — a warm-up, several trials, min and median — on a graph loaded once, and
// the reference kernel runs in the same process on the same graph so that the ratio printed last
// compares like with like on a noisy machine.
//
//   lockstep_bench --graph g.el [--undirected] [--trials 3] [--threads 1,2] [--parts 4]
//                  [--kernels load,pagerank,reference,sssp,coloring,bfs,wcc,cdlp,lcc,relay]
//
// Figures: load rate (text edge list, edges/s), per-kernel processing time and EVPS
// ((V + E) / processing time, as LDBC Graphalytics reports), PageRank per iteration
// (--tolerance 0, 20 iterations) against a hand-written pull-based CSR PageRank (the Jacobi loop
// of GAP's pr_spmv: 32-bit sources, doubles). "relay" runs PageRank and SSSP over --parts engines
// in one process, as the workers of a distributed job, once relaying by UUID (engines that did not
// set up) and once by position (connected through an in-process Exchange), and prints the bytes
// per relayed message and the time spent decoding the batches.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "lockstep/apps/bfs/bfs.h"
#include "lockstep/apps/cdlp/cdlp.h"
#include "lockstep/apps/coloring/coloring.h"
#include "lockstep/apps/lcc/lcc.h"
#include "lockstep/apps/pagerank/pagerank.h"
#include "lockstep/apps/sssp/sssp.h"
#include "lockstep/apps/wcc/wcc.h"
#include "lockstep/bsp/app.h"
#include "lockstep/load/source.h"
#include "tbb/global_control.h"
#include "tbb/parallel_for.h"
#include "util/engine_cluster.h"

namespace lockstep::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Timing {
  std::vector<double> trials;
  double min() const { return *std::min_element(trials.begin(), trials.end()); }
  double median() const {
    std::vector<double> t = trials;
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

constexpr uint64_t kPageRankIterations = 20;

// Runs one app on a loaded graph: engine build excluded, supersteps included.
template <class App>
absl::StatusOr<double> RunKernel(const bsp::GraphInput& input, const bsp::Params& params,
                                 uint64_t* supersteps) {
  auto program = App::Make(params, bsp::FactsOf<App>(params, input));
  if (!program.ok()) return program.status();
  auto split = partition::Range::Whole(1);
  auto graph = bsp::Graph<typename App::Program::EdgeValue>::Build(
      input, *split, 0, bsp::NeedsInEdges<typename App::Program>(input.symmetric));
  if (!graph.ok()) return graph.status();
  bsp::Engine<typename App::Program> engine(std::move(*program), std::move(*graph));
  bsp::Executor executor(engine, engine.ProgramCallbacks());
  const auto start = Clock::now();
  if (auto st = executor.RunToCompletion(); !st.ok()) return st;
  const double s = Seconds(start);
  if (supersteps) *supersteps = executor.supersteps();
  return s;
}

// The reference: pull-based PageRank over an in-edge CSR with 32-bit sources, the loop GAP's
// pr_spmv times, with the dangling mass spread as lockstep's PageRank does.
struct Reference {
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> sources;
  std::vector<uint32_t> outdeg;

  explicit Reference(const bsp::GraphInput& g) {
    const size_t n = g.num_vertices();
    offsets.assign(n + 1, 0);
    outdeg.assign(n, 0);
    bsp::ForEachEdge(g, [&](uint32_t s, uint32_t d, size_t) {
      ++offsets[d + 1];
      ++outdeg[s];
    });
    for (size_t v = 0; v < n; ++v) offsets[v + 1] += offsets[v];
    sources.resize(g.num_edges());
    std::vector<uint64_t> cursor(offsets.begin(), offsets.end() - 1);
    bsp::ForEachEdge(g, [&](uint32_t s, uint32_t d, size_t) { sources[cursor[d]++] = s; });
  }

  // Returns the seconds of `iterations` iterations (setup excluded).
  double Run(uint64_t iterations, double damping, std::vector<double>& rank) const {
    const size_t n = outdeg.size();
    rank.assign(n, 1.0 / static_cast<double>(n));
    std::vector<double> contrib(n);
    const auto start = Clock::now();
    for (uint64_t it = 0; it < iterations; ++it) {
      double dangling = 0;
      for (size_t v = 0; v < n; ++v) {
        if (outdeg[v] == 0) dangling += rank[v];
      }
      tbb::parallel_for(size_t{0}, n,
                        [&](size_t v) { contrib[v] = outdeg[v] ? rank[v] / outdeg[v] : 0.0; });
      const double base =
          (1.0 - damping) / static_cast<double>(n) + damping * dangling / static_cast<double>(n);
      tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const auto& r) {
        for (size_t v = r.begin(); v < r.end(); ++v) {
          double sum = 0;
          for (uint64_t i = offsets[v]; i < offsets[v + 1]; ++i) sum += contrib[sources[i]];
          rank[v] = base + damping * sum;
        }
      });
    }
    return Seconds(start);
  }
};

struct RelayFigures {
  uint64_t messages = 0;
  uint64_t bytes = 0;
  double decode_seconds = 0;  // summed over the engines and supersteps
  double seconds = 0;         // the whole run, all engines stepped by one thread
};

// Runs one app over `parts` engines in this process, relaying by position if `connect`.
template <class App>
absl::StatusOr<RelayFigures> RunRelay(const bsp::GraphInput& input, const bsp::Params& params,
                                      uint32_t parts, bool connect) {
  auto program = App::Make(params, bsp::FactsOf<App>(params, input));
  if (!program.ok()) return program.status();
  test::EngineCluster<typename App::Program> cluster(*program, input, parts, false);
  if (connect) {
    if (auto st = cluster.Connect(); !st.ok()) return st;
  }
  const auto start = Clock::now();
  if (auto st = cluster.RunToCompletion(100000); !st.ok()) return st;
  return RelayFigures{cluster.relayed_messages(), cluster.relayed_bytes(), cluster.decode_seconds(),
                      Seconds(start)};
}

std::vector<int> ParseList(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!item.empty()) out.push_back(std::stoi(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

struct Options {
  std::string path;
  bool undirected = false;
  int trials = 3;
  uint32_t parts = 4;
  std::vector<int> threads;
  std::vector<std::string> kernels;
  bool wants(const std::string& k) const {
    return std::find(kernels.begin(), kernels.end(), k) != kernels.end();
  }
};

[[noreturn]] void Fail(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "%s%s\n", what.empty() ? "" : (what + ": ").c_str(),
               std::string(status.message()).c_str());
  std::exit(1);
}

// Loads the graph `trials` times (once unless the load is timed).
bsp::GraphInput Load(const Options& o, Timing& load) {
  const bsp::GraphSource source{o.path, "edgelist", o.undirected};
  absl::StatusOr<bsp::GraphInput> input;
  for (int t = 0; t < (o.wants("load") ? o.trials : 1); ++t) {
    const auto start = Clock::now();
    input = load::LoadGraph(source, bsp::WeightUse::kNonNegative);
    load.trials.push_back(Seconds(start));
    if (!input.ok()) Fail("", input.status());
  }
  return *std::move(input);
}

// Prints the load's figures and times the CSR build.
void PrintLoadAndBuild(const Options& o, const bsp::GraphInput& input, const Timing& load) {
  const double e = static_cast<double>(input.num_edges());
  std::printf("  %-10s min %8.3f s  median %8.3f s  %7.2f M edges/s (text, parsed+mapped)\n",
              "load", load.min(), load.median(), e / load.min() / 1e6);
  // The CSR a job builds next (out- and in-edges, as PageRank's): an undirected input's
  // reverse edges are laid out here, no longer in the load.
  Timing build;
  auto split = partition::Range::Whole(1);
  for (int t = 0; t < o.trials; ++t) {
    const auto start = Clock::now();
    auto graph = bsp::Graph<bsp::NoValue>::Build(input, *split, 0, true);
    build.trials.push_back(Seconds(start));
    if (!graph.ok()) Fail("", graph.status());
  }
  std::printf("  %-10s min %8.3f s  median %8.3f s  %7.2f M edges/s (out- and in-CSR)\n", "build",
              build.min(), build.median(), e / build.min() / 1e6);
  std::printf("  %-10s min %8.3f s  %7.2f M edges/s (sum of the minima)\n", "load+build",
              load.min() + build.min(), e / (load.min() + build.min()) / 1e6);
}

// A source with edges: the vertex of largest out-degree (deterministic).
std::string BusiestVertex(const bsp::GraphInput& input) {
  std::vector<uint32_t> degree(input.num_vertices(), 0);
  bsp::ForEachEdge(input, [&](uint32_t s, uint32_t, size_t) { ++degree[s]; });
  return input.external_ids[std::max_element(degree.begin(), degree.end()) - degree.begin()];
}

// Times `run` over a warm-up and the trials and prints its figures; returns the best time per
// `per` (0 if the kernel is not wanted).
template <class Run>
double TimeKernel(const Options& o, const bsp::GraphInput& input, const std::string& name, Run run,
                  double per = 1.0) {
  if (!o.wants(name)) return 0.0;
  Timing timing;
  uint64_t supersteps = 0;
  for (int t = 0; t <= o.trials; ++t) {  // trial 0 is the warm-up
    auto s = run(&supersteps);
    if (!s.ok()) Fail(name, s.status());
    if (t > 0) timing.trials.push_back(*s);
  }
  const double ve = static_cast<double>(input.num_vertices() + input.num_edges());
  std::printf("  %-10s min %8.3f s  median %8.3f s  %3llu supersteps  EVPS %7.2f M", name.c_str(),
              timing.min(), timing.median(), static_cast<unsigned long long>(supersteps),
              ve / timing.min() / 1e6);
  if (per != 1.0) std::printf("  per iteration %.4f s", timing.min() / per);
  std::printf("\n");
  return timing.min() / per;
}

// Bytes per relayed message by UUID and by position, and the receivers' decode time; the
// minimum over the trials of each.
template <class Run>
void TimeRelay(const Options& o, const std::string& name, Run run) {
  RelayFigures by[2];
  for (int connect = 0; connect < 2; ++connect) {
    for (int t = 0; t < o.trials; ++t) {
      absl::StatusOr<RelayFigures> f = run(connect == 1);
      if (!f.ok()) Fail("relay " + name, f.status());
      if (t == 0 || f->decode_seconds < by[connect].decode_seconds) by[connect] = *f;
    }
  }
  auto per = [](const RelayFigures& f) {
    return static_cast<double>(f.bytes) / static_cast<double>(std::max<uint64_t>(1, f.messages));
  };
  std::printf(
      "  %-10s %-8s %u parts  %llu messages  bytes/message: by UUID %.2f, by position %.2f"
      "  decode: %.4f s, %.4f s (ratio %.2f)  run: %.3f s, %.3f s\n",
      "relay", name.c_str(), o.parts, static_cast<unsigned long long>(by[1].messages), per(by[0]),
      per(by[1]), by[0].decode_seconds, by[1].decode_seconds,
      by[1].decode_seconds / std::max(1e-9, by[0].decode_seconds), by[0].seconds, by[1].seconds);
}

// PageRank's engine and reference times per iteration at one thread count (0 where not wanted).
struct PageRankTimes {
  double engine = 0, reference = 0;
};

PageRankTimes RunAll(const Options& o, const bsp::GraphInput& input) {
  const std::string source_id = BusiestVertex(input);
  PageRankTimes pr_times;
  const bsp::Params pr = {{"damping", "0.85"},
                          {"tolerance", "0"},
                          {"max-iterations", std::to_string(kPageRankIterations)}};
  pr_times.engine = TimeKernel(
      o, input, "pagerank",
      [&](uint64_t* s) { return RunKernel<apps::pagerank::App>(input, pr, s); },
      kPageRankIterations);
  if (o.wants("reference")) {
    Reference ref(input);
    std::vector<double> rank;
    pr_times.reference = TimeKernel(
        o, input, "reference",
        [&](uint64_t* s) -> absl::StatusOr<double> {
          *s = kPageRankIterations;
          return ref.Run(kPageRankIterations, 0.85, rank);
        },
        kPageRankIterations);
  }
  const bsp::Params from_source = {{"source", source_id}};
  TimeKernel(o, input, "sssp",
             [&](uint64_t* s) { return RunKernel<apps::sssp::App>(input, from_source, s); });
  TimeKernel(o, input, "bfs",
             [&](uint64_t* s) { return RunKernel<apps::bfs::App>(input, from_source, s); });
  TimeKernel(o, input, "coloring", [&](uint64_t* s) {
    return RunKernel<apps::coloring::App>(input, {{"seed", "42"}}, s);
  });
  TimeKernel(o, input, "wcc", [&](uint64_t* s) { return RunKernel<apps::wcc::App>(input, {}, s); });
  TimeKernel(o, input, "cdlp", [&](uint64_t* s) {
    return RunKernel<apps::cdlp::App>(input, {{"max-iterations", "10"}}, s);
  });
  TimeKernel(o, input, "lcc", [&](uint64_t* s) { return RunKernel<apps::lcc::App>(input, {}, s); });
  if (o.wants("relay")) {
    TimeRelay(o, "pagerank", [&](bool connect) {
      return RunRelay<apps::pagerank::App>(input, pr, o.parts, connect);
    });
    TimeRelay(o, "sssp", [&](bool connect) {
      return RunRelay<apps::sssp::App>(input, from_source, o.parts, connect);
    });
  }
  return pr_times;
}

int Main(int argc, char** argv) {
  CLI::App cli{"lockstep benchmark harness"};
  Options o;
  std::string threads_text = "1,2", kernels_text = "load,pagerank,reference,sssp,coloring";
  cli.add_option("--graph", o.path, "edge list")->required();
  cli.add_flag("--undirected", o.undirected, "add reverse edges");
  cli.add_option("--trials", o.trials, "trials per figure")->capture_default_str();
  cli.add_option("--threads", threads_text, "thread counts")->capture_default_str();
  cli.add_option("--kernels", kernels_text, "kernels to time")->capture_default_str();
  cli.add_option("--parts", o.parts, "engines of the relay figures")->capture_default_str();
  CLI11_PARSE(cli, argc, argv);
  o.threads = ParseList(threads_text);
  for (size_t s = 0; s <= kernels_text.size();) {
    size_t c = kernels_text.find(',', s);
    if (c == std::string::npos) c = kernels_text.size();
    o.kernels.push_back(kernels_text.substr(s, c - s));
    s = c + 1;
  }
  std::map<int, PageRankTimes> pr;
  for (int threads : o.threads) {
    tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                    static_cast<size_t>(threads));
    Timing load;
    const bsp::GraphInput input = Load(o, load);
    std::printf("graph %s: %.0f vertices, %.0f directed edges; threads %d\n", o.path.c_str(),
                static_cast<double>(input.num_vertices()), static_cast<double>(input.num_edges()),
                threads);
    if (o.wants("load")) PrintLoadAndBuild(o, input, load);
    pr[threads] = RunAll(o, input);
  }
  for (const auto& [threads, t] : pr) {
    if (t.reference > 0) {
      std::printf("ratio pagerank/reference per iteration at %d thread%s: %.2f\n", threads,
                  threads == 1 ? "" : "s", t.engine / t.reference);
    }
  }
  return 0;
}

}  // namespace
}  // namespace lockstep::bench

int main(int argc, char** argv) { return lockstep::bench::Main(argc, argv); }
