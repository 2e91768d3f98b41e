#include "lockstep/cli/cli.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <thread>
#include <variant>

#include "CLI/CLI.hpp"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "lockstep/bsp/part_files.h"
#include "lockstep/bsp/text.h"
#include "lockstep/cli/duration.h"
#include "lockstep/cli/job_params.h"
#include "lockstep/cli/top.h"
#include "lockstep/db/postgres.h"
#include "lockstep/db/stage.h"
#include "lockstep/dbsp/grpc_log.h"
#include "lockstep/dbsp/health.h"
#include "lockstep/dbsp/master.h"
#include "lockstep/dbsp/metrics.h"
#include "lockstep/dbsp/security.h"
#include "lockstep/dbsp/worker.h"
#include "lockstep/generate/generate.h"
#include "lockstep/validate/validate.h"
#include "nlohmann/json.hpp"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "tbb/global_control.h"

namespace lockstep::cli {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

// Exit codes (README, "Exit codes"): 0 success, 1 the job (or the command's work) failed, 2 the
// command line or its configuration is wrong and nothing was started.
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
// A master refused to drive a job that another live master drives (docs/design.md §7.7).
constexpr int kExitDriven = 3;

int Fail(const absl::Status& status, int code = kExitFailed) {
  spdlog::error("{}", Message(status));
  return code;
}
int UsageError(const absl::Status& status) { return Fail(status, kExitUsage); }

// A count flag: decimal digits only. CLI11 reads an unsigned option with strtoull, which takes
// "-1" as the largest value (so `--top -1` printed every vertex) and "010" as octal.
const CLI::Validator kCount(
    [](std::string& text) -> std::string {
      const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                       [](char c) { return c >= '0' && c <= '9'; });
      return digits ? std::string() : "expected a whole number >= 0, got '" + text + "'";
    },
    "COUNT");

// An app's error about a parameter the command line gave names its flag (job_params.h).
absl::Status AsFlagError(const catalogue::AppInfo& app, const absl::Status& status) {
  return NameParam(app, {}, status).status;
}

// `validate`'s rule: --rule by name, or the rule of the --app the catalogue gives.
absl::StatusOr<catalogue::ValidationRule> RuleToValidate(const catalogue::AppRegistry& apps,
                                                         const std::string& rule,
                                                         const std::string& app) {
  if (!rule.empty()) {
    auto parsed = catalogue::ParseRule(rule);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--rule: ", Message(parsed.status())));
    }
    return *parsed;
  }
  const catalogue::AppInfo* info = apps.Find(app);
  if (info == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--app: no app named '", app, "'"));
  }
  return info->validation;
}

// Graph and job options shared by `run` and `master`.
struct JobFlags {
  std::string graph;
  std::string format;
  bool undirected = false;
  std::string out;
  std::string out_table;
  db::SourceTables tables;
  std::vector<std::string> db_flags;  // the --db-* options given
  uint64_t max_supersteps = 10000;
  std::vector<std::string> trace_vertices;
  std::map<std::string, std::string> params;  // app flags as given
};

// --graph: a path that exists, or a PostgreSQL URI (checked when the job is made).
const CLI::Validator kGraphPath(
    [](std::string& text) -> std::string {
      return db::IsPostgresUri(text) ? std::string() : CLI::ExistingPath(text);
    },
    "PATH|URI");

void AddGraphOptions(CLI::App* sub, JobFlags& flags) {
  sub->add_option("--graph", flags.graph,
                  "input graph: an edge list 'src dst [weight]' (a file, or a directory whose "
                  "files are read as one input), a Graphalytics .properties, a directory "
                  "written by `lockstep partition`, or a PostgreSQL URI postgresql://... (its "
                  "password from PGPASSWORD or PGPASSFILE, never in the URI)")
      ->required()
      ->check(kGraphPath);
  sub->add_option("--db-edges-table", flags.tables.edges, "PostgreSQL source: the table of edges")
      ->capture_default_str();
  sub->add_option("--db-src-column", flags.tables.src, "PostgreSQL source: the edges' source")
      ->capture_default_str();
  sub->add_option("--db-dst-column", flags.tables.dst, "PostgreSQL source: the edges' target")
      ->capture_default_str();
  sub->add_option("--db-weight-column", flags.tables.weight,
                  "PostgreSQL source: the edges' weight (read when the app uses weights and the "
                  "column exists)")
      ->capture_default_str();
  sub->add_option("--db-vertices-table", flags.tables.vertices,
                  "PostgreSQL source: the table listing every vertex, isolated ones included "
                  "(read if it exists; without it the vertices are the edges' ends)")
      ->capture_default_str();
  sub->add_option("--db-id-column", flags.tables.id, "PostgreSQL source: the vertices' ID")
      ->capture_default_str();
  for (const char* name : {"--db-edges-table", "--db-src-column", "--db-dst-column",
                           "--db-weight-column", "--db-vertices-table", "--db-id-column"}) {
    sub->get_option(name)->each([&flags, name](const std::string&) {
      flags.db_flags.push_back(name);
      if (std::string_view(name) == "--db-vertices-table") flags.tables.vertices_required = true;
    });
  }
  sub->add_option("--format", flags.format, "edgelist or graphalytics (default: by suffix)")
      ->check(CLI::IsMember({"edgelist", "graphalytics"}));
  sub->add_flag("--undirected", flags.undirected, "add the reverse of every edge");
  sub->add_option("--max-supersteps", flags.max_supersteps,
                  "fail if the job needs more supersteps than this")
      ->capture_default_str()
      ->check(kCount);
  sub->add_option("--trace-vertex", flags.trace_vertices,
                  "log what this vertex (an external ID) did in every superstep: messages "
                  "received and sent, value, halted (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// App options: every given option's value by name, read after parsing.
struct AppOptions {
  std::vector<std::pair<std::string, CLI::Option*>> options;
  std::vector<std::unique_ptr<std::string>> storage;

  void Add(CLI::App* sub, const catalogue::AppParam& p) {
    for (const auto& [name, opt] : options) {
      if (name == p.name) return;  // shared by two apps (the master lists all apps' options)
    }
    storage.push_back(std::make_unique<std::string>(p.default_value));
    CLI::Option* o = sub->add_option("--" + p.name, *storage.back(), p.help);
    if (!p.default_value.empty()) o->default_str(p.default_value);
    options.emplace_back(p.name, o);
  }
  void Collect(std::map<std::string, std::string>& out) const {
    for (const auto& [name, opt] : options) {
      if (opt->count() > 0) out[name] = opt->as<std::string>();
    }
  }
};

// Why a job could not be made: the command line (exit 2) or the input it names (exit 1).
struct JobError {
  absl::Status status;
  int exit_code;
};

// Checks what the command line says about the job before anything is read: an app option given
// to another app, a flag that does not apply to the graph's format, app parameters that are wrong
// whatever the graph (JobRunner::CheckParams).
absl::Status CheckJobFlags(const catalogue::AppInfo& app, const JobFlags& flags,
                           const bsp::JobDetails& job) {
  for (const auto& [name, value] : flags.params) {
    const bool known = std::any_of(app.params.begin(), app.params.end(),
                                   [&](const catalogue::AppParam& p) { return p.name == name; });
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " is not an option of app ", app.name));
    }
  }
  if (db::IsPostgresUri(flags.graph)) {
    if (auto st = db::CheckUri(flags.graph, "--graph"); !st.ok()) return st;
    if (!flags.format.empty()) {
      return absl::InvalidArgumentError(
          "--format does not apply to a PostgreSQL source (its tables are an edge list, with a "
          "vertex table if there is one)");
    }
  } else if (!flags.db_flags.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        flags.db_flags.front(), " applies to a PostgreSQL --graph (postgresql://...)"));
  }
  if (db::IsPostgresUri(flags.out)) {
    if (auto st = db::CheckUri(flags.out, "--out"); !st.ok()) return st;
  } else if (!flags.out_table.empty()) {
    return absl::InvalidArgumentError(
        "--out-table applies to a PostgreSQL --out (postgresql://...)");
  }
  if (bsp::IsPartitionedGraph(flags.graph) && !flags.format.empty()) {
    return absl::InvalidArgumentError(
        "--format does not apply to a partitioned graph (a directory written by `lockstep "
        "partition`)");
  }
  if (flags.undirected && bsp::IsGraphalytics(job.graph)) {
    return absl::InvalidArgumentError(
        "--undirected applies to edge lists; a Graphalytics graph says whether it is directed in "
        "its .properties file");
  }
  return app.make_runner(nullptr)->CheckParams(job);
}

