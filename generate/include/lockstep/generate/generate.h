#pragma once

// Synthetic graph generators behind `lockstep generate kronecker|uniform`.
//
// The generators follow the GAP Benchmark Suite (Beamer, Asanović, Patterson, "The GAP
// Benchmark Suite", arXiv:1508.03619; sbeamer/gapbs src/generator.h): 2^scale vertices,
// 2^scale * degree generated edges, either uniform random endpoints or R-MAT/Kronecker with the
// Graph500 parameters A=0.57, B=0.19, C=0.19 followed by a random relabelling of the vertices.
// Edges are generated in fixed-size blocks, each with its own seed, so the result does not depend
// on the number of threads. Unlike GAP, which hands its raw edge list to the graph builder, the
// output here is already cleaned: self-loops dropped, each undirected edge written once as
// `u v` with u < v, sorted by (u, v), no duplicates. The random streams are our own
// (xoshiro256** and splitmix64), so the graphs are not GAP's graphs edge for edge, but they are
// the same on every platform and thread count. `permute` relabels the finished graph by a second
// permutation from its own stream, for uniform graphs too; the weights follow their edges.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lockstep::generate {

struct GenerateOptions {
  std::string kind;  // "kronecker" or "uniform".
  int scale = 0;     // 2^scale vertices, ids 0..2^scale-1; 1..30.
  int degree = 16;   // Generated edges per vertex, before self-loops and duplicates are dropped.
  uint64_t seed = 27491095;
  bool weights = false;  // Adds a weight in [1, 255] to every edge.
  // Relabels the vertices once more by a random permutation drawn from seed, as the graphs the GAP
  // converter and Graphalytics publish are: the same edges (and weights) up to relabelling.
  bool permute = false;
  std::string out;  // Output file; replaced atomically.
};

// One undirected edge, u < v. w is in [1, 255] when weights were asked for, else 0.
struct GeneratedEdge {
  uint32_t u, v, w;

  friend bool operator==(const GeneratedEdge&, const GeneratedEdge&) = default;
};

// Generates the graph and writes it to options.out as text lines `u v` (or `u v w`), sorted by
// (u, v). The file is written under a temporary name beside it and renamed into place, so readers
// see either the old file or the complete new one; on error the temporary file is removed and an
// existing file is left as it was. Output is byte-identical for the same options at any thread
// count.
absl::Status Generate(const GenerateOptions& options);

// For tests and benchmarks: the same edges, in the same order, as Generate would write. Ignores
// options.out.
absl::StatusOr<std::vector<GeneratedEdge>> GenerateEdges(const GenerateOptions& options);

}  // namespace lockstep::generate
