#pragma once

#include "lockstep/bsp/app.h"

namespace lockstep::apps::common {

// The UUID of the source parameter, checked against the graph when the process has the graph (the
// distributed master loads none).
absl::StatusOr<bsp::VertexId> SourceVertex(const bsp::Params& params, const bsp::GraphInput& input);

// The names of all vertices by global index, for apps whose values are vertex IDs (labels).
using Names = std::shared_ptr<const std::vector<std::string>>;
inline Names NamesOf(const bsp::GraphInput& input) {
  return std::make_shared<const std::vector<std::string>>(input.external_ids);
}

}  // namespace lockstep::apps::common