// The job an app runs: defaults, then Graphalytics properties, then flags; `from_file` says which
// parameters a file of the graph gave.
absl::StatusOr<bsp::JobDetails> MakeJobDetails(const catalogue::AppInfo& app, const JobFlags& flags,
                                               std::map<std::string, std::string>& from_file) {
  bsp::JobDetails job;
  job.job_id = "local";
  job.app = app.name;
  job.graph = {flags.graph, flags.format, flags.undirected};
  if (db::IsPostgresUri(flags.graph)) {
    job.graph.options = db::TablesAsOptions(flags.tables);
    job.graph.text = db::OpenSource(flags.graph, flags.tables);
  }
  job.output = flags.out;
  job.max_supersteps = flags.max_supersteps;
  job.trace_vertices = flags.trace_vertices;
  auto params = MakeJobParams(app, job.graph, flags.params);
  if (!params.ok()) return params.status();
  job.params = std::move(params->values);
  from_file = std::move(params->from_file);
  return job;
}

// MakeJobDetails, then CheckJobFlags. A .properties file that cannot be read or says something
// wrong (a parameter's value included) is bad input (1); everything else here is the command
// line (2).
std::variant<bsp::JobDetails, JobError> MakeJob(const catalogue::AppInfo& app,
                                                const JobFlags& flags,
                                                std::map<std::string, std::string>& from_file) {
  auto job = MakeJobDetails(app, flags, from_file);
  if (!job.ok()) return JobError{job.status(), kExitFailed};
  if (auto st = CheckJobFlags(app, flags, *job); !st.ok()) {
    const NamedError e = NameParam(app, from_file, st);
    return JobError{e.status, e.in_file ? kExitFailed : kExitUsage};
  }
  return *std::move(job);
}

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

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

// A local run's job ID in lockstep_jobs: a random UUID, so that runs never collide.
std::string NewRunId() {
  static boost::uuids::random_generator gen;
  return boost::uuids::to_string(gen());
}

// Where a PostgreSQL --out puts an app's results: the table, and its columns' types (the IDs'
// as the source has them; text for a file).
absl::StatusOr<db::SinkOptions> SinkFor(const catalogue::AppInfo& app, const JobFlags& flags) {
  db::SinkOptions sink;
  sink.uri = flags.out;
  sink.table = flags.out_table.empty() ? app.name : flags.out_table;
  sink.id_type = "text";
  if (db::IsPostgresUri(flags.graph)) {
    auto type = db::IdType(flags.graph, flags.tables);
    if (!type.ok()) return type.status();
    sink.id_type = *type;
  }
  switch (app.values) {
    case catalogue::ValueKind::kReal:
      sink.value_type = "double precision";
      break;
    case catalogue::ValueKind::kInteger:
      sink.value_type = "bigint";
      break;
    case catalogue::ValueKind::kVertex:
      sink.value_type = sink.id_type;
      break;
  }
  return sink;
}

// A distributed job's PostgreSQL --out (docs/design.md §10): a staging table per attempt that the
// workers copy their parts into, published by the master in one transaction; its lease lives
// from `prepare` to `publish` or `discard`.
dbsp::JobSpec::Sink DatabaseSink(const catalogue::AppInfo& app, const JobFlags& flags) {
  dbsp::JobSpec::Sink sink;
  auto stages = std::make_shared<db::Stages>();
  // The table's types need the source's ID type: read when the job starts, not at start-up.
  sink.prepare =
      [&app, flags,
       stages](const std::string& name) -> absl::StatusOr<std::map<std::string, std::string>> {
    auto options = SinkFor(app, flags);
    if (!options.ok()) return options.status();
    std::string stage = "lockstep_stage_" + name;
    std::replace(stage.begin(), stage.end(), '-', '_');
    // The job's staging tables of attempts before this one (a master that died left them): job
    // IDs are UUIDs (36 characters), to which a later attempt's name adds "-N".
    const std::string job_prefix = stage.substr(0, std::min<size_t>(stage.size(), 15 + 36));
    if (auto st = db::DropStages(options->uri, job_prefix); !st.ok()) return st;
    if (auto st = stages->Create(*options, stage); !st.ok()) return st;
    return std::map<std::string, std::string>{{db::kStageOption, stage}};
  };
  sink.publish = [&app, flags, stages](const std::map<std::string, std::string>& staged,
                                       uint64_t vertices,
                                       const std::string& record) -> absl::Status {
    auto options = SinkFor(app, flags);
    if (!options.ok()) return options.status();
    const nlohmann::json j = nlohmann::json::parse(record);
    db::JobRecord r;
    r.job_id = j.at("job_id").get<std::string>();
    r.app = j.at("app").get<std::string>();
    r.graph = j.at("graph").get<std::string>();
    r.params = j.at("params").get<std::map<std::string, std::string>>();
    r.vertices = vertices;
    r.supersteps = j.at("supersteps").get<uint64_t>();
    r.compute_seconds = j.at("timings_seconds").at("compute").get<double>();
    r.load_seconds = j.at("timings_seconds").at("attempt").get<double>() - r.compute_seconds;
    bool already = false;
    auto st = stages->Publish(*options, staged.at(db::kStageOption), vertices, r, &already);
    if (st.ok() && already) {
      stages->Drop(flags.out, staged.at(db::kStageOption));
      spdlog::warn("job {} was published before: table {} left as it was", r.job_id,
                   options->table);
    }
    return st;
  };
  sink.discard = [out = flags.out, stages](const std::map<std::string, std::string>& staged) {
    if (auto it = staged.find(db::kStageOption); it != staged.end()) stages->Drop(out, it->second);
  };
  return sink;
}

// A distributed job's PostgreSQL table, in its details' output options (and its record).
constexpr char kTableOption[] = "db.table";

// The parts of a master's spec that a database needs and a job record cannot hold (§10): the
// snapshot option, which lives with this master only, and the sink's functions.
void AttachDatabase(dbsp::JobSpec& spec) {
  const bsp::JobDetails& d = spec.details;
  if (db::IsPostgresUri(d.graph.path)) spec.ephemeral_graph_options = {db::kSnapshotOption};
  if (!db::IsPostgresUri(d.output)) return;
  JobFlags flags;
  flags.graph = d.graph.path;
  if (db::IsPostgresUri(d.graph.path)) flags.tables = db::TablesFromOptions(d.graph.options);
  flags.out = d.output;
  auto table = d.output_options.find(kTableOption);
  if (table != d.output_options.end()) flags.out_table = table->second;
  spec.sink = DatabaseSink(*spec.app, flags);
}

