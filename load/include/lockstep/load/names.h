#pragma once

// The names of a graph loaded by partition (docs/design.md §4.4): no process holds every vertex's
// external ID. Each worker keeps those of one range of global indexes (RankNames), and the
// collectives below turn indexes into names, or names into "is it in the graph", by asking the
// workers that hold them.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/topology.h"

namespace lockstep::load {

// The external IDs of one worker's range of global indexes: a partitioned load ranks all vertices
// by a distributed sort, and each worker keeps the sorted names of one contiguous range, so that a
// global index (a label) can be turned back into its name without any process holding all names.
class RankNames {
 public:
  RankNames() = default;
  RankNames(std::vector<uint64_t> range_starts, uint32_t rank, std::vector<uint64_t> ints,
            std::vector<std::string> texts)
      : starts_(std::move(range_starts)),
        rank_(rank),
        ints_(std::move(ints)),
        texts_(std::move(texts)) {}

  // starts()[p]..starts()[p + 1] is worker p's range; size workers + 1.
  const std::vector<uint64_t>& starts() const { return starts_; }
  // The worker that holds the name of global index g.
  uint32_t HolderOf(uint64_t g) const;
  // Appends the name of global index g, which must be in this worker's range.
  void Append(uint64_t g, std::string& out) const;
  uint64_t first() const { return starts_.empty() ? 0 : starts_[rank_]; }
  uint64_t size() const { return ints_.size() + texts_.size(); }

 private:
  std::vector<uint64_t> starts_;
  uint32_t rank_ = 0;
  std::vector<uint64_t> ints_;      // the range's integer IDs, which sort before all others
  std::vector<std::string> texts_;  // then the others
};

// Collective: for each of `names` (the same list on every worker), whether the graph has a vertex
// with that external ID. Each worker answers for its own vertices.
absl::StatusOr<std::vector<bool>> HaveVertices(const bsp::Topology& topology,
                                               bsp::Exchange& exchange,
                                               const std::vector<std::string>& names);

// Collective: the external IDs of `globals` (global indexes, any subset on each worker), asked of
// the workers that hold their ranges.
absl::StatusOr<absl::flat_hash_map<uint32_t, std::string>> ResolveNames(
    const RankNames& names, bsp::Exchange& exchange, std::vector<uint32_t> globals);

}  // namespace lockstep::load
