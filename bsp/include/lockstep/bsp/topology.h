#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/partition/range.h"

namespace lockstep::bsp {

inline constexpr uint32_t kNoVertex = std::numeric_limits<uint32_t>::max();

struct VertexIdHash {
  size_t operator()(const VertexId& id) const {
    uint64_t a, b;
    std::memcpy(&a, id.data, 8);
    std::memcpy(&b, id.data + 8, 8);
    return static_cast<size_t>(a ^ (b * 0x9e3779b97f4a7c15ULL));
  }
};

// The vertices of a worker's part of a graph loaded by partition (lockstep/load/): those it
// owns and the remote ends of its edges, with their UUIDs (not hashed again) and global indexes;
// the external IDs of the owned ones only, in global-index order (the GraphInput handed to
// Topology::BuildPart has none); and the number of vertices of the whole input.
//
// The vertices are either in global-index order (`local_order` empty) or in any order, with
// `local_order` listing the owned ones in global-index order.
struct PartVertices {
  std::vector<VertexId> uuids;
  std::vector<uint32_t> global;
  std::vector<std::string> owned_names;
  std::vector<uint32_t> local_order;
  uint64_t num_global = 0;
  // Every vertex that is not owned is an end of an edge with an owned end (the build then need
  // not look for them among the edges).
  bool remote_ends_only = false;
};

// The stored edges of a part, in input order, as pairs of vertex numbers (indexes into a
// PartVertices), each number in as many bits as its bound needs and a pair in whole bytes (5 for
// two numbers below 2^20): a worker holds its edges and its CSR together while it builds, and a
// vector of 32-bit pairs would be 60% more. Written once at known positions, then read by
// Topology::BuildPart.
//
// Oriented (a symmetric input's part only): every pair's source is an owned vertex, given by its
// local index (its place in PartVertices::local_order), and the pairs are the part's directed
// edges, not its stored ones: first the stored edges from an owned vertex (`heads` of them), then
// the reverses of the stored non-loop edges into one, each in input order. The build then keys
// every pair and looks up no source.
class PartEdges {
 public:
  PartEdges() = default;
  PartEdges(size_t edges, uint64_t vertices) : PartEdges(edges, vertices, vertices) {}
  // Sources below `sources`, targets below `targets`.
  PartEdges(size_t edges, uint64_t sources, uint64_t targets)
      : PartEdges(edges, sources, targets, false) {}
  // The same, its bytes mapped from the kernel at a page boundary instead of taken from malloc,
  // so that whole pages of them can be replaced by pages moved from elsewhere (mremap) before
  // the pairs there are written: the partitioned load moves the pages of the received edges it
  // has laid out, instead of faulting fresh ones in (docs/design.md §4).
  static PartEdges Mapped(size_t edges, uint64_t sources, uint64_t targets) {
    return PartEdges(edges, sources, targets, true);
  }
  // Mapped() only: the first byte (page-aligned) and the bytes per pair; pair e is at
  // mapped_data() + e * stride(), and the 8 bytes of slack after the last pair are written.
  uint8_t* mapped_data() { return bytes_.get_deleter().mapped != 0 ? bytes_.get() : nullptr; }
  size_t stride() const { return stride_; }

  size_t size() const { return size_; }
  size_t bytes() const { return bytes_ ? size_ * stride_ + 8 : 0; }
  // src and dst must be below the bounds given at construction. Pairs are whole bytes, so
  // distinct pairs may be set in parallel.
  void Set(size_t e, uint32_t src, uint32_t dst) {
    const uint64_t v = uint64_t{src} | uint64_t{dst} << src_bits_;
    uint8_t* at = bytes_.get() + e * stride_;
    switch (stride_) {
      case 1:
        std::memcpy(at, &v, 1);
        return;
      case 2:
        std::memcpy(at, &v, 2);
        return;
      case 3:
        std::memcpy(at, &v, 3);
        return;
      case 4:
        std::memcpy(at, &v, 4);
        return;
      case 5:
        std::memcpy(at, &v, 5);
        return;
      case 6:
        std::memcpy(at, &v, 6);
        return;
      case 7:
        std::memcpy(at, &v, 7);
        return;
      default:
        std::memcpy(at, &v, 8);
        return;
    }
  }
  uint32_t src(size_t e) const { return static_cast<uint32_t>(Load(e) & Mask(src_bits_)); }
  uint32_t dst(size_t e) const {
    return static_cast<uint32_t>(Load(e) >> src_bits_ & Mask(dst_bits_));
  }
  void Clear() {
    bytes_.reset();
    size_ = 0;
    oriented = false;
    heads = 0;
  }

  // Every stored non-loop edge also stands for its reverse (GraphInput::symmetric).
  bool symmetric = false;
  // Oriented pairs (above), the first `heads` of them stored edges (the build no longer reads
  // the count: the load lays the pairs out by it).
  bool oriented = false;
  size_t heads = 0;