int RunLocal(const catalogue::AppInfo& app, const JobFlags& flags, size_t top) {
  if (top > 0) {
    // --top reads the result back from --out: a device or FIFO would give nothing back, or block.
    struct stat info;
    if (::stat(flags.out.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
      return UsageError(absl::InvalidArgumentError(absl::StrCat(
          "--top reads the result back from --out, which is not a regular file: ", flags.out)));
    }
  }
  std::map<std::string, std::string> from_file;
  auto made = MakeJob(app, flags, from_file);
  if (const JobError* e = std::get_if<JobError>(&made)) return Fail(e->status, e->exit_code);
  bsp::JobDetails* job = &std::get<bsp::JobDetails>(made);
  // A PostgreSQL --out: the results go to a file of their own, then into the table in one
  // transaction (docs/design.md §10).
  std::optional<TempDir> staged;
  if (db::IsPostgresUri(flags.out)) {
    auto dir = TempDir::Make("lockstep-results");
    if (!dir.ok()) return Fail(dir.status());
    staged = std::move(*dir);
    job->output = staged->path() + "/results";
  }
  const auto start = std::chrono::steady_clock::now();
  bsp::ExecutorOptions options;
  options.max_supersteps = flags.max_supersteps;
  options.progress = [](const bsp::StepStats& s) {
    spdlog::info("superstep {} | active {} | messages {} | {:.1f} ms", s.superstep, s.active,
                 s.messages, s.seconds * 1e3);
  };
  // A line holds the graph's IDs and values (a database's may hold anything).
  options.trace = [](const std::string& line) {
    spdlog::info("trace {}", bsp::SanitizeForLog(line, 1024));
  };
  std::unique_ptr<bsp::JobRunner> runner = app.make_runner(&std::cout);
  auto executor = runner->StartJob(*job, bsp::LocalExecutorFactory(options));
  if (!executor.ok()) return Fail(NameParam(app, from_file, executor.status()).status);
  const double load_s = SecondsSince(start);
  const auto compute_start = std::chrono::steady_clock::now();
  if (auto st = (*executor)->RunToCompletion(); !st.ok()) {
    runner->AbortJob(*job);
    return Fail(AsFlagError(app, st));
  }
  const double compute_s = SecondsSince(compute_start);
  if (auto written = runner->CompleteJob(*job); !written.ok()) {
    runner->AbortJob(*job);
    return Fail(written.status());
  }
  std::string wrote = flags.out;
  if (staged) {
    db::JobRecord record;
    record.job_id = NewRunId();
    record.app = app.name;
    record.graph = flags.graph;
    record.params = job->params;
    record.vertices = (*executor)->engine().num_local_vertices();
    record.supersteps = (*executor)->supersteps();
    record.load_seconds = load_s;
    record.compute_seconds = compute_s;
    auto sink = SinkFor(app, flags);
    if (!sink.ok()) return Fail(sink.status());
    const auto publish_start = std::chrono::steady_clock::now();
    if (auto st = db::PublishResults(*sink, job->output, record); !st.ok()) return Fail(st);
    wrote = absl::StrFormat("table %s (job %s), published in %.3f s", sink->table, record.job_id,
                            SecondsSince(publish_start));
  }
  spdlog::info(
      "{}: {} vertices, {} supersteps, load {:.3f} s, compute {:.3f} s, total {:.3f} s; "
      "wrote {}",
      app.name, (*executor)->engine().num_local_vertices(), (*executor)->supersteps(), load_s,
      compute_s, SecondsSince(start), wrote);
  if (top > 0) {
    if (auto st = PrintTop(job->output, top, app.unreachable, std::cout); !st.ok()) return Fail(st);
  }
  return 0;
}

struct PartitionFlags {
  JobFlags job;
  std::string out;
  uint32_t parts = 8;
};

// `partition`: the whole graph is read once, with its weights if it has any (so that weighted
// apps can use the result), and written as `parts` files.
int RunPartition(const PartitionFlags& flags) {
  const bsp::GraphSource source{flags.job.graph, flags.job.format, flags.job.undirected};
  if (flags.job.undirected && bsp::IsGraphalytics(source)) {
    return UsageError(absl::InvalidArgumentError(
        "--undirected applies to edge lists; a Graphalytics graph says whether it is directed in "
        "its .properties file"));
  }
  const auto start = std::chrono::steady_clock::now();
  auto input = bsp::LoadGraph(source, bsp::WeightUse::kNonNegative);
  if (!input.ok()) return Fail(input.status());
  const double load_s = SecondsSince(start);
  bsp::PartWriteOptions options;
  options.parts = flags.parts;
  options.format = bsp::IsGraphalytics(source) ? "graphalytics" : "edgelist";
  if (auto st = bsp::WritePartFiles(*input, flags.out, options); !st.ok()) {
    return absl::IsFailedPrecondition(st) || absl::IsInvalidArgument(st) ? UsageError(st)
                                                                         : Fail(st);
  }
  spdlog::info(
      "partition: {} vertices, {} stored edges{} in {} parts, load {:.3f} s, total {:.3f} "
      "s; wrote {}",
      input->num_vertices(), input->num_stored_edges(), input->weights.empty() ? "" : " (weighted)",
      flags.parts, load_s, SecondsSince(start), flags.out);
  return 0;
}

struct MasterFlags {
  std::string listen;
  std::string app;
  std::string port_file;
  uint32_t min_workers = 0;
  uint32_t max_workers = 0;
  std::string acquire_timeout = "0";
  std::string last_call = "0";
  std::string every;
  std::string peer_timeout = "120s";
  std::string relay = "direct";
  uint64_t max_batch_bytes = 4 << 20;
  std::string save_parts;
  std::string checkpoint_dir;
  uint64_t checkpoint_every = 0;
  std::string checkpoint_interval = "0";
  uint32_t checkpoint_keep = 2;
  uint32_t max_restarts = 0;
  std::string recovery_timeout = "10s";
  std::string straggler_timeout = "0";
  bool replace_stragglers = false;
  dbsp::SecurityFlags security;
  dbsp::ConnectionLimits limits;
  std::string handshake_timeout = "10s";
  int metrics_port = -1;
};

// The process's figures for /metrics (docs/design.md §12).
dbsp::Metrics g_metrics;

// Serves /metrics on `port` (0: any free one) over plain HTTP, or nothing for a negative port.
std::variant<int, std::unique_ptr<dbsp::MetricsServer>> StartMetrics(
    int port, std::function<std::string()> render) {
  if (port < 0) return std::unique_ptr<dbsp::MetricsServer>();
  auto server = dbsp::MetricsServer::Start("0.0.0.0:" + std::to_string(port), std::move(render));
  if (!server.ok()) return Fail(server.status());
  spdlog::info("metrics on port {} (http://HOST:{}/metrics)", (*server)->port(), (*server)->port());
  return *std::move(server);
}

void AddMetricsOption(CLI::App* app, int& port) {
  app->add_option("--metrics-port", port,
                  "serve Prometheus metrics over plain HTTP on this port, /metrics (0: any free "
                  "port; default: none)")
      ->check(CLI::Range(0, 65535));
}

// The flags that secure a process's gRPC connections (docs/design.md §11), on master, worker and
// the commands that talk to them.
void AddSecurityOptions(CLI::App* app, dbsp::SecurityFlags& f) {
  app->add_option("--tls-cert", f.tls_cert,
                  "PEM certificate of this process, signed by --tls-ca (mutual TLS: with "
                  "--tls-key and --tls-ca)");
  app->add_option("--tls-key", f.tls_key, "PEM private key of --tls-cert");
  app->add_option("--tls-ca", f.tls_ca,
                  "PEM certificate of the cluster's authority: only peers whose certificate it "
                  "signed are trusted");
  app->add_option("--token-file", f.token_file,
                  "a file holding the cluster's join token (a trailing newline is ignored): every "
                  "worker must present it");
  app->add_flag("--insecure", f.insecure,
                "plain text on purpose: no warning when listening beyond loopback without TLS");
}

// A server's connections each hold a descriptor: the soft limit (often 1,024) goes up to the
// hard one, so that connections from peers that never finish a handshake, which last up to
// --handshake-timeout, do not leave the process without descriptors for its own files.
void RaiseFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, rlim_t{1} << 20);
  if (::setrlimit(RLIMIT_NOFILE, &limit) == 0) {
    spdlog::debug("open files: up to {} (was {})", limit.rlim_cur, before);
  }
}

