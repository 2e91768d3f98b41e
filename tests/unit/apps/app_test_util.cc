#include "app_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "lockstep/bsp/executor.h"
#include "lockstep/load/graphalytics.h"
#include "lockstep/load/input_form.h"
#include "lockstep/load/source.h"
#include "tbb/global_control.h"

namespace lockstep::apps::testing {

namespace fs = std::filesystem;

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

RunResult RunApp(const catalogue::AppInfo& app, const bsp::GraphSource& graph,
                 const bsp::Params& overrides, size_t threads) {
  RunResult result;
  std::optional<tbb::global_control> limit;
  if (threads > 0) limit.emplace(tbb::global_control::max_allowed_parallelism, threads);

  test::TempDir dir;
  runner::JobDetails job;
  job.work.job_id = "test";
  job.work.app = app.name;
  job.work.graph = graph;
  job.work.output = dir.File("out.txt");
  for (const catalogue::AppParam& p : app.params) job.work.params[p.name] = p.default_value;
  if (load::IsGraphalytics(graph)) {
    auto props = load::ReadGraphalyticsProperties(graph.path);
    if (!props.ok()) {
      result.status = props.status();
      return result;
    }
    catalogue::ParamsFromGraphalytics(app, *props, job.work.params);
  }
  for (const auto& [name, value] : overrides) job.work.params[name] = value;

  std::ostringstream report;
  std::unique_ptr<runner::JobRunner> runner = app.make_runner(&report);
  auto executor = runner->StartJob(job, bsp::LocalExecutorFactory());
  if (!executor.ok()) {
    result.status = executor.status();
    return result;
  }
  result.status = (*executor)->RunToCompletion();
  result.supersteps = (*executor)->supersteps();
  if (result.status.ok()) result.status = runner->CompleteJob(job).status();
  if (!result.status.ok()) {
    runner->AbortJob(job);
    EXPECT_FALSE(fs::exists(job.work.output)) << "a failed job wrote " << job.work.output;
    return result;
  }
  result.report = report.str();
  result.output = ReadWholeFile(job.work.output);

  std::string_view rest = result.output;
  EXPECT_TRUE(rest.empty() || rest.back() == '\n') << "the output does not end with a newline";
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0 || sp + 1 == line.size() ||
        line.find_first_of(" \t\r", sp + 1) != std::string_view::npos) {
      ADD_FAILURE() << "malformed output line '" << line << "'";
      continue;
    }
    const bool fresh =
        result.values.emplace(std::string(line.substr(0, sp)), std::string(line.substr(sp + 1)))
            .second;
    EXPECT_TRUE(fresh) << "vertex " << line.substr(0, sp) << " written twice";
  }
  return result;
}

std::map<std::string, double> AsDoubles(const RunResult& result) {
  std::map<std::string, double> values;
  for (const auto& [id, text] : result.values) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    EXPECT_TRUE(end != nullptr && *end == '\0' && !text.empty()) << "not a number: " << text;
    values[id] = v;
  }
  return values;
}

std::vector<double> ByInputIndex(const RunResult& result, const bsp::GraphInput& input) {
  const std::map<std::string, double> values = AsDoubles(result);
  EXPECT_EQ(values.size(), input.num_vertices());
  std::vector<double> out(input.num_vertices(), std::nan(""));
  for (size_t v = 0; v < input.num_vertices(); ++v) {
    auto it = values.find(input.external_ids[v]);
    if (it == values.end()) {
      ADD_FAILURE() << "vertex " << input.external_ids[v] << " missing from the output";
      continue;
    }
    out[v] = it->second;
  }
  return out;
}

bsp::GraphInput LoadOrDie(const bsp::GraphSource& graph, bsp::WeightUse weights) {
  auto input = load::LoadGraph(graph, weights);
  EXPECT_TRUE(input.ok()) << input.status();
  return input.ok() ? *std::move(input) : bsp::GraphInput{};
}