 private:
  static uint32_t BitsFor(uint64_t bound) {
    return std::max<uint32_t>(1, static_cast<uint32_t>(std::bit_width(bound - (bound > 0))));
  }
  static uint64_t Mask(uint32_t bits) {
    return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  }
  uint64_t Load(size_t e) const {
    uint64_t v;
    std::memcpy(&v, bytes_.get() + e * stride_, 8);
    return v;
  }
  // Frees the bytes: unmapped (`mapped` bytes of them) or deleted.
  struct Free {
    size_t mapped;  // (0 when value-initialised, as a unique_ptr does)
    void operator()(uint8_t* p) const;
  };
  PartEdges(size_t edges, uint64_t sources, uint64_t targets, bool mapped)
      : size_(edges),
        src_bits_(BitsFor(sources)),
        dst_bits_(BitsFor(targets)),
        stride_((src_bits_ + dst_bits_ + 7) / 8),
        // 8 bytes of slack let every pair be read as a 64-bit load.
        bytes_(Allocate(edges * stride_ + 8, mapped)) {
    std::memset(bytes_.get() + edges * stride_, 0, 8);  // the slack is read, never used
  }
  // `bytes` not value-initialised (the pages are touched as the pairs are written): from new[],
  // or mapped from the kernel at a page boundary.
  static std::unique_ptr<uint8_t[], Free> Allocate(size_t bytes, bool mapped);
  size_t size_ = 0;
  uint32_t src_bits_ = 1, dst_bits_ = 1;
  size_t stride_ = 1;
  std::unique_ptr<uint8_t[], Free> bytes_;
};

// A whole graph's CSRs as a reader that has them row by row lays them out (the partitioned
// form's whole read, load/form/whole_rows.cc): every vertex by global index, its external ID
// (names, each ending at name_end[v]) and its rows as Topology::Build orders them for one part.
// No edge list is held beside the CSR, which halves the peak memory of a load.
struct WholeRows {
  std::string names;
  std::vector<uint64_t> name_end;
  std::vector<uint64_t> out_offsets;  // size vertices + 1
  std::vector<uint32_t> out_targets;
  std::vector<uint64_t> in_offsets;  // empty: no in-edges of their own
  std::vector<uint32_t> in_sources;
  bool symmetric = false;
  bool in_shared = false;  // symmetric only: the in-edges are the out-edges (Topology::in_shared)
};

// The structure of one process's part of a graph (docs/design.md §3.6): local vertices with dense
// indexes 0..n-1, out-edges in CSR by source index, in-edges in CSR by target index when asked
// for (a symmetric graph's are its out-edges, stored once: in_shared), and a table of remote
// vertices with their owning partition.
//
// An edge endpoint is a 32-bit "slot": a slot below num_local() is a local vertex index; a slot
// s >= num_local() is the remote vertex s - num_local(). The message path therefore never hashes a
// UUID for a local destination, and a remote destination's partition is looked up in an array.
class Topology {
 public:
  // Keeps the vertices of `input` whose UUID falls in part `part` of `split` (all of them when
  // split has one part), their out-edges and, if `in_edges`, their in-edges. `input_edge_of_out`
  // and `input_edge_of_in`, if not null, receive for each CSR edge the index of its stored edge in
  // `input` (for the reverse of a symmetric input's edge, that edge's), so that typed edge values
  // can be laid out alongside (a symmetric input's in-edges are its out-edges: in_shared, and
  // `input_edge_of_in` is left empty).
  static absl::StatusOr<Topology> Build(const GraphInput& input, const partition::Range& split,
                                        uint64_t part, bool in_edges,
                                        std::vector<uint32_t>* input_edge_of_out,
                                        std::vector<uint32_t>* input_edge_of_in);
  // As Build, but frees the input's vertex names and edge arrays as soon as it is done with them
  // (they are left empty; the weights stay for the caller), which lowers the peak memory of a
  // job's start: the names before the CSR is laid out, the edges before the UUID index is built.
  static absl::StatusOr<Topology> BuildReleasing(GraphInput& input, const partition::Range& split,
                                                 uint64_t part, bool in_edges,
                                                 std::vector<uint32_t>* input_edge_of_out,
                                                 std::vector<uint32_t>* input_edge_of_in);

  // As BuildReleasing, for a GraphInput that holds only part of the graph: its vertices are
  // `vertices` (in global-index order: the local ones keep external-ID order), its edges those
  // with an end in part `part`, in input order. Gives what Build gives for the whole input.
  static absl::StatusOr<Topology> BuildPart(GraphInput& input, PartVertices vertices,
                                            const partition::Range& split, uint64_t part,
                                            bool in_edges, std::vector<uint32_t>* input_edge_of_out,
                                            std::vector<uint32_t>* input_edge_of_in);
  // The same from packed edges, whose vertex numbers index `vertices` (emptied as it goes).
  static absl::StatusOr<Topology> BuildPart(PartEdges& edges, PartVertices vertices,
                                            const partition::Range& split, uint64_t part,
                                            bool in_edges, std::vector<uint32_t>* input_edge_of_out,
                                            std::vector<uint32_t>* input_edge_of_in);

