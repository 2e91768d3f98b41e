// Topology's build from stored edges, in steps: owners, local slots, local vertices, remote
// vertices, the CSRs. Each step releases what the next no longer needs, so that a build's peak
// memory is the CSR's (bench/README.md, "A worker's peak memory under 0.35x local mode's").
#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/bsp/radix_sort.h"
#include "lockstep/bsp/topology.h"
#include "stable_bucket.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

static_assert(kDropKey == kNoVertex, "a build drops edges by keying them on no vertex");

namespace {

// The stored edges of a GraphInput, released (if `release`) once the build is done with them.
struct InputEdges {
  const GraphInput& input;
  GraphInput* release;
  size_t size() const { return input.src.size(); }
  uint32_t src(size_t e) const { return input.src[e]; }
  uint32_t dst(size_t e) const { return input.dst[e]; }
  bool symmetric() const { return input.symmetric; }
  bool oriented() const { return false; }
  void Release() {
    if (release == nullptr) return;
    bsp::Release(release->src);
    bsp::Release(release->dst);
  }
};

// A part's packed edges, cleared once the build is done with them.
struct PackedEdges {
  PartEdges& edges;
  size_t size() const { return edges.size(); }
  uint32_t src(size_t e) const { return edges.src(e); }
  uint32_t dst(size_t e) const { return edges.dst(e); }
  bool symmetric() const { return edges.symmetric; }
  bool oriented() const { return edges.oriented; }
  void Release() { edges.Clear(); }
};

}  // namespace

// One build: the vertices' facts as vectors that each step fills and a later one releases.
// `edges` gives the stored edges as vertex numbers of `input` or, for a part, of `vertices`.
template <class Edges>
class Topology::Builder {
 public:
  Builder(Edges& edges, const GraphInput* input, GraphInput* release, PartVertices* vertices,
          const partition::Range& split, uint64_t part, bool in_edges)
      : edges_(edges),
        input_(input),
        release_(release),
        vertices_(vertices),
        in_edges_(in_edges),
        t_(split),
        n_global_(static_cast<uint32_t>(vertices != nullptr ? vertices->uuids.size()
                                                            : input->num_vertices())),
        m_(edges.size()),
        oriented_(edges.oriented()) {
    t_.part_ = part;
    // n_global_ counts the input's vertices: all of them, or for a part those a worker knows of.
    t_.num_global_ = vertices != nullptr ? vertices->num_global : n_global_;
    t_.symmetric_ = edges.symmetric();
  }

  absl::StatusOr<Topology> Run(std::vector<uint32_t>* input_edge_of_out,
                               std::vector<uint32_t>* input_edge_of_in) {
    if (t_.part_ >= t_.split_.size()) {
      return absl::OutOfRangeError(absl::StrCat("partition ", t_.part_, " out of range (",
                                                t_.split_.size(), " partitions)"));
    }
    Owners();
    if (auto st = LocalSlots(); !st.ok()) return st;
    LocalVertices();
    if (auto st = RemoteVertices(); !st.ok()) return st;
    if (auto st = Csrs(input_edge_of_out, input_edge_of_in); !st.ok()) return st;
    // The UUID index last, after the CSR build's peak (its counters are gone by now) and, if the
    // input may go, after its edge arrays.
    edges_.Release();
    if (auto st = t_.IndexLocals(); !st.ok()) return st;
    // The build's temporaries go back before the engine's state and the supersteps' buffers come.
    ReturnFreedMemory();
    return std::move(t_);
  }

 private:
  // The global index of input vertex g.
  uint32_t GlobalOf(uint32_t g) const { return vertices_ != nullptr ? vertices_->global[g] : g; }
  // Local vertex g's external ID (slots assigned).
  const std::string& NameOf(uint32_t g) const {
    return vertices_ != nullptr ? vertices_->owned_names[slot_[g]] : input_->external_ids[g];
  }
  bool Local(uint32_t g) const { return slot_[g] != kNoVertex; }