// The limits every server puts on its peers; the master's pool limits only where `pool`.
void AddLimitOptions(CLI::App* app, dbsp::ConnectionLimits& l, std::string& handshake_timeout,
                     bool pool) {
  app->add_option("--max-message-bytes", l.max_message_bytes,
                  "the largest gRPC message sent or taken (more than --max-batch-bytes)")
      ->check(CLI::Range(uint64_t{1} << 20, uint64_t{INT32_MAX}))
      ->capture_default_str();
  app->add_option("--handshake-timeout", handshake_timeout,
                  "close a connection whose TLS and HTTP/2 handshake is not done by then")
      ->capture_default_str();
  if (!pool) return;
  app->add_option("--max-pool-workers", l.max_pool_workers,
                  "refuse a worker beyond this many connected at once")
      ->check(kCount)
      ->capture_default_str();
  app->add_option("--max-conns-per-ip", l.max_conns_per_ip,
                  "refuse a worker beyond this many connected at once from one address")
      ->check(kCount)
      ->capture_default_str();
}

// The Security of `flags` and `limits`, or the exit code of its usage error.
std::variant<int, std::shared_ptr<const dbsp::Security>> LoadSecurity(
    const dbsp::SecurityFlags& flags, dbsp::ConnectionLimits limits = {},
    const std::string& handshake_timeout = "10s") {
  auto timeout = ParseDuration(handshake_timeout, "--handshake-timeout");
  if (!timeout.ok()) return UsageError(timeout.status());
  if (timeout->count() <= 0) {
    return UsageError(absl::InvalidArgumentError("--handshake-timeout must be positive"));
  }
  limits.handshake_timeout = *timeout;
  auto security = dbsp::Security::Load(flags, limits);
  if (!security.ok()) return UsageError(security.status());
  return *std::move(security);
}

// The job on a master's command line (--app and its flags), or the exit code of its error.
std::variant<int, dbsp::JobSpec> MasterSpec(const catalogue::AppRegistry& apps,
                                            const MasterFlags& m, JobFlags flags) {
  if (flags.graph.empty()) return UsageError(absl::InvalidArgumentError("--graph is required"));
  if (flags.out.empty()) return UsageError(absl::InvalidArgumentError("--out is required"));
  const bool database = db::IsPostgresUri(flags.graph);
  if (database && !m.save_parts.empty()) {
    return UsageError(absl::InvalidArgumentError(
        "--save-parts writes the partitioned form of a graph in files; a PostgreSQL --graph is "
        "read from its tables"));
  }
  const catalogue::AppInfo* app = apps.Find(m.app);
  if (app == nullptr) {
    return UsageError(
        absl::InvalidArgumentError(absl::StrCat("--app: no app named '", m.app, "'")));
  }
  std::error_code ec;
  if (!database) flags.graph = std::filesystem::absolute(flags.graph, ec).string();  // shared
  std::map<std::string, std::string> from_file;
  auto made = MakeJob(*app, flags, from_file);
  if (const JobError* e = std::get_if<JobError>(&made)) return Fail(e->status, e->exit_code);
  bsp::JobDetails* job = &std::get<bsp::JobDetails>(made);
  if (!m.save_parts.empty()) {
    if (bsp::IsPartitionedGraph(flags.graph)) {
      return UsageError(absl::InvalidArgumentError(
          "--save-parts: the graph already is a partitioned graph (a directory written by "
          "`lockstep partition`)"));
    }
    if (!m.every.empty()) {
      return UsageError(absl::InvalidArgumentError(
          "--save-parts writes the graph once: save it in one job, then run the periodic jobs "
          "with --graph on the directory"));
    }
    job->save_parts = std::filesystem::absolute(m.save_parts, ec).string();
  }
  for (const catalogue::AppParam& p : app->params) {
    if (p.local_only && flags.params.count(p.name) > 0) {
      // Never ignore a flag: say where it works instead.
      return UsageError(absl::InvalidArgumentError(
          absl::StrCat("--", p.name, " is not supported by `lockstep master` (app ", app->name,
                       "); use `lockstep run`")));
    }
    std::string& value = job->params[p.name];
    if (p.is_path && !value.empty()) value = std::filesystem::absolute(value, ec).string();
  }
  dbsp::JobSpec spec;
  spec.app = app;
  spec.details = *job;
  if (db::IsPostgresUri(flags.out)) {
    spec.details.output_options[kTableOption] =
        flags.out_table.empty() ? app->name : flags.out_table;
  }
  AttachDatabase(spec);
  if (m.max_workers > 0 && m.min_workers > m.max_workers) {
    // The pool would wait for the minimum and then take only the maximum.
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat("--min-workers ", m.min_workers, " exceeds --max-workers ", m.max_workers)));
  }
  spec.pool.min_workers = m.min_workers;
  spec.pool.max_workers = m.max_workers;
  auto acquire = ParseDuration(m.acquire_timeout, "--acquire-timeout");
  if (!acquire.ok()) return UsageError(acquire.status());
  auto last_call = ParseDuration(m.last_call, "--last-call");
  if (!last_call.ok()) return UsageError(last_call.status());
  std::optional<std::chrono::milliseconds> every;
  if (!m.every.empty()) {
    auto e = ParseDuration(m.every, "--every");
    if (!e.ok()) return UsageError(e.status());
    every = *e;
  }
  spec.every = every.value_or(std::chrono::milliseconds(0));
  spec.pool.acquire_timeout = *acquire;
  spec.pool.last_call = *last_call;
  auto peer_timeout = ParseDuration(m.peer_timeout, "--peer-timeout");
  if (!peer_timeout.ok()) return UsageError(peer_timeout.status());
  spec.peer_timeout = *peer_timeout;
  spec.relay_direct = m.relay == "direct";
  spec.max_batch_bytes = m.max_batch_bytes;
  auto interval = ParseDuration(m.checkpoint_interval, "--checkpoint-interval");
  if (!interval.ok()) return UsageError(interval.status());
  spec.checkpoint_interval = *interval;
  const bool checkpoints = m.checkpoint_every > 0 || interval->count() > 0;
  if (checkpoints && m.checkpoint_dir.empty()) {
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat(m.checkpoint_every > 0 ? "--checkpoint-every" : "--checkpoint-interval",
                     " needs --checkpoint-dir: where every process writes the checkpoints")));
  }
  if (!m.checkpoint_dir.empty() && !checkpoints) {
    return UsageError(absl::InvalidArgumentError(
        "--checkpoint-dir needs --checkpoint-every (how many supersteps between checkpoints) or "
        "--checkpoint-interval (how long)"));
  }
  if (!m.checkpoint_dir.empty()) {
    spec.checkpoint_dir = std::filesystem::absolute(m.checkpoint_dir, ec).string();
  }
  spec.checkpoint_every = m.checkpoint_every;
  spec.checkpoint_keep = m.checkpoint_keep;
  spec.max_restarts = m.max_restarts;
  auto recovery_timeout = ParseDuration(m.recovery_timeout, "--recovery-timeout");
  if (!recovery_timeout.ok()) return UsageError(recovery_timeout.status());
  spec.recovery_timeout = *recovery_timeout;
  auto straggler_timeout = ParseDuration(m.straggler_timeout, "--straggler-timeout");
  if (!straggler_timeout.ok()) return UsageError(straggler_timeout.status());
  spec.straggler_timeout = *straggler_timeout;
  spec.replace_stragglers = m.replace_stragglers;
  if (m.replace_stragglers && m.max_restarts == 0) {
    return UsageError(absl::InvalidArgumentError(
        "--replace-stragglers needs --max-restarts: a straggler replaced ends the attempt, and "
        "another must follow"));
  }
  return spec;
}

// " | stragglers: A, B" for a progress line, or nothing.
std::string Stragglers(const std::vector<std::string>& stragglers) {
  std::string out;
  for (const std::string& s : stragglers) out += (out.empty() ? " | stragglers: " : ", ") + s;
  return out;
}

// A refusal to drive a job: another master drives it (kExitDriven), or the directory holds another
// job or none (a configuration error).
int RefuseJob(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kAlreadyExists) return Fail(status, kExitDriven);
  if (status.code() == absl::StatusCode::kInvalidArgument ||
      status.code() == absl::StatusCode::kNotFound) {
    return UsageError(status);
  }
  return Fail(status);
}