  // What Build gives for one part (split Whole(1)) of a graph whose CSRs a reader laid out; the
  // rows are checked (offsets in order, every end a vertex), never trusted.
  static absl::StatusOr<Topology> FromRows(WholeRows rows);

  uint32_t num_local() const { return static_cast<uint32_t>(ids_.size()); }
  uint64_t num_global() const { return num_global_; }
  uint64_t num_out_edges() const { return out_targets_.size(); }
  uint32_t num_remote() const { return static_cast<uint32_t>(remote_ids_.size()); }

  const VertexId& id(uint32_t v) const { return ids_[v]; }
  std::span<const VertexId> ids() const { return ids_; }
  // The vertex's index in the whole input (the same in every process): the rank of its external
  // ID in ExternalIdLess order. Apps that order vertices by ID ("smallest label") compare these.
  // Local indexes follow it: v < w exactly when global_index(v) < global_index(w).
  uint32_t global_index(uint32_t v) const { return global_[v]; }
  uint32_t SlotGlobalIndex(uint32_t slot) const {
    return IsLocal(slot) ? global_[slot] : remote_global_[slot - num_local()];
  }
  std::string_view external_id(uint32_t v) const {
    const uint64_t begin = v == 0 ? 0 : name_end_[v - 1];
    return std::string_view(names_.data() + begin, name_end_[v] - begin);
  }

  bool IsLocal(uint32_t slot) const { return slot < num_local(); }
  const VertexId& SlotId(uint32_t slot) const {
    return IsLocal(slot) ? ids_[slot] : remote_ids_[slot - num_local()];
  }
  uint32_t remote_partition(uint32_t remote) const { return remote_partition_[remote]; }
  const VertexId& remote_id(uint32_t remote) const { return remote_ids_[remote]; }
  // Remote vertices are ordered by (partition, global index): each partition's in the order its
  // owner numbers them. This is the first remote of each partition (size partitions + 1).
  const std::vector<uint32_t>& remote_partition_begin() const { return remote_partition_begin_; }

  uint64_t out_begin(uint32_t v) const { return out_offsets_[v]; }
  uint64_t out_end(uint32_t v) const { return out_offsets_[v + 1]; }
  uint32_t out_degree(uint32_t v) const {
    return static_cast<uint32_t>(out_offsets_[v + 1] - out_offsets_[v]);
  }
  std::span<const uint32_t> out_slots(uint32_t v) const {
    return {out_targets_.data() + out_offsets_[v], out_degree(v)};
  }

  // Whether in-edges were built: a CSR of their own or, on a symmetric graph, the out-edges.
  bool has_in_edges() const { return in_shared_ || !in_offsets_.empty(); }
  // A symmetric graph's in-edges are its out-edges, stored once: in_slots(v) is out_slots(v), in
  // the same order (and in-edge values are out-edge values).
  bool in_shared() const { return in_shared_; }
  uint64_t in_begin(uint32_t v) const { return InOffsets()[v]; }
  uint32_t in_degree(uint32_t v) const {
    return static_cast<uint32_t>(InOffsets()[v + 1] - InOffsets()[v]);
  }
  std::span<const uint32_t> in_slots(uint32_t v) const {
    return {InSources().data() + InOffsets()[v], in_degree(v)};
  }
  // Every vertex's in-slots one after another (in_slots(0), in_slots(1), ...).
  std::span<const uint32_t> all_in_slots() const { return InSources(); }
  // Every vertex's out-slots one after another.
  std::span<const uint32_t> all_out_slots() const { return out_targets_; }
  // Whether every edge of the input stood for its reverse too (GraphInput::symmetric): a vertex's
  // in-edges are then its out-edges (in_shared() if in-edges were asked for).
  bool symmetric() const { return symmetric_; }

