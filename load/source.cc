// The one place that resolves a graph's input form (source.h) and hands it to that form's reader.
#include "lockstep/load/source.h"

#include <sys/stat.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "lockstep/load/graphalytics.h"
#include "lockstep/load/partitioned_form.h"
#include "lockstep/load/partitioned_load.h"
#include "text/parse.h"
#include "text/text_graph.h"

namespace lockstep::load {

using bsp::GraphInput;
using bsp::GraphSource;
using bsp::WeightUse;

absl::StatusOr<GraphInput> LoadGraph(const GraphSource& source, WeightUse weights) {
  auto form = FormOf(source);
  if (!form.ok()) return form.status();
  switch (*form) {
    case InputForm::kPartitioned:
      return LoadPartitionedForm(source, weights);
    case InputForm::kTable:
      return text::LoadTable(source, weights);
    case InputForm::kGraphalytics:
      return text::LoadGraphalytics(source, weights);
    case InputForm::kEdgeList:
      break;
  }
  return text::LoadEdgeList(source, weights);
}

absl::StatusOr<PartitionInput> LoadPartition(const GraphSource& source, WeightUse weights,
                                             bsp::Exchange& exchange, bool in_edges,
                                             const PartitionLoadOptions& options) {
  // The partitioned form: each worker reads the shard files of its own partition. Text, tables
  // and an unknown format (which every worker then refuses alike) go to the shares' load.
  if (IsPartitionedForm(source.path)) {
    return LoadPartitionFromForm(source, weights, exchange, in_edges);
  }
  return LoadPartitionFromText(source, weights, exchange, in_edges, options);
}

uint64_t EstimateLoadBytes(const GraphSource& source) {
  auto size_of = [](const std::string& path) -> uint64_t {
    struct stat info;
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode)
               ? static_cast<uint64_t>(info.st_size)
               : 0;
  };
  uint64_t bytes = 0;
  if (IsPartitionedForm(source.path)) {
    // The mapped files and the arrays laid out from them.
    auto facts = ReadPartitionedFormFacts(source.path);
    return facts.ok() ? 2 * facts->shard_bytes : 0;
  }
  if (IsGraphalytics(source)) {
    auto props = ReadGraphalyticsProperties(source.path);
    if (!props.ok()) return 0;
    for (const char* key : {"vertex-file", "edge-file"}) {
      auto it = props->find(key);
      if (it == props->end()) continue;
      bytes += size_of(text::FileBeside(source.path, it->second));
    }
  } else if (text::IsDirectory(source.path)) {
    auto files = text::ListEdgeFiles(source.path);
    if (!files.ok()) return 0;
    for (const text::InputFile& f : *files) bytes += f.size;
  } else {
    bytes = size_of(source.path);
  }
  // The text, the IDs parsed from it (up to 16 bytes per short line) and the edge arrays.
  return 3 * bytes;
}

}  // namespace lockstep::load