int RunMaster(const catalogue::AppRegistry& apps, const MasterFlags& m, JobFlags flags,
              const std::vector<std::string>& given) {
  // From the start: a master waiting for its workers is already worth watching.
  std::atomic<dbsp::Master*> live{nullptr};
  auto metrics = StartMetrics(m.metrics_port, [&live] {
    if (dbsp::Master* master = live.load()) g_metrics.workers = master->connected_workers();
    return g_metrics.Render("master");
  });
  if (const int* code = std::get_if<int>(&metrics)) return *code;
  const absl::Cleanup no_metrics = [&metrics] {
    std::get<std::unique_ptr<dbsp::MetricsServer>>(metrics).reset();
  };
  dbsp::JobSpec spec;
  if (m.app.empty()) {
    // Resume: the unfinished job in --checkpoint-dir, as its record says (docs/design.md §7.7).
    if (m.checkpoint_dir.empty()) {
      return UsageError(absl::InvalidArgumentError(
          "--app is required (or --checkpoint-dir alone, to resume the unfinished job there)"));
    }
    for (const std::string& name : given) {
      static const std::set<std::string> kWithResume = {"--listen",
                                                        "--port-file",
                                                        "--checkpoint-dir",
                                                        "--config",
                                                        "--tls-cert",
                                                        "--tls-key",
                                                        "--tls-ca",
                                                        "--token-file",
                                                        "--insecure",
                                                        "--max-message-bytes",
                                                        "--handshake-timeout",
                                                        "--max-pool-workers",
                                                        "--max-conns-per-ip",
                                                        "--metrics-port",
                                                        "--trace-vertex"};
      if (!kWithResume.contains(name)) {
        return UsageError(absl::InvalidArgumentError(absl::StrCat(
            name,
            " without --app: --checkpoint-dir alone resumes the unfinished job there with "
            "its recorded settings (only --listen, --port-file, the security flags, "
            "--metrics-port and --trace-vertex go with it); give --app and "
            "the job's flags to name the job")));
      }
    }
    std::error_code ec;
    auto found = dbsp::FindUnfinishedJob(std::filesystem::absolute(m.checkpoint_dir, ec).string(),
                                         apps, nullptr);
    if (!found.ok()) return RefuseJob(found.status());
    spec = **found;
    // Tracing is how a job is watched, not what it answers: the record's, unless given here.
    if (!flags.trace_vertices.empty()) spec.details.trace_vertices = flags.trace_vertices;
    AttachDatabase(spec);
  } else {
    auto made = MasterSpec(apps, m, std::move(flags));
    if (const int* code = std::get_if<int>(&made)) return *code;
    spec = std::get<dbsp::JobSpec>(std::move(made));
    if (!spec.checkpoint_dir.empty()) {
      auto found = dbsp::FindUnfinishedJob(spec.checkpoint_dir, apps, &spec);
      if (!found.ok()) return RefuseJob(found.status());
      if (*found) {
        spec = **found;
        AttachDatabase(spec);
      }
    }
  }
  const catalogue::AppInfo* app = spec.app;
  std::optional<std::chrono::milliseconds> every;
  if (spec.every.count() > 0) every = spec.every;
  spec.progress = [](const dbsp::MasterProgress& p) {
    g_metrics.superstep = p.global.superstep;
    g_metrics.active_vertices = p.global.active;
    g_metrics.messages += p.global.messages;
    g_metrics.bytes_sent += p.relayed_bytes;
    g_metrics.AddPhase(dbsp::JobPhase::kCompute, p.seconds);
    for (const std::string& line : p.trace) spdlog::info("job {}: trace {}", p.job_id, line);
    spdlog::info(
        "job {}: superstep {} | active {} | messages {} | relayed {} batches, {} bytes | {:.1f} "
        "ms{}{}",
        p.job_id, p.global.superstep, p.global.active, p.global.messages, p.relayed_batches,
        p.relayed_bytes, p.seconds * 1e3,
        p.attempt > 1 ? absl::StrCat(" | attempt ", p.attempt) : std::string(),
        Stragglers(p.stragglers));
  };

  // A batch and its framing fit in a message (the job's: a resumed job's is its record's).
  const uint64_t batch = spec.max_batch_bytes > 0 ? spec.max_batch_bytes : m.max_batch_bytes;
  if (batch + (64 << 10) > m.limits.max_message_bytes) {
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat("--max-batch-bytes ", batch, " leaves no room for framing under ",
                     "--max-message-bytes ", m.limits.max_message_bytes, " (64 KiB at least)")));
  }
  RaiseFileLimit();
  auto security = LoadSecurity(m.security, m.limits, m.handshake_timeout);
  if (const int* code = std::get_if<int>(&security)) return *code;
  auto master =
      dbsp::Master::Start(m.listen, std::get<std::shared_ptr<const dbsp::Security>>(security));
  if (!master.ok()) return Fail(master.status());
  live = master->get();
  // The metrics server (whose thread reads `live`) stops before the master goes.
  const absl::Cleanup not_live = [&live, &metrics] {
    std::get<std::unique_ptr<dbsp::MetricsServer>>(metrics).reset();
    live = nullptr;
  };
  spdlog::info("master listening on port {}", (*master)->port());
  dbsp::LogSecurity("master", m.listen, *std::get<std::shared_ptr<const dbsp::Security>>(security));
  if (!m.port_file.empty()) {
    if (auto st = bsp::WriteFileAtomically(m.port_file, std::to_string((*master)->port()) + "\n");
        !st.ok()) {
      return Fail(st);
    }
  }
  int exit_code = 0;
  while (true) {
    // A database graph: every job reads one snapshot, exported here and imported by its workers;
    // the exporting session lives until the job ends (docs/design.md §10).
    std::unique_ptr<db::ExportedSnapshot> snapshot;
    absl::Status exported_ok;
    if (db::IsPostgresUri(spec.details.graph.path)) {
      auto exported = db::ExportedSnapshot::Export(
          spec.details.graph.path, db::TablesFromOptions(spec.details.graph.options));
      if (exported.ok()) {
        snapshot = *std::move(exported);
        spec.details.graph.options[db::kSnapshotOption] = snapshot->id();
        spdlog::info("the job reads snapshot {} of the database", snapshot->id());
      } else {
        exported_ok = exported.status();
      }
    }
    auto result = exported_ok.ok() ? (*master)->RunJob(spec, g_stop)
                                   : absl::StatusOr<dbsp::JobResult>(exported_ok);
    snapshot.reset();
    spec.resume_job.clear();  // a service's later jobs are new ones
    ++(result.ok() ? g_metrics.jobs_completed : g_metrics.jobs_failed);
    if (result.ok()) g_metrics.restarts += result->attempts - 1;
    if (!result.ok() && result.status().code() == absl::StatusCode::kAlreadyExists) {
      exit_code = RefuseJob(result.status());
      break;
    }
    if (!every) {
      exit_code = result.ok() ? 0 : Fail(AsFlagError(*app, result.status()));
      break;
    }
    // A service ended by SIGTERM exits 0, also when the signal aborted a running job.
    if (!result.ok() && !g_stop.load()) {
      spdlog::warn("job failed: {}", Message(AsFlagError(*app, result.status())));
    }
    const auto next = std::chrono::steady_clock::now() + *every;
    while (!g_stop.load() && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (g_stop.load()) break;
  }
  (*master)->Shutdown();
  return exit_code;
}

