#include "lockstep/bsp/topology.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/bsp/radix_sort.h"
#include "tbb/parallel_for.h"
#include "tbb/task_arena.h"

namespace lockstep::bsp {

void PartEdges::Free::operator()(uint8_t* p) const {
  if (mapped != 0) {
    ::munmap(p, mapped);
  } else {
    delete[] p;
  }
}

std::unique_ptr<uint8_t[], PartEdges::Free> PartEdges::Allocate(size_t bytes, bool mapped) {
  if (!mapped) return std::unique_ptr<uint8_t[], Free>(new uint8_t[bytes], Free{0});
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t length = (bytes + page - 1) / page * page;
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return std::unique_ptr<uint8_t[], Free>(static_cast<uint8_t*>(p), Free{length});
}

namespace {

// Frees a container's memory (`v = {}` would pick the initializer-list assignment, which keeps
// the capacity).
template <class T>
void Release(T& v) {
  T().swap(v);
}

// A stable, parallel counting sort of edge indexes by key: offsets[k]..offsets[k+1] are the edges
// with key k, in input order (so the layout never depends on the thread count). Edges whose key
// is kNoVertex are dropped. `key(edge)` is evaluated in both passes rather than stored, which
// keeps the peak memory of a build lower. Count() sizes the buckets, so that the caller can
// allocate the arrays; Scatter(place) then calls place(edge, position) once per kept edge.
// `Counter` holds the chunks' counters and positions: 32 bits while the edges fit, which halves
// the counters' share of a build's peak memory.
template <class Key, class Counter>
class StableBucket {
 public:
  // With 0 < split < m, a chunk boundary falls at edge `split`, so that SplitPosition() can tell
  // where each key's edges from split on begin (the layout does not depend on the chunks).
  StableBucket(size_t m, uint32_t num_keys, Key key, size_t split = 0)
      : m_(m), num_keys_(num_keys), key_(key) {
    const size_t threads = static_cast<size_t>(tbb::this_task_arena::max_concurrency());
    const size_t keys = static_cast<size_t>(num_keys);
    // Enough chunks to keep every thread busy; few enough that chunks x keys counters stay small.
    chunks_ = std::clamp<size_t>(m / (1 << 16), 1, 2 * threads);
    while (chunks_ > 1 && chunks_ * keys > (size_t{1} << 27)) chunks_ /= 2;
    if (split > 0 && split < m && (chunks_ >= 2 || 2 * keys <= (size_t{1} << 27))) {
      const size_t half = std::max<size_t>(1, chunks_ / 2);
      chunks_ = 2 * half;
      split_chunk_ = half;
      for (size_t c = 0; c < half; ++c) begin_.push_back(split * c / half);
      for (size_t c = 0; c < half; ++c) begin_.push_back(split + (m - split) * c / half);
    } else {
      const size_t per = (m + chunks_ - 1) / chunks_;
      for (size_t c = 0; c < chunks_; ++c) begin_.push_back(std::min(m, c * per));
    }
    begin_.push_back(m);
  }

  // Whether the chunks split where asked, so that SplitPosition() works.
  bool has_split() const { return split_chunk_ != 0; }
  // Between Count() and Scatter(): the position of key k's first edge at or after the split.
  uint64_t SplitPosition(uint32_t k) const { return counts_[split_chunk_][k]; }

  // Fills offsets (size num_keys + 1) and returns the number of kept edges.
  uint64_t Count(std::vector<uint64_t>& offsets) {
    counts_.assign(chunks_, {});
    tbb::parallel_for(size_t{0}, chunks_, [&](size_t c) {
      counts_[c].assign(num_keys_, Counter{0});
      for (size_t e = begin_[c], end = begin_[c + 1]; e < end; ++e) {
        const uint32_t k = key_(e);
        if (k != kNoVertex) ++counts_[c][k];
      }
    });
    offsets.assign(static_cast<size_t>(num_keys_) + 1, 0);
    tbb::parallel_for(uint32_t{0}, num_keys_, [&](uint32_t k) {
      uint64_t total = 0;
      for (size_t c = 0; c < chunks_; ++c) total += counts_[c][k];
      offsets[k + 1] = total;
    });
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    // Each chunk's first position per key, key-major.
    tbb::parallel_for(uint32_t{0}, num_keys_, [&](uint32_t k) {
      uint64_t pos = offsets[k];
      for (size_t c = 0; c < chunks_; ++c) {
        const uint64_t n = counts_[c][k];
        counts_[c][k] = static_cast<Counter>(pos);
        pos += n;
      }
    });
    return offsets.back();
  }

