#pragma once

#include "lockstep/bsp/app.h"

namespace lockstep::apps::common {

// The UUID of the source parameter, checked against the graph when the process knows the graph
// (the distributed master loads none). Apps that call it name the source in NamedVertices.
absl::StatusOr<bsp::VertexId> SourceVertex(const bsp::Params& params, const bsp::GraphFacts& facts);

}  // namespace lockstep::apps::common
