// The edge-list and vertex-list parsers and the graph build behind them (LoadGraph), on text a
// GraphTextSource hands over in memory: the first byte chooses a vertex list, weights and
// direction (directed, undirected, or both directions listed); the rest is the vertex list, a
// NUL, then the edge list (or only the edge list).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "lockstep/bsp/graph_input.h"
#include "lockstep/load/source.h"

namespace {

class FuzzText final : public lockstep::bsp::GraphTextSource {
 public:
  explicit FuzzText(lockstep::bsp::GraphText text) : text_(std::move(text)) {}
  absl::StatusOr<lockstep::bsp::GraphText> ReadAll(bool) const override { return text_; }
  absl::StatusOr<std::unique_ptr<lockstep::bsp::GraphTextShare>> OpenShare(
      bool, bool, uint32_t, uint32_t) const override {
    return absl::UnimplementedError("no shares");
  }
  std::string EdgesName() const override { return "edges"; }
  std::string VerticesName() const override { return "vertices"; }

 private:
  lockstep::bsp::GraphText text_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  lockstep::bsp::GraphText text;
  text.edges_name = "edges";
  text.vertices_name = "vertices";
  if ((mode & 1) != 0) {
    const size_t nul = rest.find('\0');
    text.has_vertices = true;
    text.vertices = rest.substr(0, nul);
    text.edges = nul == std::string::npos ? "" : rest.substr(nul + 1);
  } else {
    text.edges = rest;
  }
  lockstep::bsp::GraphSource source;
  source.path = "fuzz";
  source.undirected = (mode & 2) != 0;
  source.both_listed = source.undirected && (mode & 8) != 0;  // --symmetric
  source.text = std::make_shared<FuzzText>(std::move(text));
  const auto weights =
      (mode & 4) != 0 ? lockstep::bsp::WeightUse::kNonNegative : lockstep::bsp::WeightUse::kIgnore;
  // Bad input is an error, never a crash; a good graph is a consistent one: every edge's ends
  // are vertices, one weight per edge if any.
  auto graph = lockstep::load::LoadGraph(source, weights);
  if (!graph.ok()) return 0;
  const size_t n = graph->num_vertices();
  for (size_t e = 0; e < graph->src.size(); ++e) {
    if (graph->src[e] >= n || graph->dst[e] >= n) __builtin_trap();
  }
  if (!graph->weights.empty() && graph->weights.size() != graph->src.size()) __builtin_trap();
  // Read as symmetric, every kept edge goes from its lower end.
  for (size_t e = 0; source.both_listed && e < graph->src.size(); ++e) {
    if (graph->src[e] > graph->dst[e]) __builtin_trap();
  }
  return 0;
}
