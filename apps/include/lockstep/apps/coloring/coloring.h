#pragma once

// Graph colouring by Jones & Plassmann (SIAM J. Sci. Comput. 14(3), 1993): every vertex gets a
// priority; a vertex takes the smallest colour its higher-priority neighbours left free once all
// of them have coloured. The priority is largest degree first (the number of distinct neighbours,
// which the engine gives for every neighbour, kNeighbourDegrees), ties by a hash of (seed, UUID):
// a vertex knows its neighbours' priorities without asking, the result is the same at any thread
// or worker count, and the chains of decreasing priorities that set the superstep count are
// shorter than with random priorities alone.
// A vertex counts its higher-priority neighbours with multiplicity over out- and in-edges (the
// graph is taken as undirected, self-loops ignored) and waits for as many colour announcements.
// Pre-coloured vertices keep their colour and rank above everyone. At most max degree + 1 colours
// are used by uncoloured vertices, since a vertex never sees more used colours than its degree.
#include <memory>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"

namespace lockstep::apps::coloring {

struct Value {
  int64_t color = -1;
  uint32_t waiting = 0;
  std::vector<uint32_t> used;  // colours of higher-priority neighbours seen so far
};

struct Announcement {
  uint32_t color;
};

using Precolored = absl::flat_hash_map<bsp::VertexId, uint32_t, bsp::VertexIdHash>;

struct Program {
  using VertexValue = Value;
  using EdgeValue = bsp::NoValue;
  using Message = Announcement;
  static constexpr bool kNeedsInEdges = true;
  static constexpr bool kNeighbourDegrees = true;

  uint64_t seed = 42;
  std::shared_ptr<const Precolored> precolored = std::make_shared<Precolored>();

  // A vertex's place in that order, computed once per Compute for the vertex itself.
  // The UUID is read, and the priority hashed from it, only when the degrees tie.
  struct Key {
    bool precolored;
    uint32_t degree;
    const bsp::VertexId* id;
  };
  Key KeyOf(const bsp::VertexId& id, uint32_t degree) const;
  // True if a comes before b (colours first).
  bool Before(const Key& a, const Key& b) const;
  absl::Status Compute(bsp::Context<Program>& ctx, std::span<const Announcement> messages) const;
};

struct App {
  using Program = coloring::Program;
  static constexpr bsp::WeightUse kWeights = bsp::WeightUse::kIgnore;
  // The pre-coloured vertices (none if the file cannot be read: Make says why).
  static std::vector<std::string> NamedVertices(const bsp::Params& params);
  static absl::StatusOr<Program> Make(const bsp::Params& params, const bsp::GraphFacts& facts);
  static void Format(const Program&, const Value& value, std::string& out) {
    bsp::AppendInt(value.color, out);
  }
};

catalogue::AppInfo Info();

// The oracle is a verifier: every vertex coloured, no edge (other than a self-loop) joins two
// vertices of one colour, pre-coloured vertices kept, and at most max degree + 1 colours.
// Returns an error naming the first violation.
absl::Status Verify(const bsp::GraphInput& input, const std::vector<int64_t>& colors,
                    const std::map<uint32_t, uint32_t>& precolored = {});

}  // namespace lockstep::apps::coloring

namespace lockstep::bsp {
// The colouring state is variable-size, so it brings its own codec.
template <>
struct Codec<apps::coloring::Value> {
  static void Encode(const apps::coloring::Value& v, std::string& out) {
    Codec<int64_t>::Encode(v.color, out);
    Codec<uint32_t>::Encode(v.waiting, out);
    EncodeLength(v.used.size(), out);
    for (uint32_t c : v.used) Codec<uint32_t>::Encode(c, out);
  }
  static bool Decode(std::string_view& in, apps::coloring::Value& v) {
    uint64_t n;
    if (!Codec<int64_t>::Decode(in, v.color) || !Codec<uint32_t>::Decode(in, v.waiting) ||
        !DecodeLength(in, n) || n > in.size() / sizeof(uint32_t)) {
      return false;
    }
    v.used.resize(n);
    for (auto& c : v.used) Codec<uint32_t>::Decode(in, c);
    return true;
  }
};
}  // namespace lockstep::bsp
