#include "database.h"

#include <algorithm>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <chrono>
#include <map>
#include <utility>

#include "absl/strings/str_format.h"
#include "lockstep/db/stage.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"
#include "timing.h"

namespace lockstep::cli {
namespace {

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

// The row of lockstep_jobs that a master's job record (JSON) gives.
db::JobRecord RecordOf(const std::string& record, uint64_t vertices) {
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
  return r;
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
    const db::JobRecord r = RecordOf(record, vertices);
    auto published = stages->Publish(*options, staged.at(db::kStageOption), vertices, r);
    if (!published.ok()) return published.status();
    if (*published == db::Publication::kPublishedBefore) {
      stages->Drop(flags.out, staged.at(db::kStageOption));
      spdlog::warn("job {} was published before: table {} left as it was", r.job_id,
                   options->table);
    }
    return absl::OkStatus();
  };
  sink.discard = [out = flags.out, stages](const std::map<std::string, std::string>& staged) {
    if (auto it = staged.find(db::kStageOption); it != staged.end()) stages->Drop(out, it->second);
  };
  return sink;
}

}  // namespace

absl::StatusOr<std::string> PublishRunResults(const catalogue::AppInfo& app, const JobFlags& flags,
                                              const std::string& results, db::JobRecord record) {
  record.job_id = NewRunId();
  auto sink = SinkFor(app, flags);
  if (!sink.ok()) return sink.status();
  const auto publish_start = std::chrono::steady_clock::now();
  if (auto published = db::PublishResults(*sink, results, record); !published.ok()) {
    return published.status();
  }
  return absl::StrFormat("table %s (job %s), published in %.3f s", sink->table, record.job_id,
                         SecondsSince(publish_start));
}

void AttachDatabase(dbsp::JobSpec& spec) {
  const runner::JobDetails& d = spec.details;
  if (db::IsPostgresUri(d.work.graph.path)) spec.ephemeral_graph_options = {db::kSnapshotOption};
  if (!db::IsPostgresUri(d.work.output)) return;
  JobFlags flags;
  flags.graph = d.work.graph.path;
  if (db::IsPostgresUri(d.work.graph.path))
    flags.tables = db::TablesFromOptions(d.work.graph.options);
  flags.out = d.work.output;
  auto table = d.work.output_options.find(kTableOption);
  if (table != d.work.output_options.end()) flags.out_table = table->second;
  spec.sink = DatabaseSink(*spec.app, flags);
}

absl::StatusOr<std::unique_ptr<db::ExportedSnapshot>> ExportSnapshot(dbsp::JobSpec& spec) {
  if (!db::IsPostgresUri(spec.details.work.graph.path)) return nullptr;
  auto exported = db::ExportedSnapshot::Export(
      spec.details.work.graph.path, db::TablesFromOptions(spec.details.work.graph.options));
  if (!exported.ok()) return exported.status();
  spec.details.work.graph.options[db::kSnapshotOption] = (*exported)->id();
  spdlog::info("the job reads snapshot {} of the database", (*exported)->id());
  return exported;
}

void AttachDatabase(dbsp::WorkerOptions& options) {
  options.attach_graph = db::AttachSource;
  options.uri_paths = db::UriPaths;
  options.ship_results = [](const runner::JobDetails& d, const std::string& results) {
    auto stage = d.work.output_options.find(db::kStageOption);
    if (!db::IsPostgresUri(d.work.output) || stage == d.work.output_options.end()) {
      return absl::InvalidArgumentError("job details: results for a sink this worker lacks");
    }
    return db::CopyIntoStage(d.work.output, stage->second, results);
  };
}

}  // namespace lockstep::cli