  // The local index of a UUID, or kNoVertex. Used at load, for UUID-coded batches and for
  // messages sent by UUID. The local vertices in UUID order, with a bucket index on the leading
  // bits as the remote table's, narrow the search to a few entries: 4.5 bytes per local vertex,
  // where a hash index took about 34.
  uint32_t Find(const VertexId& id) const {
    auto first = local_by_id_.begin(), last = local_by_id_.end();
    if (!local_bucket_.empty()) {
      const uint64_t b = LeadingBits(id) >> local_bucket_shift_;
      first = local_by_id_.begin() + local_bucket_[b];
      last = local_by_id_.begin() + local_bucket_[b + 1];
    }
    const auto it = std::lower_bound(first, last, id,
                                     [&](uint32_t v, const VertexId& x) { return ids_[v] < x; });
    return it != last && ids_[*it] == id ? *it : kNoVertex;
  }
  // The remote index of a UUID in the remote table, or kNoVertex. Used only for UUID-coded
  // batches and for restored published values, never along an edge: the remote vertices in UUID
  // order, with a bucket index on the UUIDs' leading bits, are sorted on the first call (4.5 bytes
  // a remote vertex; a PageRank worker holds them only once it has restored a checkpoint).
  // Thread-safe.
  uint32_t FindRemote(const VertexId& id) const {
    const RemoteIndex& index = remote_index_.Get(*this);
    auto first = index.by_id.begin(), last = index.by_id.end();
    if (!index.bucket.empty()) {
      const uint64_t b = LeadingBits(id) >> index.shift;
      first = index.by_id.begin() + index.bucket[b];
      last = index.by_id.begin() + index.bucket[b + 1];
    }
    const auto it = std::lower_bound(
        first, last, id, [&](uint32_t r, const VertexId& x) { return remote_ids_[r] < x; });
    return it != last && remote_ids_[*it] == id ? *it : kNoVertex;
  }
  // The partition a UUID belongs to under the job's split.
  const partition::Range& split() const { return split_; }
  uint64_t part() const { return part_; }

 private:
  Topology(partition::Range split) : split_(std::move(split)) {}
  // A build from stored edges, in steps (topology_build.cc).
  template <class Edges>
  class Builder;

  const std::vector<uint64_t>& InOffsets() const { return in_shared_ ? out_offsets_ : in_offsets_; }
  const std::vector<uint32_t>& InSources() const { return in_shared_ ? out_targets_ : in_sources_; }

  partition::Range split_;
  uint64_t part_ = 0;
  bool symmetric_ = false;
  bool in_shared_ = false;
  uint64_t num_global_ = 0;
  std::vector<VertexId> ids_;
  std::vector<uint32_t> global_;
  // The local vertices' external IDs one after another; name_end_[v] is where v's ends (a
  // vector of strings took 32 bytes a vertex before its text).
  std::string names_;
  std::vector<uint64_t> name_end_;
  std::vector<uint64_t> out_offsets_;
  std::vector<uint32_t> out_targets_;
  std::vector<uint64_t> in_offsets_;
  std::vector<uint32_t> in_sources_;
  std::vector<VertexId> remote_ids_;
  std::vector<uint32_t> remote_global_;
  std::vector<uint32_t> remote_partition_;
  std::vector<uint32_t> remote_partition_begin_;
  // The remote vertices in UUID order; bucket[b]: the first of them whose UUID's leading 64 bits
  // >> shift are at least b (empty for a few remotes: FindRemote searches them all).
  struct RemoteIndex {
    std::vector<uint32_t> by_id;
    std::vector<uint32_t> bucket;
    uint32_t shift = 64;
  };
  // Built once, on first use. A copy starts empty and builds its own (the original's may be under
  // way on another thread); a moved-from one finds nothing.
  class LazyRemoteIndex {
   public:
    LazyRemoteIndex() = default;
    LazyRemoteIndex(const LazyRemoteIndex&) {}
    LazyRemoteIndex& operator=(const LazyRemoteIndex&) {
      *this = LazyRemoteIndex();
      return *this;
    }
    LazyRemoteIndex(LazyRemoteIndex&&) noexcept = default;
    LazyRemoteIndex& operator=(LazyRemoteIndex&&) noexcept = default;
    const RemoteIndex& Get(const Topology& t) const;

   private:
    std::unique_ptr<std::once_flag> once_ = std::make_unique<std::once_flag>();
    mutable RemoteIndex index_;
  };
  LazyRemoteIndex remote_index_;
  static uint64_t LeadingBits(const VertexId& id) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | id.data[i];
    return v;
  }
  // The indexes of `ids` in UUID order (equal UUIDs in index order).
  static std::vector<uint32_t> SortedByUuid(const std::vector<VertexId>& ids);
  // Sorts the local vertices by UUID and indexes them; an error names two external IDs with the
  // same UUID.
  absl::Status IndexLocals();
  // buckets[b]: the first of n entries, in UUID order, whose UUID's leading 64 bits >> shift are
  // at least b (about 8 entries a bucket; none for fewer than 64 entries, shift then 64).
  template <class LeadingOf>
  static void IndexBuckets(size_t n, LeadingOf leading_of, std::vector<uint32_t>& buckets,
                           uint32_t& shift);
  std::vector<uint32_t> local_by_id_;
  std::vector<uint32_t> local_bucket_;
  uint32_t local_bucket_shift_ = 64;
};

}  // namespace lockstep::bsp
