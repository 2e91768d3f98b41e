#include "job_flags.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "exit_codes.h"
#include "flags.h"
#include "lockstep/cli/job_params.h"
#include "lockstep/load/input_form.h"

namespace lockstep::cli {
namespace {

// --graph: a path that exists, or a PostgreSQL URI (checked when the job is made).
const CLI::Validator kGraphPath(
    [](std::string& text) -> std::string {
      return db::IsPostgresUri(text) ? std::string() : CLI::ExistingPath(text);
    },
    "PATH|URI");

void AddTableOptions(CLI::App* sub, JobFlags& flags) {
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
}

// A PostgreSQL --graph or --out: its URI is checked, and the flags that apply to files are not
// given (nor the --db-* ones without it).
absl::Status CheckDatabaseFlags(const JobFlags& flags) {
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
  return absl::OkStatus();
}

// Checks what the command line says about the job before anything is read: an app option given
// to another app, a flag that does not apply to the graph's format, app parameters that are wrong
// whatever the graph (JobRunner::CheckParams).
absl::Status CheckJobFlags(const catalogue::AppInfo& app, const JobFlags& flags,
                           const runner::JobDetails& job) {
  for (const auto& [name, value] : flags.params) {
    const bool known = std::any_of(app.params.begin(), app.params.end(),
                                   [&](const catalogue::AppParam& p) { return p.name == name; });
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " is not an option of app ", app.name));
    }
  }
  if (auto st = CheckDatabaseFlags(flags); !st.ok()) return st;
  if (load::IsPartitionedForm(flags.graph) && !flags.format.empty()) {
    return absl::InvalidArgumentError(
        "--format does not apply to a partitioned graph (a directory written by `lockstep "
        "partition`)");
  }
  if (auto st = CheckDirectionFlags(flags.undirected, flags.symmetric, flags.graph, flags.format);
      !st.ok()) {
    return st;
  }
  return app.make_runner(nullptr)->CheckParams(job.work);
}

// The job an app runs: defaults, then Graphalytics properties, then flags, with which parameters
// a file of the graph gave.
absl::StatusOr<MadeJob> MakeJobDetails(const catalogue::AppInfo& app, const JobFlags& flags) {
  MadeJob made;
  runner::JobDetails& job = made.details;
  job.work.job_id = "local";
  job.work.app = app.name;
  job.work.graph = {flags.graph, flags.format, flags.undirected || flags.symmetric,
                    flags.symmetric};
  if (db::IsPostgresUri(flags.graph)) {
    // A PostgreSQL URI: the graph reads `tables` through the db module.
    job.work.graph.options = db::TablesAsOptions(flags.tables);
    job.work.graph.text = db::OpenSource(job.work.graph.path, flags.tables);
  }
  job.work.output = flags.out;
  job.work.max_supersteps = flags.max_supersteps;
  job.work.trace_vertices = flags.trace_vertices;
  auto params = MakeJobParams(app, job.work.graph, flags.params);
  if (!params.ok()) return params.status();
  job.work.params = std::move(params->values);
  made.from_file = std::move(params->from_file);
  return made;
}

}  // namespace

void AddGraphOptions(CLI::App* sub, JobFlags& flags) {
  sub->add_option("--graph", flags.graph,
                  "input graph: an edge list 'src dst [weight]' (a file, or a directory whose "
                  "files are read as one input), a Graphalytics .properties, a directory "
                  "written by `lockstep partition`, or a PostgreSQL URI postgresql://... (its "
                  "password from PGPASSWORD or PGPASSFILE, never in the URI)")
      ->required()
      ->check(kGraphPath);
  AddTableOptions(sub, flags);
  sub->add_option("--format", flags.format, "edgelist or graphalytics (default: by suffix)")
      ->check(CLI::IsMember({"edgelist", "graphalytics"}));
  AddDirectionFlags(sub, flags.undirected, flags.symmetric);
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

void AppOptions::Add(CLI::App* sub, const catalogue::AppParam& p) {
  for (const auto& [name, opt] : options) {
    if (name == p.name) return;  // shared by two apps (the master lists all apps' options)
  }
  storage.push_back(std::make_unique<std::string>(p.default_value));
  CLI::Option* o = sub->add_option("--" + p.name, *storage.back(), p.help);
  if (!p.default_value.empty()) o->default_str(p.default_value);
  options.emplace_back(p.name, o);
}

std::map<std::string, std::string> AppOptions::Given() const {
  std::map<std::string, std::string> given;
  for (const auto& [name, opt] : options) {
    if (opt->count() > 0) given[name] = opt->as<std::string>();
  }
  return given;
}

std::variant<MadeJob, JobError> MakeJob(const catalogue::AppInfo& app, const JobFlags& flags) {
  auto made = MakeJobDetails(app, flags);
  if (!made.ok()) return JobError{made.status(), kExitFailed};
  if (auto st = CheckJobFlags(app, flags, made->details); !st.ok()) {
    const NamedError e = NameParam(app, made->from_file, st);
    return JobError{e.status, e.in_file ? kExitFailed : kExitUsage};
  }
  return *std::move(made);
}

absl::Status AsFlagError(const catalogue::AppInfo& app, const absl::Status& status) {
  return NameParam(app, {}, status).status;
}

}  // namespace lockstep::cli