// `lockstep status`: the job, its progress, and each worker's time in the last superstep with the
// slowest marked; or all of it as one JSON object.
void PrintStatus(const dbsp::JobStatus& s, bool json) {
  size_t slowest = 0;
  for (size_t w = 1; w < s.workers.size(); ++w) {
    if (s.workers[w].second > s.workers[slowest].second) slowest = w;
  }
  if (json) {
    nlohmann::json j = {{"running", s.running},
                        {"job_id", s.job_id},
                        {"app", s.app},
                        {"superstep", s.superstep},
                        {"active_vertices", s.active},
                        {"elapsed_seconds", s.elapsed_seconds},
                        {"max_supersteps", s.max_supersteps},
                        {"workers_connected", s.workers_connected},
                        {"workers", nlohmann::json::array()}};
    j["remaining_seconds"] =
        s.remaining_seconds < 0 ? nlohmann::json(nullptr) : nlohmann::json(s.remaining_seconds);
    for (size_t w = 0; w < s.workers.size(); ++w) {
      j["workers"].push_back({{"name", s.workers[w].first},
                              {"last_superstep_seconds", s.workers[w].second},
                              {"slowest", w == slowest}});
    }
    std::cout << j.dump() << "\n";
    return;
  }
  if (s.job_id.empty()) {
    std::cout << "no job yet; " << s.workers_connected << " workers connected\n";
    return;
  }
  std::cout << absl::StrFormat(
      "job %s (%s): %s, superstep %d%s, %d active vertices\n", s.job_id, s.app,
      s.running ? "running" : "ended", s.superstep,
      s.max_supersteps > 0 ? absl::StrCat(" of at most ", s.max_supersteps) : std::string(),
      s.active);
  std::cout << absl::StrFormat("elapsed %.1f s%s; %d workers connected\n", s.elapsed_seconds,
                               s.remaining_seconds >= 0
                                   ? absl::StrFormat(", about %.1f s to go", s.remaining_seconds)
                                   : std::string(),
                               s.workers_connected);
  for (size_t w = 0; w < s.workers.size(); ++w) {
    std::cout << absl::StrFormat("  %s: %.1f ms%s\n", s.workers[w].first, s.workers[w].second * 1e3,
                                 w == slowest && s.workers.size() > 1 ? "  <- slowest" : "");
  }
}

// --log-format json: one JSON object a line, {"time", "level", "job" (when the line is about one),
// "msg"}, for log collectors.
class JsonFields final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    // "job <id>..." names the job the line is about.
    if (text.starts_with("job ")) {
      const size_t end = text.find_first_of(" :", 4);
      const std::string_view id = text.substr(4, end == std::string_view::npos ? 0 : end - 4);
      if (id.size() == 36) {
        Append(dest, "\"job\":\"");
        Escape(dest, id);
        Append(dest, "\",");
      }
    }
    Append(dest, "\"msg\":\"");
    Escape(dest, text);
    Append(dest, "\"");
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonFields>();
  }

 private:
  static void Append(spdlog::memory_buf_t& dest, std::string_view s) {
    dest.append(s.data(), s.data() + s.size());
  }
  static void Escape(spdlog::memory_buf_t& dest, std::string_view s) {
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        dest.push_back('\\');
        dest.push_back(c);
      } else if (u < 0x20) {
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\u%04x", u);
        Append(dest, esc);
      } else {
        dest.push_back(c);
      }
    }
  }
};

void UseJsonLogs() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<JsonFields>('*').set_pattern(
      R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%*})");
  spdlog::set_formatter(std::move(formatter));
}

}  // namespace

