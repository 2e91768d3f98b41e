#pragma once

#include <span>
#include <type_traits>
#include <vector>

#include "lockstep/bsp/topology.h"

namespace lockstep::bsp {

// The edge value of programs that need none; costs no memory.
struct NoValue {};

// A Topology with typed edge values laid out beside the CSR arrays (structure of arrays).
template <class E>
class Graph {
 public:
  // Edge values come from the input's weights (1 where the input has none); E must be
  // constructible from a double unless it is NoValue.
  static absl::StatusOr<Graph> Build(const GraphInput& input, const partition::Range& split,
                                     uint64_t part, bool in_edges) {
    return Build(input, nullptr, nullptr, split, part, in_edges);
  }
  // As Build, but empties `input` as it goes (Topology::BuildReleasing), for a caller that needs
  // it no more: a job's start, whose peak memory this lowers.
  static absl::StatusOr<Graph> BuildReleasing(GraphInput& input, const partition::Range& split,
                                              uint64_t part, bool in_edges) {
    auto g = Build(input, &input, nullptr, split, part, in_edges);
    input = GraphInput{};
    return g;
  }

  // As BuildReleasing, for a worker's part of a graph loaded by partition (Topology::BuildPart).
  static absl::StatusOr<Graph> BuildPart(GraphInput& input, PartVertices vertices,
                                         const partition::Range& split, uint64_t part,
                                         bool in_edges) {
    auto g = Build(input, &input, &vertices, split, part, in_edges);
    input = GraphInput{};
    return g;
  }

  // The same from a part's packed edges (cleared as it goes) and their weights (one per stored
  // edge, or none).
  static absl::StatusOr<Graph> BuildPart(PartEdges& edges, const std::vector<double>& weights,
                                         PartVertices vertices, const partition::Range& split,
                                         uint64_t part, bool in_edges) {
    std::vector<uint32_t> out_map, in_map;
    auto topo = Topology::BuildPart(edges, std::move(vertices), split, part, in_edges,
                                    kValues ? &out_map : nullptr, kValues ? &in_map : nullptr);
    if (!topo.ok()) return topo.status();
    return WithValues(std::move(*topo), weights, out_map, in_map);
  }

  // A whole graph laid out by its reader (Topology::FromRows), with its CSR edges' weights in
  // the CSR's order (empty: 1 each), taken as they are when E is double.
  static absl::StatusOr<Graph> FromRows(WholeRows rows, std::vector<double> out_weights,
                                        std::vector<double> in_weights) {
    auto topo = Topology::FromRows(std::move(rows));
    if (!topo.ok()) return topo.status();
    const size_t in_n =
        topo->has_in_edges() && !topo->in_shared() ? topo->all_in_slots().size() : 0;
    if ((!out_weights.empty() && out_weights.size() != topo->num_out_edges()) ||
        (!in_weights.empty() && in_weights.size() != in_n)) {
      return absl::InternalError("a whole graph's weights do not match its rows");
    }
    Graph g(std::move(*topo));
    g.unit_values_ = out_weights.empty();
    if constexpr (kValues) {
      auto lay_out = [](std::vector<E>& values, std::vector<double>& weights, size_t n) {
        if constexpr (std::is_same_v<E, double>) {
          if (!weights.empty()) {
            values = std::move(weights);
            return;
          }
        }
        values.reserve(n);
        for (size_t e = 0; e < n; ++e) {
          values.push_back(static_cast<E>(weights.empty() ? 1.0 : weights[e]));
        }
        weights = {};
      };
      lay_out(g.out_values_, out_weights, g.topology_.num_out_edges());
      lay_out(g.in_values_, in_weights, in_n);
    }
    return g;
  }

  const Topology& topology() const { return topology_; }
  // Whether the input had no weights, so that every edge value is 1 (a program may then take a
  // shorter way, e.g. SSSP's partition step a breadth-first search).
  bool unit_values() const { return unit_values_; }

  std::span<const E> out_values(uint32_t v) const {
    if constexpr (std::is_same_v<E, NoValue>) return {};
    return {out_values_.data() + topology_.out_begin(v), topology_.out_degree(v)};
  }
  // A symmetric graph's in-edge values are its out-edge values (Topology::in_shared).
  std::span<const E> in_values(uint32_t v) const {
    if constexpr (std::is_same_v<E, NoValue>) return {};
    const std::vector<E>& values = topology_.in_shared() ? out_values_ : in_values_;
    return {values.data() + topology_.in_begin(v), topology_.in_degree(v)};
  }

 private:
  explicit Graph(Topology topology) : topology_(std::move(topology)) {}

  static constexpr bool kValues = !std::is_same_v<E, NoValue>;

  // Lays out the edge values of each CSR edge's stored edge (1 without weights).
  static Graph WithValues(Topology topo, const std::vector<double>& weights,
                          const std::vector<uint32_t>& out_map,
                          const std::vector<uint32_t>& in_map) {
    Graph g(std::move(topo));
    g.unit_values_ = weights.empty();
    if constexpr (kValues) {
      auto value_of = [&](uint32_t e) {
        return static_cast<E>(weights.empty() ? 1.0 : weights[e]);
      };
      g.out_values_.reserve(out_map.size());
      for (uint32_t e : out_map) g.out_values_.push_back(value_of(e));
      g.in_values_.reserve(in_map.size());
      for (uint32_t e : in_map) g.in_values_.push_back(value_of(e));
    }
    return g;
  }

  static absl::StatusOr<Graph> Build(const GraphInput& input, GraphInput* release,
                                     PartVertices* vertices, const partition::Range& split,
                                     uint64_t part, bool in_edges) {
    std::vector<uint32_t> out_map, in_map;
    std::vector<uint32_t>* out = kValues ? &out_map : nullptr;
    std::vector<uint32_t>* in = kValues ? &in_map : nullptr;
    auto topo =
        vertices != nullptr
            ? Topology::BuildPart(*release, std::move(*vertices), split, part, in_edges, out, in)
        : release != nullptr ? Topology::BuildReleasing(*release, split, part, in_edges, out, in)
                             : Topology::Build(input, split, part, in_edges, out, in);
    if (!topo.ok()) return topo.status();
    return WithValues(std::move(*topo), input.weights, out_map, in_map);
  }

  Topology topology_;
  bool unit_values_ = false;
  std::vector<E> out_values_;
  std::vector<E> in_values_;
};

}  // namespace lockstep::bsp