namespace {

std::vector<std::string> MakeIds(IdKind kind, uint32_t n, std::mt19937_64& rng) {
  std::vector<std::string> ids;
  ids.reserve(n);
  switch (kind) {
    case IdKind::kInteger: {
      std::vector<uint64_t> pool(uint64_t{n} * 3);
      for (size_t i = 0; i < pool.size(); ++i) pool[i] = i;
      std::shuffle(pool.begin(), pool.end(), rng);
      for (uint32_t i = 0; i < n; ++i) ids.push_back(std::to_string(pool[i]));
      break;
    }
    case IdKind::kWide: {
      std::set<uint64_t> seen = {UINT64_MAX, uint64_t{1} << 63, uint64_t{1} << 32};
      while (seen.size() < n)
        seen.insert((uint64_t{1} << 32) + rng() % (UINT64_MAX - (1ull << 32)));
      for (uint64_t v : seen) ids.push_back(std::to_string(v));
      std::shuffle(ids.begin(), ids.end(), rng);
      ids.resize(n);
      break;
    }
    case IdKind::kText: {
      for (uint32_t i = 0; i < n; ++i) {
        switch (i % 5) {
          case 0:
            ids.push_back("v" + std::to_string(i));
            break;
          case 1: {  // canonical UUID text is used as the UUID itself
            char buf[40];
            const uint64_t a = rng(), b = rng();
            std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx",
                          static_cast<unsigned>(a >> 32), static_cast<unsigned>(a >> 16) & 0xffff,
                          static_cast<unsigned>(a) & 0xffff, static_cast<unsigned>(b >> 48),
                          static_cast<unsigned long long>(b & 0xffffffffffffULL));
            ids.push_back(buf);
            break;
          }
          case 2:  // not a canonical integer, so text
            ids.push_back("0" + std::to_string(i));
            break;
          case 3:  // a canonical integer among text IDs
            ids.push_back(std::to_string(uint64_t{i} * 7 + 3));
            break;
          default:
            ids.push_back("n\xc3\xb6" + std::to_string(i) + "-x");
            break;
        }
      }
      std::shuffle(ids.begin(), ids.end(), rng);
      break;
    }
  }
  return ids;
}

std::string Separator(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return "\t";
    case 1:
      return "  ";
    default:
      return " ";
  }
}

std::string Weight(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return "0";
    case 1:
      return "2.5e0";
    case 2:
    case 3:
      return std::to_string(rng() % 20 + 1);
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g",
                    std::uniform_real_distribution<double>(0.0, 10.0)(rng));
      return buf;
    }
  }
}

}  // namespace

RandomGraph MakeRandomGraph(const RandomGraphOptions& options) {
  std::mt19937_64 rng(options.seed);
  const std::vector<std::string> ids = MakeIds(options.ids, options.vertices, rng);
  std::vector<std::string> lines;
  auto edge = [&](uint32_t u, uint32_t v) {
    std::string line = ids[u] + Separator(rng) + ids[v];
    if (options.weights) line += Separator(rng) + Weight(rng);
    if (rng() % 50 == 0) line += "\r";
    lines.push_back(std::move(line));
  };
  std::vector<bool> used(options.vertices, false);
  // Components are contiguous index ranges of the shuffled IDs; the first vertex of each is never
  // a sink, the others are sinks (no out-edges: dangling) with probability 1/6.
  const uint32_t k = std::max<uint32_t>(1, std::min(options.components, options.vertices));
  for (uint32_t c = 0; c < k; ++c) {
    const uint32_t begin = static_cast<uint32_t>(uint64_t{options.vertices} * c / k);
    const uint32_t end = static_cast<uint32_t>(uint64_t{options.vertices} * (c + 1) / k);
    const uint32_t size = end - begin;
    std::vector<uint32_t> sources;
    for (uint32_t v = begin; v < end; ++v) {
      if (v == begin || rng() % 6 != 0) sources.push_back(v);
    }
    const auto pick = [&](uint32_t bound) { return static_cast<uint32_t>(rng() % bound); };
    const uint64_t m = static_cast<uint64_t>(options.average_degree * size);
    for (uint64_t e = 0; e < m; ++e) {
      const uint32_t u = sources[pick(static_cast<uint32_t>(sources.size()))];
      const uint32_t v = begin + pick(size);
      edge(u, v);
      used[u] = used[v] = true;
      if (rng() % 20 == 0) edge(u, v);  // a parallel edge, with its own weight
    }
    for (uint32_t u : sources) {
      if (rng() % 30 == 0) {
        edge(u, u);
        used[u] = true;
      }
    }
    for (uint32_t v = begin; v < end; ++v) {  // every vertex appears in some edge
      if (used[v]) continue;
      edge(sources[pick(static_cast<uint32_t>(sources.size()))], v);
      used[v] = true;
    }
  }
  RandomGraph graph;
  graph.edges = lines.size();
  graph.ids = ids;
  std::shuffle(lines.begin(), lines.end(), rng);
  graph.text = "# a random graph\n% with comments\n\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    graph.text += lines[i];
    graph.text += '\n';
    if (i % 97 == 0) graph.text += "\n# more\n";
  }
  return graph;
}

}  // namespace lockstep::apps::testing
