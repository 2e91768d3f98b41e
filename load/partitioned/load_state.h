// The state of a partitioned load (docs/design.md §4.4), in the pieces its phases hand each other:
// who this worker is (LoadFrame), what the input is (InputPlan), what its shares read
// (ShareTally) and what it received (Received). Each phase takes the pieces it reads or fills
// explicitly. Private to the load library.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/load_stats.h"
#include "lockstep/load/partition_input.h"
#include "partitioned/blocks.h"
#include "partitioned/failures.h"
#include "partitioned/raw_ids.h"
#include "partitioned/vertex_table.h"

namespace lockstep::load::partitioned {

// Who this worker is in the load and what it is asked: fixed for the whole load.
struct LoadFrame {
  const bsp::GraphSource& source;
  bsp::WeightUse use;
  bsp::Exchange& exchange;
  // The program needs in-edges: each edge also goes to its target's owner.
  bool in_edges;
  PartitionLoadOptions options;
  uint32_t rank;
  uint32_t size;

  bool keep_weights() const { return use != bsp::WeightUse::kIgnore; }
};

// What the input is, as the setup found it (the same on every worker).
struct InputPlan {
  // Its vertices are listed (Graphalytics' .v file, or a vertex table).
  bool graphalytics = false;
  // The edges are sorted by (source, target, weight) once ranked: a table's rows have no order.
  bool sorted = false;
  bool symmetric = false;
  // A table's vertex share, opened when the setup looked for the vertex table.
  std::unique_ptr<bsp::GraphTextShare> vertex_share;
  std::string vertex_file, edge_file;
  std::map<std::string, std::string> properties;
};

// What this worker's shares of the input read, which the agreement on failures gathers
// (agreement.h): its first failure of each kind, and the line counts that place every share's
// lines in the whole file.
struct ShareTally {
  Failure failure;
  // A bad vertex line somewhere ended the vertex rounds (and the load before the edges).
  bool vertex_stopped = false;
  uint64_t vertex_lines = 0, edge_lines = 0;
  uint64_t first_with_weight = 0, first_without_weight = 0;  // lines in this share
  // An edge input that is a directory: its files, and the lines of this share in each.
  bool edge_dir = false;
  std::vector<std::string> edge_paths;
  std::vector<std::pair<uint32_t, uint64_t>> edge_share_lines;
};

// What this worker received: the vertices it knows, the stored edges per sender (senders are
// shares and shares are in file order, so the concatenation is in input order), and the state of
// receiving integer IDs raw.
struct Received {
  explicit Received(uint32_t senders) : from(senders) {}

  VertexTable table;
  std::vector<EdgesFrom> from;
  uint64_t received_ends = 0;  // edge ends received so far (bounds the direct table)
  uint64_t text_read = 0;      // bytes of its shares read so far (bounds raw.part)
  RawIds raw;
};

}  // namespace lockstep::load::partitioned