  template <class Place>
  void Scatter(Place&& place) {
    tbb::parallel_for(size_t{0}, chunks_, [&](size_t c) {
      for (size_t e = begin_[c], end = begin_[c + 1]; e < end; ++e) {
        const uint32_t k = key_(e);
        if (k != kNoVertex) place(e, counts_[c][k]++);
      }
    });
    Release(counts_);
  }

 private:
  size_t m_;
  uint32_t num_keys_;
  Key key_;
  size_t chunks_ = 1;
  size_t split_chunk_ = 0;
  std::vector<size_t> begin_;  // chunk c is edges begin_[c]..begin_[c + 1]
  std::vector<std::vector<Counter>> counts_;
};

// Sorts (leading 64 bits of a UUID, index) pairs by `less`, which orders by the leading bits
// first. UUIDs are uniform, so a counting sort by the top bits (StableBucket) leaves buckets of
// about four entries, each then sorted by `less`: a comparison sort of the whole took about 3% of
// a worker's load.
template <class Less>
void SortByLeadingBits(std::vector<std::pair<uint64_t, uint32_t>>& v, Less less) {
  const size_t n = v.size();
  if (n < 4096) {
    std::sort(v.begin(), v.end(), less);
    return;
  }
  uint32_t bits = 1;
  while (bits < 20 && (size_t{1} << (bits + 2)) <= n) ++bits;
  const uint32_t shift = 64 - bits;
  auto key = [&](size_t i) { return static_cast<uint32_t>(v[i].first >> shift); };
  StableBucket<decltype(key), uint32_t> bucket(n, uint32_t{1} << bits, key);
  std::vector<uint64_t> start;
  bucket.Count(start);
  std::vector<std::pair<uint64_t, uint32_t>> out(n);
  bucket.Scatter([&](size_t i, uint64_t pos) { out[pos] = v[i]; });
  Release(v);
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    if (start[b + 1] - start[b] > 1) {
      std::sort(out.begin() + static_cast<ptrdiff_t>(start[b]),
                out.begin() + static_cast<ptrdiff_t>(start[b + 1]), less);
    }
  }
  v.swap(out);
}

// The stored edges of a GraphInput, released (if `release`) once the build is done with them.
struct InputEdges {
  const GraphInput& input;
  GraphInput* release;
  size_t size() const { return input.src.size(); }
  uint32_t src(size_t e) const { return input.src[e]; }
  uint32_t dst(size_t e) const { return input.dst[e]; }
  bool symmetric() const { return input.symmetric; }
  bool oriented() const { return false; }
  size_t heads() const { return 0; }
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
  size_t heads() const { return edges.heads; }
  void Release() { edges.Clear(); }
};

}  // namespace

absl::StatusOr<Topology> Topology::Build(const GraphInput& input, const partition::Range& split,
                                         uint64_t part, bool in_edges,
                                         std::vector<uint32_t>* input_edge_of_out,
                                         std::vector<uint32_t>* input_edge_of_in) {
  InputEdges edges{input, nullptr};
  return Build(edges, &input, nullptr, nullptr, split, part, in_edges, input_edge_of_out,
               input_edge_of_in);
}

absl::StatusOr<Topology> Topology::BuildReleasing(GraphInput& input, const partition::Range& split,
                                                  uint64_t part, bool in_edges,
                                                  std::vector<uint32_t>* input_edge_of_out,
                                                  std::vector<uint32_t>* input_edge_of_in) {
  InputEdges edges{input, &input};
  return Build(edges, &input, &input, nullptr, split, part, in_edges, input_edge_of_out,
               input_edge_of_in);
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
  return Build(edges, &input, &input, &vertices, split, part, in_edges, input_edge_of_out,
               input_edge_of_in);
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
  return Build(packed, nullptr, nullptr, &vertices, split, part, in_edges, input_edge_of_out,
               input_edge_of_in);
}

