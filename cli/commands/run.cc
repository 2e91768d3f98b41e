// `lockstep run <app> --graph G --out O`: one app on one machine, on all cores (or --threads).
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "command.h"
#include "database.h"
#include "exit_codes.h"
#include "flags.h"
#include "job_flags.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/text.h"
#include "lockstep/cli/job_params.h"
#include "lockstep/cli/top.h"
#include "spdlog/spdlog.h"
#include "timing.h"

namespace lockstep::cli {
namespace {

// A directory of its own under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Make(const std::string& prefix) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        absl::StrCat(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp", "/", prefix, ".XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("cannot make a directory ", pattern, ": ", std::strerror(errno)));
    }
    TempDir d;
    d.path_ = std::move(pattern);
    return d;
  }
  TempDir() = default;
  TempDir(TempDir&& o) noexcept : path_(std::exchange(o.path_, std::string())) {}
  TempDir& operator=(TempDir&& o) noexcept {
    std::swap(path_, o.path_);
    return *this;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// How a local run reports its supersteps and traced vertices: to the log.
bsp::ExecutorOptions LocalExecutorOptions(uint64_t max_supersteps) {
  bsp::ExecutorOptions options;
  options.max_supersteps = max_supersteps;
  options.progress = [](const bsp::StepStats& s) {
    spdlog::info("superstep {} | active {} | messages {} | {:.1f} ms", s.superstep, s.active,
                 s.messages, s.seconds * 1e3);
  };
  // A line holds the graph's IDs and values (a database's may hold anything).
  options.trace = [](const std::string& line) {
    spdlog::info("trace {}", bsp::SanitizeForLog(line, 1024));
  };
  return options;
}

class RunCommand final : public Command {
 public:
  RunCommand(CLI::App& cli, const CommandContext& context)
      : Command(cli.add_subcommand("run", "run an app on one machine, on all cores")),
        apps_(context.apps) {
    app()->require_subcommand(1);
    for (const catalogue::AppInfo& info : apps_.apps()) AddApp(info, context.threads);
  }

  // CLI11 reports an unknown app only as "A subcommand is required"; name it instead.
  std::optional<int> CheckArguments(std::span<char* const> args) const override {
    if (args.size() > 2 && std::string_view(args[1]) == "run" && args[2][0] != '-' &&
        apps_.Find(args[2]) == nullptr) {
      std::string known;
      for (const catalogue::AppInfo& info : apps_.apps())
        known += (known.empty() ? "" : ", ") + info.name;
      spdlog::error("run: unknown app '{}' (apps: {})", args[2], known);
      return kExitUsage;
    }
    return std::nullopt;
  }

  int Run() override { return chosen_ == nullptr ? kExitUsage : RunLocal(*chosen_); }

 private:
  // `run <app>`: a subcommand per app, all with the same job flags and each with its own options.
  void AddApp(const catalogue::AppInfo& info, int& threads) {
    CLI::App* sub = app()->add_subcommand(info.name, info.summary);
    for (const auto& alias : info.aliases) sub->alias(alias);
    AddGraphOptions(sub, flags_);
    AddThreadsOption(sub, threads);
    sub->add_option("--out", flags_.out,
                    "the result file: one 'id value' line per vertex; or a PostgreSQL URI "
                    "postgresql://..., whose table (--out-table) then holds exactly the results, "
                    "replaced in one transaction")
        ->required();
    sub->add_option("--out-table", flags_.out_table,
                    "PostgreSQL --out: the result table (default: the app's name), created with "
                    "columns id and value when missing");
    sub->add_option("--top", top_,
                    "print the N vertices with the largest values on stdout (with a source: the "
                    "largest of the vertices it reaches, never an unreachable one)")
        ->check(kCount);
    per_app_.push_back(std::make_unique<AppOptions>());
    AppOptions* options = per_app_.back().get();
    for (const catalogue::AppParam& p : info.params) options->Add(sub, p);
    sub->callback([this, chosen = &info, options] {
      chosen_ = chosen;
      flags_.params = options->Given();
    });
  }

  // --top reads the result back from --out: a device or FIFO would give nothing back, or block.
  std::optional<int> CheckTopTarget() const {
    struct stat info;
    if (top_ > 0 && ::stat(flags_.out.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
      return UsageError(absl::InvalidArgumentError(absl::StrCat(
          "--top reads the result back from --out, which is not a regular file: ", flags_.out)));
    }
    return std::nullopt;
  }

  int RunLocal(const catalogue::AppInfo& info) const;

  const catalogue::AppRegistry& apps_;
  JobFlags flags_;
  size_t top_ = 0;
  const catalogue::AppInfo* chosen_ = nullptr;
  std::vector<std::unique_ptr<AppOptions>> per_app_;
};

int RunCommand::RunLocal(const catalogue::AppInfo& info) const {
  if (auto code = CheckTopTarget()) return *code;
  auto made = MakeJob(info, flags_);
  if (const JobError* e = std::get_if<JobError>(&made)) return Fail(e->status, e->exit_code);
  runner::JobDetails* job = &std::get<MadeJob>(made).details;
  const auto& from_file = std::get<MadeJob>(made).from_file;
  // A PostgreSQL --out: the results go to a file of their own, then into the table in one
  // transaction (docs/design.md §10).
  std::optional<TempDir> staged;
  if (db::IsPostgresUri(flags_.out)) {
    auto dir = TempDir::Make("lockstep-results");
    if (!dir.ok()) return Fail(dir.status());
    staged = std::move(*dir);
    job->work.output = staged->path() + "/results";
  }
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<runner::JobRunner> runner = info.make_runner(&std::cout);
  auto executor = runner->StartJob(
      *job, bsp::LocalExecutorFactory(LocalExecutorOptions(flags_.max_supersteps)));
  if (!executor.ok()) return Fail(NameParam(info, from_file, executor.status()).status);
  const double load_s = SecondsSince(start);
  const auto compute_start = std::chrono::steady_clock::now();
  if (auto st = (*executor)->RunToCompletion(); !st.ok()) {
    runner->AbortJob(*job);
    return Fail(AsFlagError(info, st));
  }
  const double compute_s = SecondsSince(compute_start);
  if (auto written = runner->CompleteJob(*job); !written.ok()) {
    runner->AbortJob(*job);
    return Fail(written.status());
  }
  std::string wrote = flags_.out;
  if (staged) {
    db::JobRecord record;
    record.app = info.name;
    record.graph = flags_.graph;
    record.params = job->work.params;
    record.vertices = (*executor)->engine().num_local_vertices();
    record.supersteps = (*executor)->supersteps();
    record.load_seconds = load_s;
    record.compute_seconds = compute_s;
    auto published = PublishRunResults(info, flags_, job->work.output, std::move(record));
    if (!published.ok()) return Fail(published.status());
    wrote = *std::move(published);
  }
  spdlog::info(
      "{}: {} vertices, {} supersteps, load {:.3f} s, compute {:.3f} s, total {:.3f} s; "
      "wrote {}",
      info.name, (*executor)->engine().num_local_vertices(), (*executor)->supersteps(), load_s,
      compute_s, SecondsSince(start), wrote);
  if (top_ > 0) {
    if (auto st = PrintTop(job->work.output, top_, info.unreachable, std::cout); !st.ok()) {
      return Fail(st);
    }
  }
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> MakeRunCommand(CLI::App& cli, const CommandContext& context) {
  return std::make_unique<RunCommand>(cli, context);
}

}  // namespace lockstep::cli