  // UUIDs and owners of every input vertex; a worker reads the shared input and keeps its range.
  void Owners() {
    if (vertices_ != nullptr) {
      uuids_ = std::move(vertices_->uuids);
    } else {
      uuids_.resize(n_global_);
    }
    owner_.resize(n_global_);
    tbb::parallel_for(uint32_t{0}, n_global_, [&](uint32_t g) {
      if (vertices_ == nullptr) uuids_[g] = VertexIdFromExternal(input_->external_ids[g]);
      owner_[g] = static_cast<uint32_t>(t_.split_.PartitionForUnchecked(uuids_[g]));
    });
  }

  // Global -> local slot; local vertices keep the input's (external ID) order, which a part's
  // vertices in another order list.
  absl::Status LocalSlots() {
    const auto part = static_cast<uint32_t>(t_.part_);
    slot_.assign(n_global_, kNoVertex);
    if (vertices_ == nullptr || vertices_->local_order.empty()) {
      for (uint32_t g = 0; g < n_global_; ++g) {
        if (owner_[g] == part) slot_[g] = n_local_++;
      }
      return absl::OkStatus();
    }
    for (uint32_t g : vertices_->local_order) {
      if (g >= n_global_ || owner_[g] != part || Local(g)) {
        return absl::InternalError("a part's local order lists a vertex it does not own");
      }
      slot_[g] = n_local_++;
    }
    Release(vertices_->local_order);
    if (std::count(owner_.begin(), owner_.end(), part) != n_local_) {
      return absl::InternalError("a part's local order leaves out a vertex it owns");
    }
    return absl::OkStatus();
  }

  // The local vertices' UUIDs, global indexes and names one after another (slot order), found by
  // where each ends.
  void LocalVertices() {
    t_.ids_.resize(n_local_);
    t_.global_.resize(n_local_);
    t_.name_end_.resize(n_local_);
    tbb::parallel_for(uint32_t{0}, n_global_, [&](uint32_t g) {
      if (!Local(g)) return;
      t_.ids_[slot_[g]] = uuids_[g];
      t_.global_[slot_[g]] = GlobalOf(g);
      t_.name_end_[slot_[g]] = NameOf(g).size();
    });
    std::partial_sum(t_.name_end_.begin(), t_.name_end_.end(), t_.name_end_.begin());
    t_.names_.resize(n_local_ == 0 ? 0 : t_.name_end_.back());
    tbb::parallel_for(uint32_t{0}, n_global_, [&](uint32_t g) {
      if (!Local(g)) return;
      const std::string& name = NameOf(g);
      std::memcpy(t_.names_.data() + t_.name_end_[slot_[g]] - name.size(), name.data(),
                  name.size());
    });
    if (release_ != nullptr) Release(release_->external_ids);
    if (vertices_ != nullptr) Release(vertices_->owned_names);
  }

  // needed[g]: input vertex g is a remote end of a local vertex's edge. A symmetric input's edge
  // also stands for its reverse, so either remote end is needed.
  std::vector<uint8_t> NeededRemotes() const {
    std::vector<uint8_t> needed(n_global_, 0);
    if (vertices_ != nullptr && vertices_->remote_ends_only) {
      tbb::parallel_for(uint32_t{0}, n_global_, [&](uint32_t g) { needed[g] = !Local(g); });
    } else if (n_local_ < n_global_) {
      // With every vertex local (one part) there are no remote ends: no pass over the edges.
      const bool both = in_edges_ || t_.symmetric_;
      tbb::parallel_for(size_t{0}, m_, [&](size_t e) {
        const uint32_t s = edges_.src(e), d = edges_.dst(e);
        if (Local(s) && !Local(d)) {
          std::atomic_ref<uint8_t>(needed[d]).store(1, std::memory_order_relaxed);
        }
        if (both && Local(d) && !Local(s)) {
          std::atomic_ref<uint8_t>(needed[s]).store(1, std::memory_order_relaxed);
        }
      });
    }
    return needed;
  }

