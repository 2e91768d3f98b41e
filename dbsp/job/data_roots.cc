#include "job/data_roots.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/text.h"
#include "lockstep/dbsp/settings.h"
#include "lockstep/load/graphalytics.h"
#include "lockstep/load/input_form.h"

namespace lockstep::dbsp::job {
namespace {

// Whether `path` lies in one of `roots` (canonical directories) once its symbolic links are
// resolved.
bool Within(const std::string& path, const std::vector<std::filesystem::path>& roots) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::weakly_canonical(path, ec);
  if (ec) return false;
  for (const std::filesystem::path& root : roots) {
    const std::filesystem::path rel = real.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != "..") return true;
  }
  return false;
}

// A database URI names no file here (the graph and the output may be one); anything else is a
// path, however it looks ("x://../.." is the directory "x:" and then up).
bool IsDatabase(const std::string& p) {
  return p.starts_with("postgresql://") || p.starts_with("postgres://");
}

using NamedPaths = std::vector<std::pair<std::string, std::string>>;  // (what, path)

// The paths a database URI of the job has its client use (a password file, keys, certificates,
// socket directories); one that no root could confine refuses the job.
absl::StatusOr<NamedPaths> UriPaths(const runner::JobDetails& d, const WorkerOptions& options) {
  NamedPaths paths;
  const std::pair<const char*, const std::string*> uris[] = {{"graph", &d.work.graph.path},
                                                             {"output", &d.work.output}};
  for (const auto& [what, uri] : uris) {
    if (!IsDatabase(*uri) || !options.uri_paths) continue;
    auto named = options.uri_paths(*uri);
    if (!named.ok()) {
      return absl::PermissionDeniedError(absl::StrCat("the job's ", what, " URI ",
                                                      named.status().message(), ": refused under ",
                                                      SettingName(Setting::kDataRoot)));
    }
    for (auto& [keyword, path] : *named) {
      paths.emplace_back(absl::StrCat(what, " URI's ", keyword), path);
    }
  }
  return paths;
}

// A Graphalytics graph's vertex and edge files, which its properties name (absolute, or beside
// the properties file); properties that cannot be read fail the job's load, which says why.
NamedPaths GraphalyticsPaths(const runner::JobDetails& d,
                             const std::vector<std::filesystem::path>& roots) {
  NamedPaths paths;
  if (IsDatabase(d.work.graph.path) || !load::IsGraphalytics(d.work.graph) ||
      !Within(d.work.graph.path, roots)) {
    return paths;
  }
  auto props = load::ReadGraphalyticsProperties(d.work.graph.path);
  if (!props.ok()) return paths;
  const std::string dir = std::filesystem::path(d.work.graph.path).parent_path().string();
  for (const char* key : {"vertex-file", "edge-file"}) {
    if (auto it = props->find(key); it != props->end()) {
      paths.emplace_back(
          std::string("graph's ") + key,
          it->second.starts_with("/") ? it->second : (dir.empty() ? "." : dir) + "/" + it->second);
    }
  }
  return paths;
}

}  // namespace

absl::Status ConfinePaths(const runner::JobDetails& d,
                          const std::vector<std::filesystem::path>& roots,
                          const WorkerOptions& options) {
  if (roots.empty()) return absl::OkStatus();
  NamedPaths paths = {{"checkpoint directory", d.resume.checkpoint_dir},
                      {"checkpoint", d.resume.restore_from},
                      {"partitioned form", d.save_form}};
  if (!IsDatabase(d.work.graph.path)) paths.emplace_back("graph", d.work.graph.path);
  if (!IsDatabase(d.work.output)) paths.emplace_back("output", d.work.output);
  auto uri_paths = UriPaths(d, options);
  if (!uri_paths.ok()) return uri_paths.status();
  paths.insert(paths.end(), uri_paths->begin(), uri_paths->end());
  for (auto& named : GraphalyticsPaths(d, roots)) paths.push_back(std::move(named));
  for (const auto& [what, path] : paths) {
    if (path.empty()) continue;
    if (!Within(path, roots)) {
      return absl::PermissionDeniedError(
          absl::StrCat("the job's ", what, " ", bsp::SanitizeForLog(path, 200),
                       " is outside this worker's ", SettingName(Setting::kDataRoot)));
    }
  }
  return absl::OkStatus();
}

// The canonical forms of --data-root's directories.
absl::StatusOr<std::vector<std::filesystem::path>> DataRoots(const std::vector<std::string>& dirs) {
  std::vector<std::filesystem::path> roots;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::filesystem::path root = std::filesystem::canonical(dir, ec);
    if (ec || !std::filesystem::is_directory(root)) {
      return absl::InvalidArgumentError(absl::StrCat(SettingName(Setting::kDataRoot), ": ",
                                                     bsp::SanitizeForLog(dir, 200),
                                                     " is not a directory"));
    }
    roots.push_back(std::move(root));
  }
  return roots;
}

}  // namespace lockstep::dbsp::job
