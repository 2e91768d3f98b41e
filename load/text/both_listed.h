// `--symmetric` (GraphSource::both_listed): an edge list that already holds every edge in both
// directions, as the GAP converter writes a symmetric graph. Read with `--undirected` it would
// hold each edge twice over; read as directed, its in-edges would be a second copy of its
// out-edges. The load keeps one edge of each pair, the one from the lower vertex (global indexes
// follow the external IDs, so the choice does not depend on the line order), and every self-loop
// as listed, and then stores the graph as an undirected input does (GraphInput::symmetric).
//
// It first checks that every other edge is listed as often as its reverse with the same weight:
// two sums over the edges of keyed 64-bit hashes of (lower end, upper end, weight), added for an
// edge from its lower end and subtracted for one from its upper end, must both be zero. The keys
// are drawn afresh by each process, so an unbalanced input passes only by chance, with odds
// far below 2^-64 (the weights count only when the app reads them: without, they are not loaded);
// the check costs a pass over the edges and no memory. Only when a sum is not zero are the edges
// sorted, to name the first one in input order without its reverse (24 bytes an edge, and the
// text parsed again for its line: an error path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "lockstep/bsp/graph_input.h"

namespace lockstep::load::text {

// An edge listed more often than its reverse with the same weight.
struct Unpaired {
  size_t edge = 0;        // its stored index: the first such edge in input order
  uint64_t listed = 0;    // how often it is listed (the same ends and weight)
  uint64_t reversed = 0;  // how often its reverse is
};

// The first edge of `g` (as read, not yet symmetric) that its reverse does not balance, or none.
std::optional<Unpaired> FindUnpaired(const bsp::GraphInput& g);

// Keeps the edges from their lower end and the self-loops, in input order, and marks `g`
// symmetric (bsp::MakeSymmetric).
void KeepLowerEnds(bsp::GraphInput& g);

// Both, in turn. An unpaired edge is an error that `error_at(stored index, message)` places (a
// file's line, a table's row).
absl::Status FoldBothListed(
    bsp::GraphInput& g, const std::function<absl::Status(size_t, const std::string&)>& error_at);

}  // namespace lockstep::load::text