  // The needed remotes in (owner, global index) order: each partition's remotes in the order in
  // which their owner numbers its own vertices and lists the values it relays by position
  // (Engine::ConnectBroadcast), so that relayed values land in increasing slots. In (owner, UUID)
  // order they were scattered over the table, and decoding them took three times as long. Fills
  // remote_partition_begin_.
  std::vector<uint32_t> RemotesInOrder(const std::vector<uint8_t>& needed) {
    std::vector<uint64_t> keyed;  // (global index, input vertex), sorted by global index
    uint32_t max_global = 0;
    bool sorted = true;
    for (uint32_t g = 0; g < n_global_; ++g) {
      if (!needed[g]) continue;
      const uint32_t global = GlobalOf(g);
      sorted = sorted && (keyed.empty() || global > keyed.back() >> 32);
      max_global = std::max(max_global, global);
      keyed.push_back(uint64_t{global} << 32 | g);
    }
    if (!sorted) {
      std::vector<uint64_t> scratch;
      SortByHighWord(keyed, max_global, scratch);
    }
    auto& begin = t_.remote_partition_begin_;
    begin.assign(t_.split_.size() + 1, 0);
    for (uint64_t k : keyed) ++begin[owner_[static_cast<uint32_t>(k)] + 1];
    std::partial_sum(begin.begin(), begin.end(), begin.begin());
    std::vector<uint32_t> remotes(keyed.size());
    std::vector<uint32_t> cursor(begin.begin(), begin.end() - 1);
    for (uint64_t k : keyed) {
      const auto g = static_cast<uint32_t>(k);
      remotes[cursor[owner_[g]]++] = g;
    }
    return remotes;
  }

  // Remote endpoints get the slots after the local ones. The vertex tables' temporaries go
  // before the CSR arrays are allocated, where a build peaks.
  absl::Status RemoteVertices() {
    // Oriented pairs (PartEdges) are a symmetric part's directed edges, keyed by local index.
    if (oriented_ && (vertices_ == nullptr || !vertices_->remote_ends_only || !t_.symmetric_)) {
      return absl::InternalError("oriented edges come only with a symmetric part's vertex facts");
    }
    std::vector<uint32_t> remotes = RemotesInOrder(NeededRemotes());
    if (static_cast<uint64_t>(n_local_) + remotes.size() >= kNoVertex) {
      return absl::OutOfRangeError("too many vertices for 32-bit edge slots");
    }
    t_.remote_ids_.resize(remotes.size());
    t_.remote_global_.resize(remotes.size());
    for (size_t r = 0; r < remotes.size(); ++r) t_.remote_global_[r] = GlobalOf(remotes[r]);
    if (vertices_ != nullptr) Release(vertices_->global);
    t_.remote_partition_.resize(remotes.size());
    for (uint32_t r = 0; r < remotes.size(); ++r) {
      const uint32_t g = remotes[r];
      slot_[g] = n_local_ + r;
      t_.remote_ids_[r] = uuids_[g];
      t_.remote_partition_[r] = owner_[g];
    }
    Release(uuids_);
    Release(owner_);
    return absl::OkStatus();
  }

  // One CSR keyed on local vertices, in the order of the directed edges per vertex, holding the
  // other endpoint's slot. Directed edge e is stored edge e, or for e >= m in a symmetric input
  // the reverse of stored edge e - m (dropped for a self-loop, which is stored once): the order
  // GraphInput documents. Oriented pairs (PartEdges) are directed edges already, e from a local
  // index: the same order per vertex. by(e) is the end of stored edge e that the CSR is keyed on,
  // other(e) the one it holds (for oriented pairs, the local index and the other end of pair e).
  template <class By, class Other>
  void BuildCsr(By by, Other other, std::vector<uint64_t>& offsets, std::vector<uint32_t>& ends,
                std::vector<uint32_t>* input_edge) {
    const size_t m = m_;
    const uint32_t n_local = n_local_;
    const bool oriented = oriented_;
    const std::vector<uint32_t>& slot = slot_;
    auto key = [&](size_t e) {
      if (oriented) {  // by(e) is a local index already
        const uint32_t v = by(e);
        return v < n_local ? v : kNoVertex;
      }
      if (e < m) {
        const uint32_t v = slot[by(e)];
        return v < n_local ? v : kNoVertex;
      }
      const size_t i = e - m;
      const uint32_t o = other(i);
      if (by(i) == o) return kNoVertex;
      const uint32_t v = slot[o];
      return v < n_local ? v : kNoVertex;
    };
    auto fill = [&](auto& bucket) {
      const uint64_t kept = bucket.Count(offsets);
      ends.resize(kept);
      if (input_edge) input_edge->resize(kept);
      bucket.Scatter([&](size_t e, uint64_t pos) {
        const size_t i = e < m ? e : e - m;
        ends[pos] = slot[e < m ? other(i) : by(i)];
        if (input_edge) (*input_edge)[pos] = static_cast<uint32_t>(i);
      });
    };
    const size_t directed_m = t_.symmetric_ && !oriented ? 2 * m : m;
    if (directed_m < kNoVertex) {
      StableBucket<decltype(key), uint32_t> bucket(directed_m, n_local, key);
      fill(bucket);
    } else {
      StableBucket<decltype(key), uint64_t> bucket(directed_m, n_local, key);
      fill(bucket);
    }
  }