template <class Edges>
absl::StatusOr<Topology> Topology::Build(Edges& edges, const GraphInput* input, GraphInput* release,
                                         PartVertices* vertices, const partition::Range& split,
                                         uint64_t part, bool in_edges,
                                         std::vector<uint32_t>* input_edge_of_out,
                                         std::vector<uint32_t>* input_edge_of_in) {
  if (part >= split.size()) {
    return absl::OutOfRangeError(
        absl::StrCat("partition ", part, " out of range (", split.size(), " partitions)"));
  }
  // n_global counts the input's vertices: all of them, or for a part those a worker knows of.
  const uint32_t n_global =
      static_cast<uint32_t>(vertices != nullptr ? vertices->uuids.size() : input->num_vertices());
  Topology t(split);
  t.part_ = part;
  t.num_global_ = vertices != nullptr ? vertices->num_global : n_global;
  // The global index of input vertex g.
  auto global_of = [&](uint32_t g) { return vertices != nullptr ? vertices->global[g] : g; };

  // UUIDs and owners of every input vertex; a worker reads the shared input and keeps its range.
  std::vector<VertexId> uuids;
  if (vertices != nullptr) {
    uuids = std::move(vertices->uuids);
  } else {
    uuids.resize(n_global);
  }
  std::vector<uint32_t> owner(n_global);
  tbb::parallel_for(uint32_t{0}, n_global, [&](uint32_t g) {
    if (vertices == nullptr) uuids[g] = VertexIdFromExternal(input->external_ids[g]);
    owner[g] = static_cast<uint32_t>(split.PartitionForUnchecked(uuids[g]));
  });

  // Global -> local slot; local vertices keep the input's (external ID) order, which a part's
  // vertices in another order list.
  std::vector<uint32_t> slot(n_global, kNoVertex);
  uint32_t n_local = 0;
  if (vertices != nullptr && !vertices->local_order.empty()) {
    for (uint32_t g : vertices->local_order) {
      if (g >= n_global || owner[g] != part || slot[g] != kNoVertex) {
        return absl::InternalError("a part's local order lists a vertex it does not own");
      }
      slot[g] = n_local++;
    }
    Release(vertices->local_order);
    const auto owned = std::count(owner.begin(), owner.end(), static_cast<uint32_t>(part));
    if (owned != n_local) {
      return absl::InternalError("a part's local order leaves out a vertex it owns");
    }
  } else {
    for (uint32_t g = 0; g < n_global; ++g) {
      if (owner[g] == part) slot[g] = n_local++;
    }
  }
  t.ids_.resize(n_local);
  t.global_.resize(n_local);
  t.name_end_.resize(n_local);
  // The local vertices' names one after another (slot order), found by where each ends.
  auto name_of = [&](uint32_t g) -> const std::string& {
    return vertices != nullptr ? vertices->owned_names[slot[g]] : input->external_ids[g];
  };
  tbb::parallel_for(uint32_t{0}, n_global, [&](uint32_t g) {
    if (slot[g] == kNoVertex) return;
    t.ids_[slot[g]] = uuids[g];
    t.global_[slot[g]] = global_of(g);
    t.name_end_[slot[g]] = name_of(g).size();
  });
  std::partial_sum(t.name_end_.begin(), t.name_end_.end(), t.name_end_.begin());
  t.names_.resize(n_local == 0 ? 0 : t.name_end_.back());
  tbb::parallel_for(uint32_t{0}, n_global, [&](uint32_t g) {
    if (slot[g] == kNoVertex) return;
    const std::string& name = name_of(g);
    std::memcpy(t.names_.data() + t.name_end_[slot[g]] - name.size(), name.data(), name.size());
  });
  if (release != nullptr) Release(release->external_ids);
  if (vertices != nullptr) Release(vertices->owned_names);

  // Remote endpoints, ordered by (partition, global index), get the slots after the local ones. A
  // symmetric input's edge also stands for its reverse, so either remote end is needed.
  const size_t m = edges.size();
  const bool symmetric = edges.symmetric();
  // Oriented pairs (PartEdges) are a symmetric part's directed edges, keyed by local index.
  const bool oriented = edges.oriented();
  if (oriented && (vertices == nullptr || !vertices->remote_ends_only || !symmetric)) {
    return absl::InternalError("oriented edges come only with a symmetric part's vertex facts");
  }
  t.symmetric_ = symmetric;
  std::vector<uint8_t> needed(n_global, 0);
  if (vertices != nullptr && vertices->remote_ends_only) {
    tbb::parallel_for(uint32_t{0}, n_global, [&](uint32_t g) { needed[g] = slot[g] == kNoVertex; });
  } else if (n_local < n_global) {
    // With every vertex local (one part) there are no remote ends: no pass over the edges.
    tbb::parallel_for(size_t{0}, m, [&](size_t e) {
      const uint32_t s = edges.src(e), d = edges.dst(e);
      if (slot[s] != kNoVertex && slot[d] == kNoVertex) {
        std::atomic_ref<uint8_t>(needed[d]).store(1, std::memory_order_relaxed);
      }
      if ((in_edges || symmetric) && slot[d] != kNoVertex && slot[s] == kNoVertex) {
        std::atomic_ref<uint8_t>(needed[s]).store(1, std::memory_order_relaxed);
      }
    });
  }
  // In (owner, global index) order: each partition's remotes in the order in which their owner
  // numbers its own vertices and lists the values it relays by position
  // (Engine::ConnectBroadcast), so that relayed values land in increasing slots. In (owner, UUID)
  // order they were scattered over the table, and decoding them took three times as long.
  std::vector<uint64_t> keyed;  // (global index, input vertex), sorted by global index
  uint32_t max_global = 0;
  bool sorted = true;
  for (uint32_t g = 0; g < n_global; ++g) {
    if (!needed[g]) continue;
    const uint32_t global = global_of(g);
    sorted = sorted && (keyed.empty() || global > keyed.back() >> 32);
    max_global = std::max(max_global, global);
    keyed.push_back(uint64_t{global} << 32 | g);
  }
  if (!sorted) {
    std::vector<uint64_t> scratch;
    SortByHighWord(keyed, max_global, scratch);
  }
  t.remote_partition_begin_.assign(split.size() + 1, 0);
  for (uint64_t k : keyed) ++t.remote_partition_begin_[owner[static_cast<uint32_t>(k)] + 1];
  std::partial_sum(t.remote_partition_begin_.begin(), t.remote_partition_begin_.end(),
                   t.remote_partition_begin_.begin());
  std::vector<uint32_t> remotes(keyed.size());
  {
    std::vector<uint32_t> cursor(t.remote_partition_begin_.begin(),
                                 t.remote_partition_begin_.end() - 1);
    for (uint64_t k : keyed) {
      const auto g = static_cast<uint32_t>(k);
      remotes[cursor[owner[g]]++] = g;
    }
  }
  Release(keyed);
  if (static_cast<uint64_t>(n_local) + remotes.size() >= kNoVertex) {
    return absl::OutOfRangeError("too many vertices for 32-bit edge slots");
  }
  t.remote_ids_.resize(remotes.size());
  t.remote_global_.resize(remotes.size());
  for (size_t r = 0; r < remotes.size(); ++r) t.remote_global_[r] = global_of(remotes[r]);
  if (vertices != nullptr) Release(vertices->global);
  t.remote_partition_.resize(remotes.size());
  for (uint32_t r = 0; r < remotes.size(); ++r) {
    const uint32_t g = remotes[r];
    slot[g] = n_local + r;
    t.remote_ids_[r] = uuids[g];
    t.remote_partition_[r] = owner[g];
  }
  // The temporaries go before the CSR arrays are allocated, where a build peaks.
  Release(uuids);
  Release(owner);
  Release(needed);
  Release(remotes);

  // Out-edges by local source and, if asked for, in-edges by local target: each a CSR in the
  // order of the directed edges per vertex, holding the other endpoint's slot. Directed edge e is
  // stored edge e, or for e >= m in a symmetric input the reverse of stored edge e - m (dropped
  // for a self-loop, which is stored once): the order GraphInput documents. Oriented pairs
  // (PartEdges) are directed edges already, e from a local index: the same order per vertex.
  const size_t directed_m = symmetric && !oriented ? 2 * m : m;
  // heads[v], if asked for: how many of v's out-edges come from stored edges (the rest are
  // reverses), left empty if the bucket could not split there (oriented pairs then count them).
  // by(e) is the end of stored edge e that the CSR is keyed on, other(e) the one it holds (for
  // oriented pairs, the local index and the other end of pair e).
  auto build_csr = [&](auto by, auto other, std::vector<uint64_t>& offsets,
                       std::vector<uint32_t>& ends, std::vector<uint32_t>* input_edge,
                       std::vector<uint64_t>* heads) {
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
      if (heads != nullptr && bucket.has_split()) {
        heads->resize(n_local);
        tbb::parallel_for(uint32_t{0}, n_local,
                          [&](uint32_t v) { (*heads)[v] = bucket.SplitPosition(v) - offsets[v]; });
      }
      ends.resize(kept);
      if (input_edge) input_edge->resize(kept);
      bucket.Scatter([&](size_t e, uint64_t pos) {
        const size_t i = e < m ? e : e - m;
        ends[pos] = slot[e < m ? other(i) : by(i)];
        if (input_edge) (*input_edge)[pos] = static_cast<uint32_t>(i);
      });
    };
    const size_t split_at = heads == nullptr ? 0 : oriented ? edges.heads() : m;
    if (directed_m < kNoVertex) {
      StableBucket<decltype(key), uint32_t> bucket(directed_m, n_local, key, split_at);
      fill(bucket);
    } else {
      StableBucket<decltype(key), uint64_t> bucket(directed_m, n_local, key, split_at);
      fill(bucket);
    }
  };
  // A symmetric input's in-edges are its out-edges, in another order: v's out-edges are its stored
  // edges (v first) then the reverses of the stored edges into v; its in-edges are the stored
  // edges into v then the reverses of its stored edges. Unless v has a self-loop (stored once,
  // among both firsts), that is a rotation of v's out-edges by heads[v], which saves the in-CSR's
  // counting sort; with a self-loop the in-CSR is sorted like a directed input's.
  std::vector<uint64_t> heads;
  const bool rotate =
      symmetric && in_edges && (input_edge_of_in == nullptr || input_edge_of_out != nullptr);
  // The vertex tables' temporaries are gone; what malloc kept of them goes back before the CSR.
  ReturnFreedMemory();
  auto src = [&](size_t e) { return edges.src(e); };
  auto dst = [&](size_t e) { return edges.dst(e); };
  build_csr(src, dst, t.out_offsets_, t.out_targets_, input_edge_of_out, rotate ? &heads : nullptr);
  if (rotate && oriented && heads.empty()) {
    // The bucket did not split at the heads (none, all, or too many keys to split): count them.
    heads.assign(n_local, 0);
    for (size_t e = 0; e < edges.heads(); ++e) {
      const uint32_t v = edges.src(e);
      if (v < n_local) ++heads[v];
    }
  }
  bool rotated = false;
  if (rotate && (!heads.empty() || oriented)) {  // oriented: heads counted (none if no vertex)
    std::atomic<bool> self_loop{false};
    tbb::parallel_for(uint32_t{0}, n_local, [&](uint32_t v) {
      const uint64_t b = t.out_offsets_[v];
      for (uint64_t j = b, end = b + heads[v]; j < end; ++j) {
        if (t.out_targets_[j] == v) {
          self_loop.store(true, std::memory_order_relaxed);
          return;
        }
      }
    });
    if (!self_loop.load()) {
      edges.Release();
      auto rotate_into = [&](const std::vector<uint32_t>& from, std::vector<uint32_t>& to) {
        to.resize(from.size());
        tbb::parallel_for(uint32_t{0}, n_local, [&](uint32_t v) {
          const auto b = from.begin() + static_cast<ptrdiff_t>(t.out_offsets_[v]);
          const auto e = from.begin() + static_cast<ptrdiff_t>(t.out_offsets_[v + 1]);
          std::rotate_copy(b, b + static_cast<ptrdiff_t>(heads[v]), e,
                           to.begin() + static_cast<ptrdiff_t>(t.out_offsets_[v]));
        });
      };
      t.in_offsets_ = t.out_offsets_;
      rotate_into(t.out_targets_, t.in_sources_);
      if (input_edge_of_in != nullptr) rotate_into(*input_edge_of_out, *input_edge_of_in);
      rotated = true;
    }
  }
  Release(heads);
  if (in_edges && !rotated && oriented) {
    return absl::InternalError("an oriented part's in-edges need a part without self-loops");
  }
  if (in_edges && !rotated) {
    build_csr(dst, src, t.in_offsets_, t.in_sources_, input_edge_of_in, nullptr);
  }

  // The UUID index last, after the CSR build's peak (its counters are gone by now) and, if the
  // input may go, after its edge arrays.
  edges.Release();
  if (auto st = t.IndexLocals(); !st.ok()) return st;
  // The build's temporaries go back before the engine's state and the supersteps' buffers come.
  ReturnFreedMemory();
  return t;
}

