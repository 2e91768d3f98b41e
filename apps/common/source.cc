#include "lockstep/apps/common/source.h"

#include <algorithm>

namespace lockstep::apps::common {

absl::StatusOr<bsp::VertexId> SourceVertex(const bsp::Params& params,
                                           const bsp::GraphFacts& facts) {
  const std::string source = bsp::ParamString(params, "source");
  if (source.empty()) return bsp::ParamError("source", "a source vertex is required");
  if (facts.Lacks(source)) {
    return bsp::ParamError("source", absl::StrCat("vertex '", source, "' is not in the graph"));
  }
  return bsp::VertexIdFromExternal(source);
}

}  // namespace lockstep::apps::common