  // Out-edges by local source and, if asked for, in-edges by local target. A symmetric input's
  // in-edges are its out-edges (in_shared): no CSR of their own, and no values of their own.
  absl::Status Csrs(std::vector<uint32_t>* edge_of_out, std::vector<uint32_t>* edge_of_in) {
    // The vertex tables' temporaries are gone; what malloc kept of them goes back before the CSR.
    ReturnFreedMemory();
    auto src = [&](size_t e) { return edges_.src(e); };
    auto dst = [&](size_t e) { return edges_.dst(e); };
    BuildCsr(src, dst, t_.out_offsets_, t_.out_targets_, edge_of_out);
    if (in_edges_ && t_.symmetric_) {
      t_.in_shared_ = true;
    } else if (in_edges_) {
      if (oriented_) return absl::InternalError("oriented edges come only with a symmetric part");
      BuildCsr(dst, src, t_.in_offsets_, t_.in_sources_, edge_of_in);
    }
    return absl::OkStatus();
  }

  Edges& edges_;
  const GraphInput* input_;
  GraphInput* release_;
  PartVertices* vertices_;
  const bool in_edges_;
  Topology t_;
  const uint32_t n_global_;
  const size_t m_;
  const bool oriented_;
  uint32_t n_local_ = 0;
  std::vector<VertexId> uuids_;
  std::vector<uint32_t> owner_;
  std::vector<uint32_t> slot_;
};

absl::StatusOr<Topology> Topology::Build(const GraphInput& input, const partition::Range& split,
                                         uint64_t part, bool in_edges,
                                         std::vector<uint32_t>* input_edge_of_out,
                                         std::vector<uint32_t>* input_edge_of_in) {
  InputEdges edges{input, nullptr};
  return Builder<InputEdges>(edges, &input, nullptr, nullptr, split, part, in_edges)
      .Run(input_edge_of_out, input_edge_of_in);
}

absl::StatusOr<Topology> Topology::BuildReleasing(GraphInput& input, const partition::Range& split,
                                                  uint64_t part, bool in_edges,
                                                  std::vector<uint32_t>* input_edge_of_out,
                                                  std::vector<uint32_t>* input_edge_of_in) {
  InputEdges edges{input, &input};
  return Builder<InputEdges>(edges, &input, &input, nullptr, split, part, in_edges)
      .Run(input_edge_of_out, input_edge_of_in);
}

absl::StatusOr<Topology> Topology::BuildPart(GraphInput& input, PartVertices vertices,
                                             const partition::Range& split, uint64_t part,
                                             bool in_edges,
                                             std::vector<uint32_t>* input_edge_of_out,
                                             std::vector<uint32_t>* input_edge_of_in) {
  if (vertices.uuids.size() != vertices.global.size() || !input.external_ids.empty()) {
    return absl::InternalError("a part's vertex facts do not match its vertices");
  }
  InputEdges edges{input, &input};
  return Builder<InputEdges>(edges, &input, &input, &vertices, split, part, in_edges)
      .Run(input_edge_of_out, input_edge_of_in);
}

absl::StatusOr<Topology> Topology::BuildPart(PartEdges& edges, PartVertices vertices,
                                             const partition::Range& split, uint64_t part,
                                             bool in_edges,
                                             std::vector<uint32_t>* input_edge_of_out,
                                             std::vector<uint32_t>* input_edge_of_in) {
  if (vertices.uuids.size() != vertices.global.size()) {
    return absl::InternalError("a part's vertex facts do not match its vertices");
  }
  PackedEdges packed{edges};
  return Builder<PackedEdges>(packed, nullptr, nullptr, &vertices, split, part, in_edges)
      .Run(input_edge_of_out, input_edge_of_in);
}

}  // namespace lockstep::bsp