template <class LeadingOf>
void Topology::IndexBuckets(size_t n, LeadingOf leading_of, std::vector<uint32_t>& buckets,
                            uint32_t& shift) {
  buckets.clear();
  shift = 64;
  if (n < 64) return;
  // About 8 entries per bucket: 2^bits buckets.
  uint32_t bits = 0;
  while ((uint64_t{1} << (bits + 1)) * 8 <= n) ++bits;
  shift = 64 - bits;
  buckets.assign((size_t{1} << bits) + 1, static_cast<uint32_t>(n));
  // Walking down, each bucket starts where the next entry at or above it is.
  size_t r = n;
  for (size_t b = size_t{1} << bits; b-- > 0;) {
    while (r > 0 && (leading_of(r - 1) >> shift) >= b) --r;
    buckets[b] = static_cast<uint32_t>(r);
  }
}

std::vector<uint32_t> Topology::SortedByUuid(const std::vector<VertexId>& ids) {
  const auto n = static_cast<uint32_t>(ids.size());
  // Sorted with the leading bits beside each vertex (the full UUID, then the index, break ties),
  // not through `ids`, which a comparison would read at random.
  std::vector<std::pair<uint64_t, uint32_t>> sorted(n);
  tbb::parallel_for(uint32_t{0}, n, [&](uint32_t v) { sorted[v] = {LeadingBits(ids[v]), v}; });
  SortByLeadingBits(sorted, [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if (ids[a.second] != ids[b.second]) return ids[a.second] < ids[b.second];
    return a.second < b.second;
  });
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = sorted[i].second;
  return order;
}

