#include "lockstep/load/input_form.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"

namespace lockstep::load {

absl::StatusOr<InputForm> FormOf(const bsp::GraphSource& source) {
  if (IsPartitionedForm(source.path)) return InputForm::kPartitioned;
  if (source.text) return InputForm::kTable;
  if (IsGraphalytics(source)) return InputForm::kGraphalytics;
  if (source.format.empty() || source.format == "edgelist") return InputForm::kEdgeList;
  return absl::InvalidArgumentError(absl::StrCat("graph format: unknown format '", source.format,
                                                 "' (expected edgelist or graphalytics)"));
}

bool IsGraphalytics(const bsp::GraphSource& source) {
  return source.format == "graphalytics" ||
         (source.format.empty() && source.path.ends_with(".properties"));
}

bool IsPartitionedForm(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode) &&
         ::stat((path + "/" + kFormManifestName).c_str(), &info) == 0;
}

bool IsFormFileName(std::string_view name) {
  const std::string_view manifest = kFormManifestName;
  return name == manifest ||
         (name.size() == manifest.size() + 4 && name.starts_with(manifest) &&
          name.ends_with(".tmp")) ||
         ((name.starts_with("part-") || name.starts_with("names-")) && name.ends_with(".lsp"));
}

}  // namespace lockstep::load
