#include "lockstep/cli/job_params.h"

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/load/graphalytics.h"
#include "lockstep/load/input_form.h"
#include "lockstep/load/partitioned_form.h"

namespace lockstep::cli {

absl::StatusOr<JobParams> MakeJobParams(const catalogue::AppInfo& app,
                                        const bsp::GraphSource& graph,
                                        const std::map<std::string, std::string>& flags) {
  JobParams job;
  for (const catalogue::AppParam& p : app.params) job.values[p.name] = p.default_value;
  if (load::IsPartitionedForm(graph.path)) {
    // A partitioned graph keeps the properties of the Graphalytics graph it was written from.
    auto facts = load::ReadPartitionedFormFacts(graph.path);
    if (!facts.ok()) return facts.status();
    if (facts->format == "graphalytics") {
      for (const auto& [param, property] :
           catalogue::ParamsFromGraphalytics(app, facts->properties, job.values)) {
        job.from_file[param] = absl::StrCat(graph.path, "/", load::kFormManifestName,
                                            ": Graphalytics property ", property);
      }
    }
  } else if (load::IsGraphalytics(graph)) {
    auto lines = load::ReadGraphalyticsPropertyLines(graph.path);
    if (!lines.ok()) return lines.status();
    std::map<std::string, std::string> properties;
    for (const auto& [key, line] : *lines) properties[key] = line.value;
    for (const auto& [param, property] :
         catalogue::ParamsFromGraphalytics(app, properties, job.values)) {
      const load::PropertyLine& line = lines->at(property);
      job.from_file[param] = absl::StrCat(graph.path, ":", line.line, ": ", line.key);
    }
  }
  for (const auto& [name, value] : flags) {
    job.values[name] = value;
    job.from_file.erase(name);
  }
  return job;
}

NamedError NameParam(const catalogue::AppInfo& app,
                     const std::map<std::string, std::string>& from_file,
                     const absl::Status& status) {
  const std::string message(status.message());
  // The engine says which limit a job hit; the command line says which flag raises it.
  if (absl::IsDeadlineExceeded(status) && message.ends_with("(max_supersteps)")) {
    return {absl::Status(status.code(), absl::StrCat(message.substr(0, message.size() - 16),
                                                     "(raise --max-supersteps if it needs more)"))};
  }
  for (const catalogue::AppParam& p : app.params) {
    if (!message.starts_with(p.name + ":")) continue;
    auto file = from_file.find(p.name);
    if (file == from_file.end()) return {absl::Status(status.code(), absl::StrCat("--", message))};
    return {absl::Status(status.code(), absl::StrCat(file->second, message.substr(p.name.size()))),
            true};
  }
  return {status};
}

}  // namespace lockstep::cli