const Topology::RemoteIndex& Topology::LazyRemoteIndex::Get(const Topology& t) const {
  if (once_ == nullptr) {  // moved from: its table is empty too
    static const RemoteIndex kEmpty;
    return kEmpty;
  }
  std::call_once(*once_, [&] {
    // Isolated: a thread waiting for the sort's tasks takes no other task that could look up a
    // remote vertex and wait on this very call.
    tbb::this_task_arena::isolate([&] {
      index_.by_id = SortedByUuid(t.remote_ids_);
      IndexBuckets(
          index_.by_id.size(),
          [&](size_t i) { return LeadingBits(t.remote_ids_[index_.by_id[i]]); }, index_.bucket,
          index_.shift);
    });
  });
  return index_;
}

absl::Status Topology::IndexLocals() {
  const uint32_t n = num_local();
  local_by_id_ = SortedByUuid(ids_);
  const std::vector<uint32_t>& sorted = local_by_id_;
  // Two external IDs with one UUID: the first vertex in local order that repeats an earlier
  // one's UUID, named with that earlier one.
  uint32_t repeat = kNoVertex, earlier = kNoVertex;
  for (uint32_t i = 1, group = 0; i < n; ++i) {
    if (ids_[sorted[i]] != ids_[sorted[i - 1]]) {
      group = i;
      continue;
    }
    if (sorted[i] < repeat) {
      repeat = sorted[i];
      earlier = sorted[group];
    }
  }
  if (repeat != kNoVertex) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vertex IDs '", std::string(external_id(repeat)), "' and '",
        std::string(external_id(earlier)), "' map to the same UUID ", ToString(ids_[repeat])));
  }
  IndexBuckets(
      n, [&](size_t i) { return LeadingBits(ids_[local_by_id_[i]]); }, local_bucket_,
      local_bucket_shift_);
  return absl::OkStatus();
}

}  // namespace lockstep::bsp
