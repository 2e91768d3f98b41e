// Helpers shared by the bsp unit tests: graphs from lists of named edges, engines over one part of
// a split, and a relayer that holds batches until a test's barrier.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/uuid/uuid_io.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/relayer.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/partition/range.h"
#include "util/engine_cluster.h"

namespace lockstep::bsp::bsptest {

using Edge = std::pair<std::string, std::string>;

// The vertex names "0" .. "n-1".
inline std::vector<std::string> Numbered(uint32_t n) {
  std::vector<std::string> names;
  names.reserve(n);
  for (uint32_t i = 0; i < n; ++i) names.push_back(std::to_string(i));
  return names;
}

// A GraphInput whose vertices are the edges' endpoints plus `extra_vertices`, sorted in
// ExternalIdLess order as the loader sorts them; edges keep the order given. `weights` is empty or
// has one per edge.
inline GraphInput MakeInput(const std::vector<Edge>& edges,
                            const std::vector<std::string>& extra_vertices = {},
                            std::vector<double> weights = {}) {
  std::vector<std::string> ids = extra_vertices;
  for (const auto& [src, dst] : edges) {
    ids.push_back(src);
    ids.push_back(dst);
  }
  std::sort(ids.begin(), ids.end(),
            [](const std::string& a, const std::string& b) { return ExternalIdLess(a, b); });
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::map<std::string, uint32_t> index;
  for (uint32_t i = 0; i < ids.size(); ++i) index[ids[i]] = i;
  GraphInput input;
  input.external_ids = std::move(ids);
  for (const auto& [src, dst] : edges) {
    input.src.push_back(index.at(src));
    input.dst.push_back(index.at(dst));
  }
  input.weights = std::move(weights);
  return input;
}

inline partition::Range Split(uint64_t parts) {
  auto split = partition::Range::Whole(parts);
  if (!split.ok()) throw std::runtime_error(split.status().ToString());
  return *std::move(split);
}

// The part of `split` that owns the vertex named `external`.
inline uint64_t OwnerOf(const partition::Range& split, std::string_view external) {
  auto part = split.PartitionFor(VertexIdFromExternal(external));
  if (!part.ok()) throw std::runtime_error(part.status().ToString());
  return *part;
}

// An engine over part `part` of `split`; nullptr (and a test failure) if the graph does not build.
template <class P>
std::unique_ptr<Engine<P>> MakeEngine(P program, const GraphInput& input,
                                      const partition::Range& split, uint64_t part) {
  auto graph =
      Graph<typename P::EdgeValue>::Build(input, split, part, NeedsInEdges<P>(input.symmetric));
  if (!graph.ok()) {
    ADD_FAILURE() << "Graph::Build: " << graph.status();
    return nullptr;
  }
  return std::make_unique<Engine<P>>(std::move(program), std::move(*graph));
}

// An engine over the whole graph (one partition).
template <class P>
std::unique_ptr<Engine<P>> MakeEngine(P program, const GraphInput& input) {
  return MakeEngine(std::move(program), input, Split(1), 0);
}

// The value of the vertex named `external`; throws (a test failure) if it is not local.
template <class P>
const typename P::VertexValue& ValueOf(const Engine<P>& engine, std::string_view external) {
  const uint32_t v = engine.topology().Find(VertexIdFromExternal(external));
  if (v == kNoVertex) throw std::out_of_range("no local vertex " + std::string(external));
  return engine.values()[v];
}

using QueueingRelayer = test::QueueingRelayer;

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace lockstep::bsp::bsptest
