#include "cli/cli.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "CLI/CLI.hpp"
#include "cli/generate.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "tbb/global_control.h"

namespace lockstep::cli {
namespace {

std::string Message(const absl::Status& status) { return std::string(status.message()); }

struct RunFlags {
  std::string graph;
  std::string format;
  bool undirected = false;
  int threads = 0;
  std::string out;
  uint64_t max_supersteps = 10000;
  size_t top = 0;
  std::map<std::string, std::string> params;  // app flags as given
};

// Prints the `top` vertices with the largest values of a result file, ties by ID order.
absl::Status PrintTop(const std::string& path, size_t top) {
  auto text = bsp::ReadFile(path);
  if (!text.ok()) return text.status();
  std::vector<std::pair<double, std::string>> rows;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    const size_t sp = line.rfind(' ');
    if (sp == std::string_view::npos) continue;
    rows.emplace_back(std::strtod(std::string(line.substr(sp + 1)).c_str(), nullptr),
                      std::string(line.substr(0, sp)));
  }
  const size_t k = std::min(top, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(k), rows.end(),
                    [](const auto& a, const auto& b) {
                      if (a.first != b.first) return a.first > b.first;
                      return bsp::ExternalIdLess(a.second, b.second);
                    });
  for (size_t i = 0; i < k; ++i) {
    std::string line = rows[i].second + " ";
    bsp::AppendDouble(rows[i].first, line);
    std::cout << line << "\n";
  }
  return absl::OkStatus();
}

int RunApp(const bsp::AppInfo& app, const RunFlags& flags) {
  std::optional<tbb::global_control> threads;
  if (flags.threads > 0) {
    threads.emplace(tbb::global_control::max_allowed_parallelism,
                    static_cast<size_t>(flags.threads));
  }
  bsp::JobDetails job;
  job.job_id = "local";
  job.app = app.name;
  job.graph = {flags.graph, flags.format, flags.undirected};
  job.output = flags.out;
  for (const bsp::AppParam& p : app.params) job.params[p.name] = p.default_value;
  if (bsp::IsGraphalytics(job.graph)) {
    auto props = bsp::ReadGraphalyticsProperties(flags.graph);
    if (!props.ok()) {
      spdlog::error("{}", Message(props.status()));
      return 1;
    }
    if (app.from_graphalytics) app.from_graphalytics(*props, job.params);
  }
  for (const auto& [name, value] : flags.params) job.params[name] = value;

  const auto start = std::chrono::steady_clock::now();
  auto seconds_since = [](auto t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  bsp::ExecutorOptions options;
  options.max_supersteps = flags.max_supersteps;
  options.progress = [](const bsp::StepStats& s) {
    spdlog::info("superstep {} | active {} | messages {} | {:.1f} ms", s.superstep, s.active,
                 s.messages, s.seconds * 1e3);
  };
  std::unique_ptr<bsp::JobRunner> runner = app.make_runner(&std::cout);
  auto executor = runner->StartJob(job, bsp::LocalExecutorFactory(options));
  if (!executor.ok()) {
    spdlog::error("{}", Message(executor.status()));
    return 1;
  }
  const double load_s = seconds_since(start);
  const auto compute_start = std::chrono::steady_clock::now();
  if (auto st = (*executor)->RunToCompletion(); !st.ok()) {
    runner->AbortJob(job);
    spdlog::error("{}", Message(st));
    return 1;
  }
  const double compute_s = seconds_since(compute_start);
  if (auto st = runner->CompleteJob(job); !st.ok()) {
    runner->AbortJob(job);
    spdlog::error("{}", Message(st));
    return 1;
  }
  spdlog::info("{}: {} vertices, {} supersteps, load {:.3f} s, compute {:.3f} s, total {:.3f} s; "
               "wrote {}",
               app.name, (*executor)->engine().num_local_vertices(), (*executor)->supersteps(),
               load_s, compute_s, seconds_since(start), flags.out);
  if (flags.top > 0) {
    if (auto st = PrintTop(flags.out, flags.top); !st.ok()) {
      spdlog::error("{}", Message(st));
      return 1;
    }
  }
  return 0;
}

}  // namespace

int Main(int argc, char** argv, const bsp::AppRegistry& apps) {
  auto logger = spdlog::stderr_color_mt("lockstep");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");

  CLI::App cli{"lockstep: a Pregel-style bulk synchronous parallel graph engine"};
  cli.require_subcommand(1);
  cli.set_help_all_flag("--help-all", "Print help for every command and app");

  // run <app> ...
  CLI::App* run = cli.add_subcommand("run", "run an app on one machine, on all cores");
  run->require_subcommand(1);
  RunFlags flags;
  const bsp::AppInfo* chosen = nullptr;
  std::vector<std::pair<const bsp::AppInfo*, std::vector<std::pair<std::string, CLI::Option*>>>>
      app_options;
  std::map<std::string, std::string> storage;
  std::vector<std::unique_ptr<std::string>> values;
  for (const bsp::AppInfo& app : apps.apps()) {
    CLI::App* sub = run->add_subcommand(app.name, app.summary);
    for (const auto& alias : app.aliases) sub->alias(alias);
    sub->add_option("--graph", flags.graph,
                    "input graph: an edge list 'src dst [weight]' or a Graphalytics .properties")
        ->required()
        ->check(CLI::ExistingFile);
    sub->add_option("--format", flags.format, "edgelist or graphalytics (default: by suffix)")
        ->check(CLI::IsMember({"edgelist", "graphalytics"}));
    sub->add_flag("--undirected", flags.undirected, "add the reverse of every edge");
    sub->add_option("--threads", flags.threads, "threads for loading and compute (default: all)")
        ->check(CLI::PositiveNumber);
    sub->add_option("--out", flags.out, "the result file: one 'id value' line per vertex")
        ->required();
    sub->add_option("--max-supersteps", flags.max_supersteps,
                    "fail if the job needs more supersteps than this")
        ->capture_default_str();
    sub->add_option("--top", flags.top, "print the N vertices with the largest values on stdout");
    std::vector<std::pair<std::string, CLI::Option*>> opts;
    for (const bsp::AppParam& p : app.params) {
      values.push_back(std::make_unique<std::string>(p.default_value));
      CLI::Option* o = sub->add_option("--" + p.name, *values.back(), p.help);
      if (!p.default_value.empty()) o->default_str(p.default_value);
      opts.emplace_back(p.name, o);
    }
    app_options.emplace_back(&app, std::move(opts));
    sub->callback([&, sub_app = &app, sub] {
      chosen = sub_app;
      for (auto& [info, opts2] : app_options) {
        if (info != sub_app) continue;
        for (auto& [name, opt] : opts2) {
          if (opt->count() > 0) flags.params[name] = opt->as<std::string>();
        }
      }
      (void)sub;
    });
  }

  // generate kronecker|uniform ...
  CLI::App* generate =
      cli.add_subcommand("generate", "write a synthetic graph (GAP benchmark suite generators)");
  GenerateOptions gen;
  generate->add_option("kind", gen.kind, "kronecker or uniform")
      ->required()
      ->check(CLI::IsMember({"kronecker", "uniform"}));
  generate->add_option("--scale", gen.scale, "2^scale vertices")->required();
  generate->add_option("--degree", gen.degree, "edges per vertex on average")
      ->capture_default_str();
  generate->add_option("--seed", gen.seed, "random seed")->capture_default_str();
  generate->add_flag("--weights", gen.weights, "add integer weights in [1, 255]");
  generate->add_option("--out", gen.out, "output edge list")->required();

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e);
  }

  if (run->parsed() && chosen != nullptr) return RunApp(*chosen, flags);
  if (generate->parsed()) {
    if (auto st = Generate(gen); !st.ok()) {
      spdlog::error("{}", Message(st));
      return 1;
    }
    return 0;
  }
  return 2;
}

}  // namespace lockstep::cli