int Main(int argc, char** argv, const catalogue::AppRegistry& apps) {
  // Debian builds abseil without NDEBUG, which makes every absl::Mutex lock (gRPC's included)
  // look its mutex up in a global lock-order graph: 2-3% of a distributed job's worker CPU (and
  // a third of a small job's gRPC time). The tests keep the check; the commands skip it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  auto logger = spdlog::stderr_color_mt("lockstep");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  if (const char* level = std::getenv("LOCKSTEP_LOG")) {
    spdlog::set_level(spdlog::level::from_str(level));
  }

  CLI::App cli{"lockstep: a Pregel-style bulk synchronous parallel graph engine"};
  cli.require_subcommand(1);
  cli.set_help_all_flag("--help-all", "Print help for every command and app");
  // Options from a TOML file, one section per command ([master], [worker], [run.pagerank]);
  // the command line wins. Kubernetes mounts a job's ConfigMap as this file (k8s/README.md).
  CLI::Option* config = cli.set_config("--config", "",
                                       "read options from a TOML file: a [master] section holds "
                                       "`lockstep master`'s options (before the command)");
  cli.allow_config_extras(CLI::config_extras_mode::error);
  std::string log_format = "text";
  cli.add_option("--log-format", log_format,
                 "text, or json: one JSON object a line (time, level, job, msg) for log "
                 "collectors (before the command)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  int threads = 0;
  auto add_threads = [&](CLI::App* sub) {
    sub->add_option("--threads", threads, "threads for loading and compute (default: all cores)")
        // Not CLI::PositiveNumber: its error for 0 reads "Value 0 not in range 0 to 1.79e308".
        ->check(CLI::Range(1, std::numeric_limits<int>::max()));
  };

  // run <app> ...
  CLI::App* run = cli.add_subcommand("run", "run an app on one machine, on all cores");
  run->require_subcommand(1);
  JobFlags run_flags;
  size_t top = 0;
  const catalogue::AppInfo* chosen = nullptr;
  std::vector<std::unique_ptr<AppOptions>> per_app;
  for (const catalogue::AppInfo& app : apps.apps()) {
    CLI::App* sub = run->add_subcommand(app.name, app.summary);
    for (const auto& alias : app.aliases) sub->alias(alias);
    AddGraphOptions(sub, run_flags);
    add_threads(sub);
    sub->add_option("--out", run_flags.out,
                    "the result file: one 'id value' line per vertex; or a PostgreSQL URI "
                    "postgresql://..., whose table (--out-table) then holds exactly the results, "
                    "replaced in one transaction")
        ->required();
    sub->add_option("--out-table", run_flags.out_table,
                    "PostgreSQL --out: the result table (default: the app's name), created with "
                    "columns id and value when missing");
    sub->add_option("--top", top,
                    "print the N vertices with the largest values on stdout (with a source: the "
                    "largest of the vertices it reaches, never an unreachable one)")
        ->check(kCount);
    per_app.push_back(std::make_unique<AppOptions>());
    AppOptions* options = per_app.back().get();
    for (const catalogue::AppParam& p : app.params) options->Add(sub, p);
    sub->callback([&chosen, &run_flags, info = &app, options] {
      chosen = info;
      options->Collect(run_flags.params);
    });
  }

  // master --app APP ...
  CLI::App* master = cli.add_subcommand("master", "coordinate a job over worker processes");
  MasterFlags master_flags;
  JobFlags master_job;
  master->add_option("--listen", master_flags.listen, "HOST:PORT to serve workers on (port 0: any)")
      ->required();
  // --app, --graph and --out are required unless --checkpoint-dir alone names a job to resume.
  master->add_option("--app", master_flags.app,
                     "the app to run (without it, --checkpoint-dir resumes the unfinished job "
                     "there as recorded)");
  AddGraphOptions(master, master_job);
  master->get_option("--graph")->required(false);
  master->add_option("--out", master_job.out,
                     "the result directory: part-NNNNN files and _SUCCESS, replaced atomically; "
                     "or a PostgreSQL URI postgresql://..., whose table (--out-table) then holds "
                     "exactly the results, replaced in one transaction");
  master->add_option("--out-table", master_job.out_table,
                     "PostgreSQL --out: the result table (default: the app's name), created with "
                     "columns id and value when missing");
  master
      ->add_option("--min-workers", master_flags.min_workers,
                   "workers to wait for (0: every connected worker, at least one)")
      ->check(kCount);
  master->add_option("--max-workers", master_flags.max_workers, "at most this many (0: no cap)")
      ->check(kCount);
  master->add_option("--acquire-timeout", master_flags.acquire_timeout,
                     "give up if the workers are not there within this (0: wait forever)");
  master->add_option("--last-call", master_flags.last_call,
                     "once the minimum is met, wait this long for more workers");
  master
      ->add_option("--peer-timeout", master_flags.peer_timeout,
                   "fail the job when a worker has not entered a barrier this long after it "
                   "opened (the first one includes loading; 0: never)")
      ->capture_default_str();
  master
      ->add_option("--relay", master_flags.relay,
                   "how supersteps' messages travel: direct (worker to worker) or master "
                   "(through the master's streams)")
      ->check(CLI::IsMember({"direct", "master"}))
      ->capture_default_str();
  master
      ->add_option("--max-batch-bytes", master_flags.max_batch_bytes,
                   "the largest batch a worker sends another worker")
      ->check(CLI::Range(uint64_t{4096}, uint64_t{1} << 30))
      ->capture_default_str();
  master->add_option("--save-parts", master_flags.save_parts,
                     "the workers first write the graph's partitioned binary form to this "
                     "directory (shared by all; as `lockstep partition` writes it, without any "
                     "process reading the whole graph), and the job runs on it");
  master->add_option("--checkpoint-dir", master_flags.checkpoint_dir,
                     "write checkpoints of the job's state under this directory, which every "
                     "process reaches (a shared volume), in a directory per job");
  master
      ->add_option("--checkpoint-every", master_flags.checkpoint_every,
                   "take a checkpoint after every this many supersteps (0: none)")
      ->capture_default_str();
  master
      ->add_option("--checkpoint-interval", master_flags.checkpoint_interval,
                   "also take a checkpoint once this long has passed since the last one (0: by "
                   "supersteps only)")
      ->capture_default_str();
  master
      ->add_option("--checkpoint-keep", master_flags.checkpoint_keep,
                   "keep this many of the newest complete checkpoints while the job runs")
      ->check(CLI::Range(uint32_t{1}, uint32_t{1000}))
      ->capture_default_str();
  master
      ->add_option("--max-restarts", master_flags.max_restarts,
                   "a worker lost or silent ends the attempt, not the job, this many times: the "
                   "job goes on from its newest checkpoint (or the start) on the workers there")
      ->capture_default_str();
  master
      ->add_option("--recovery-timeout", master_flags.recovery_timeout,
                   "on recovery, wait this long for workers beyond those in the pool (up to "
                   "--max-workers, or as many as before), then go on with at least one")
      ->capture_default_str();
  master
      ->add_option("--straggler-timeout", master_flags.straggler_timeout,
                   "report a worker that enters a barrier this long after the others (0: three "
                   "times the median of their times, at least 1 s)")
      ->capture_default_str();
  master->add_flag("--replace-stragglers", master_flags.replace_stragglers,
                   "a straggler is lost, not only reported: the attempt ends and the job goes on "
                   "from its newest checkpoint without it (needs --max-restarts)");
  master->add_option("--every", master_flags.every,
                     "run a job every DURATION until SIGTERM (the periodic refresh)");
  master->add_option("--port-file", master_flags.port_file,
                     "write the port the master listens on to this file");
  AddSecurityOptions(master, master_flags.security);
  AddLimitOptions(master, master_flags.limits, master_flags.handshake_timeout, true);
  AddMetricsOption(master, master_flags.metrics_port);
  AppOptions master_app_options;
  for (const catalogue::AppInfo& app : apps.apps()) {
    for (const catalogue::AppParam& p : app.params) master_app_options.Add(master, p);
  }

  // worker --master HOST:PORT
  CLI::App* worker = cli.add_subcommand("worker", "serve jobs of a master until SIGTERM");
  dbsp::WorkerOptions worker_options;
  worker->add_option("--master", worker_options.master, "the master's HOST:PORT")->required();
  add_threads(worker);
  worker->add_option("--max-jobs", worker_options.max_jobs, "exit after this many jobs (0: never)")
      ->check(kCount);
  worker
      ->add_option("--peer-listen", worker_options.peer_listen,
                   "serve the other workers of a job on HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  worker->add_option("--advertise", worker_options.advertise,
                     "the HOST:PORT other workers use to reach this one (default: this host as "
                     "the master sees it, with the --peer-listen port)");
  int health_port = -1;
  worker
      ->add_option("--health-port", health_port,
                   "serve gRPC health checks on this port, for probes (0: any free port)")
      ->check(CLI::Range(0, 65535));
  dbsp::SecurityFlags worker_security;
  AddSecurityOptions(worker, worker_security);
  dbsp::ConnectionLimits worker_limits;
  std::string worker_handshake_timeout = "10s";
  AddLimitOptions(worker, worker_limits, worker_handshake_timeout, false);
  int worker_metrics_port = -1;
  AddMetricsOption(worker, worker_metrics_port);
  worker
      ->add_option("--data-root", worker_options.data_roots,
                   "a directory every graph, output, checkpoint and partitioned-form path of a "
                   "job must lie in, symbolic links resolved (repeatable; without it: any path)")
      ->check(CLI::ExistingDirectory);

  // health HOST:PORT [--service NAME]
  CLI::App* health = cli.add_subcommand(
      "health", "ask a master or worker for its gRPC health status (exit 0 if SERVING)");
  std::string health_target;
  std::string health_service;
  std::string health_timeout = "2s";
  health->add_option("address", health_target, "HOST:PORT of the master or of --health-port")
      ->required();
  health->add_option("--service", health_service,
                     std::string("the service to ask about: '' (the process), ") +
                         dbsp::kMasterHealthService + " or " + dbsp::kWorkerHealthService);
  health->add_option("--timeout", health_timeout, "give up after this long")->capture_default_str();
  dbsp::SecurityFlags health_security;
  AddSecurityOptions(health, health_security);

  // status HOST:PORT [--json]
  CLI::App* status_cmd = cli.add_subcommand(
      "status", "show where a master's running job is (the master's port, workers' credentials)");
  std::string status_target;
  std::string status_timeout = "2s";
  bool status_json = false;
  status_cmd->add_option("address", status_target, "HOST:PORT of the master")->required();
  status_cmd->add_flag("--json", status_json, "one JSON object, for machines");
  status_cmd->add_option("--timeout", status_timeout, "give up after this long")
      ->capture_default_str();
  dbsp::SecurityFlags status_security;
  AddSecurityOptions(status_cmd, status_security);

  // generate kronecker|uniform ...
  CLI::App* generate =
      cli.add_subcommand("generate", "write a synthetic graph (GAP benchmark suite generators)");
  generate::GenerateOptions gen;
  generate->add_option("kind", gen.kind, "kronecker or uniform")
      ->required()
      ->check(CLI::IsMember({"kronecker", "uniform"}));
  generate->add_option("--scale", gen.scale, "2^scale vertices")->required()->check(kCount);
  generate->add_option("--degree", gen.degree, "edges per vertex on average")
      ->capture_default_str()
      ->check(kCount);
  generate->add_option("--seed", gen.seed, "random seed")->capture_default_str()->check(kCount);
  generate->add_flag("--weights", gen.weights, "add integer weights in [1, 255]");
  generate->add_option("--out", gen.out, "output edge list")->required();

  // partition --graph G --out DIR [--parts K]
  CLI::App* partition_cmd = cli.add_subcommand(
      "partition",
      "write a graph once in the partitioned binary form, which jobs (`run`, `master`) then load "
      "with --graph DIR without parsing, each worker reading only its range");
  PartitionFlags part_flags;
  partition_cmd
      ->add_option("--graph", part_flags.job.graph,
                   "input graph: an edge list 'src dst [weight]' (a file, or a directory whose "
                   "files are read as one input), a Graphalytics .properties, or a partitioned "
                   "graph to write again with another --parts")
      ->required()
      ->check(CLI::ExistingPath);
  partition_cmd
      ->add_option("--format", part_flags.job.format,
                   "edgelist or graphalytics (default: by suffix)")
      ->check(CLI::IsMember({"edgelist", "graphalytics"}));
  partition_cmd->add_flag("--undirected", part_flags.job.undirected,
                          "add the reverse of every edge");
  partition_cmd
      ->add_option("--out", part_flags.out,
                   "the directory to write (new, empty, or a partitioned graph to replace)")
      ->required();
  partition_cmd
      ->add_option("--parts", part_flags.parts,
                   "UUID ranges (files) to cut the graph in; any worker count reads any number")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  add_threads(partition_cmd);

  // CLI11 reports an unknown app only as "A subcommand is required"; name it instead.
  if (argc > 2 && std::string_view(argv[1]) == "run" && argv[2][0] != '-' &&
      apps.Find(argv[2]) == nullptr) {
    std::string known;
    for (const catalogue::AppInfo& app : apps.apps())
      known += (known.empty() ? "" : ", ") + app.name;
    spdlog::error("run: unknown app '{}' (apps: {})", argv[2], known);
    return kExitUsage;
  }
  // validate --expected FILE --actual PATH (--rule R | --app A)
  CLI::App* validate =
      cli.add_subcommand("validate", "check a result against an expected output (Graphalytics)");
  validate::ValidateOptions check;
  std::string check_rule, check_app;
  validate->add_option("--expected", check.expected, "the expected 'id value' file")
      ->required()
      ->check(CLI::ExistingFile);
  validate->add_option("--actual", check.actual, "a result file or result directory")
      ->required()
      ->check(CLI::ExistingPath);
  auto* rule = validate->add_option("--rule", check_rule, "exact, equivalence or epsilon");
  auto* by_app = validate->add_option("--app", check_app, "use this app's Graphalytics rule");
  rule->excludes(by_app);
  validate->add_option("--epsilon", check.epsilon, "relative tolerance of the epsilon rule")
      ->capture_default_str();

  // CLI11 reports an unknown command only as "A subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : cli.get_subcommands([](const CLI::App*) { return true; })) {
      known += (known.empty() ? "" : ", ") + sub->get_name();
      found = found || sub->check_name(argv[1]);
    }
    if (!found) {
      spdlog::error("unknown command '{}' (commands: {})", argv[1], known);
      return kExitUsage;
    }
  }
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // CLI11 names the key, not the file it came from.
    spdlog::error("--config {}: {}", config->as<std::string>(), e.what());
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    // Prints the help (exit 0) or the error; CLI11's own codes (105, 109, ...) mean nothing to a
    // caller, so every error is 2.
    return cli.exit(e) == 0 ? 0 : kExitUsage;
  }
  std::optional<tbb::global_control> parallelism;
  if (threads > 0) {
    parallelism.emplace(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
  }
  if (log_format == "json") UseJsonLogs();
  InstallSignalHandlers();
  dbsp::RouteGrpcLogs();

  auto dispatch = [&]() -> int {
    if (run->parsed() && chosen != nullptr) return RunLocal(*chosen, run_flags, top);
    if (master->parsed()) {
      master_app_options.Collect(master_job.params);
      std::vector<std::string> given;
      for (const CLI::Option* o : master->get_options()) {
        if (o->count() > 0) given.push_back(o->get_name());
      }
      return RunMaster(apps, master_flags, master_job, given);
    }
    if (worker->parsed()) {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
      // One malloc arena for the whole worker: with one per thread, what the gRPC threads and the
      // job thread free stays resident in separate heaps. Measured at Kronecker scale 20: peak RSS
      // 7-13 MB lower per worker of 4 (1 thread each), 16-23 MB of 2 (2 threads each), the same
      // CPU (docs/design.md §4).
      mallopt(M_ARENA_MAX, 1);
      // Freed memory stays in the heap for the next round to reuse: the load's rounds allocate
      // and free buffers of the same few MB each round, which glibc's dynamic thresholds would
      // otherwise hand back to the kernel (trimming the heap's top, or mapping a buffer afresh)
      // only for the next round to fault its pages in again. Up to 32 MB from the heap (glibc's
      // largest dynamic threshold), and no trimming on free: ReturnFreedMemory() gives the free
      // memory back between phases, before each peak.
      mallopt(M_MMAP_THRESHOLD, 32 << 20);
      mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
      auto metrics = StartMetrics(worker_metrics_port, [] { return g_metrics.Render("worker"); });
      if (const int* code = std::get_if<int>(&metrics)) return *code;
      worker_options.metrics = &g_metrics;
      RaiseFileLimit();
      auto security = LoadSecurity(worker_security, worker_limits, worker_handshake_timeout);
      if (const int* code = std::get_if<int>(&security)) return *code;
      worker_options.security = std::get<std::shared_ptr<const dbsp::Security>>(security);
      if (health_port >= 0) {
        worker_options.health_address = "0.0.0.0:" + std::to_string(health_port);
        worker_options.health_started = [](int port) {
          spdlog::info("health service on port {}", port);
        };
      }
      // A job's PostgreSQL graph is read through the db module (docs/design.md §10).
      worker_options.attach_graph = db::AttachSource;
      worker_options.uri_paths = db::UriPaths;
      worker_options.ship_results = [](const bsp::JobDetails& d, const std::string& results) {
        auto stage = d.output_options.find(db::kStageOption);
        if (!db::IsPostgresUri(d.output) || stage == d.output_options.end()) {
          return absl::InvalidArgumentError("job details: results for a sink this worker lacks");
        }
        return db::CopyIntoStage(d.output, stage->second, results);
      };
      // The process ends here anyway: a teardown gRPC cannot finish does not keep it alive.
      worker_options.on_stuck_teardown = [limit = worker_options.teardown_limit](
                                             const absl::Status& result) {
        spdlog::warn("gRPC did not shut down within {} ms after the last job; exiting without it",
                     limit.count());
        if (!result.ok()) spdlog::error("{}", Message(result));
        spdlog::default_logger()->flush();
        std::_Exit(result.ok() ? 0 : kExitFailed);
      };
      auto st = dbsp::ServeWorker(apps, worker_options, g_stop);
      return st.ok() ? 0 : Fail(st);
    }
    if (validate->parsed()) {
      if (check_rule.empty() && check_app.empty()) {
        return UsageError(absl::InvalidArgumentError("validate: give --rule or --app"));
      }
      auto rule_to_validate = RuleToValidate(apps, check_rule, check_app);
      if (!rule_to_validate.ok()) return UsageError(rule_to_validate.status());
      check.rule = *rule_to_validate;
      auto report = validate::Validate(check);
      if (!report.ok()) return Fail(report.status());
      std::cout << report->text;
      return report->mismatches == 0 ? 0 : kExitFailed;
    }
    if (health->parsed()) {
      auto timeout = ParseDuration(health_timeout, "--timeout");
      if (!timeout.ok()) return UsageError(timeout.status());
      auto security = LoadSecurity(health_security);
      if (const int* code = std::get_if<int>(&security)) return *code;
      auto status = dbsp::CheckHealth(health_target, health_service, *timeout,
                                      *std::get<std::shared_ptr<const dbsp::Security>>(security));
      if (!status.ok()) return Fail(status.status());
      std::cout << *status << "\n";
      return *status == "SERVING" ? 0 : kExitFailed;
    }
    if (status_cmd->parsed()) {
      auto timeout = ParseDuration(status_timeout, "--timeout");
      if (!timeout.ok()) return UsageError(timeout.status());
      auto security = LoadSecurity(status_security);
      if (const int* code = std::get_if<int>(&security)) return *code;
      auto s = dbsp::QueryStatus(status_target, *timeout,
                                 *std::get<std::shared_ptr<const dbsp::Security>>(security));
      if (!s.ok()) return Fail(s.status());
      PrintStatus(*s, status_json);
      return 0;
    }
    if (partition_cmd->parsed()) return RunPartition(part_flags);
    if (generate->parsed()) {
      auto st = generate::Generate(gen);
      // Generate checks its options first; everything after is the work failing.
      if (absl::IsInvalidArgument(st)) return UsageError(st);
      return st.ok() ? 0 : Fail(st);
    }
    return kExitUsage;
  };
  // A job's steps turn running out of memory into a failed job (ProgramRunner, Executor). This is
  // for what is left (printing a result, a thread that cannot start), so that no exception ends
  // the process with an abort and exit code 134.
  try {
    return dispatch();
  } catch (const std::bad_alloc&) {
    spdlog::error("out of memory");
  } catch (const std::exception& e) {
    spdlog::error("{}", bsp::SanitizeForLog(e.what(), 200));
  }
  return kExitFailed;
}

}  // namespace lockstep::cli
