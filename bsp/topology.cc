#include "lockstep/bsp/topology.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "tbb/parallel_for.h"
#include "tbb/parallel_sort.h"
#include "tbb/task_arena.h"

namespace lockstep::bsp {
namespace {

// A stable, parallel counting sort of edge indexes by key: offsets[k]..offsets[k+1] are the edges
// with key k, in input order (so the layout never depends on the thread count). Edges whose key
// is kNoVertex are dropped. `place(edge, position)` is called once per kept edge.
template <class Place>
void StableBucket(const std::vector<uint32_t>& keys, uint32_t num_keys,
                  std::vector<uint64_t>& offsets, Place&& place) {
  const size_t m = keys.size();
  const size_t threads = static_cast<size_t>(tbb::this_task_arena::max_concurrency());
  // Enough chunks to keep every thread busy; few enough that chunks x keys counters stay small.
  size_t chunks = std::clamp<size_t>(m / (1 << 16), 1, 2 * threads);
  while (chunks > 1 && chunks * static_cast<size_t>(num_keys) > (size_t{1} << 27)) chunks /= 2;
  const size_t per = (m + chunks - 1) / std::max<size_t>(1, chunks);
  std::vector<std::vector<uint64_t>> counts(chunks);
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    counts[c].assign(num_keys, 0);
    const size_t end = std::min(m, (c + 1) * per);
    for (size_t e = c * per; e < end; ++e) {
      if (keys[e] != kNoVertex) ++counts[c][keys[e]];
    }
  });
  offsets.assign(static_cast<size_t>(num_keys) + 1, 0);
  // Turn counts into each chunk's first position per key, key-major.
  tbb::parallel_for(uint32_t{0}, num_keys, [&](uint32_t k) {
    uint64_t total = 0;
    for (size_t c = 0; c < chunks; ++c) total += counts[c][k];
    offsets[k + 1] = total;
  });
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  tbb::parallel_for(uint32_t{0}, num_keys, [&](uint32_t k) {
    uint64_t pos = offsets[k];
    for (size_t c = 0; c < chunks; ++c) {
      const uint64_t n = counts[c][k];
      counts[c][k] = pos;
      pos += n;
    }
  });
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    const size_t end = std::min(m, (c + 1) * per);
    for (size_t e = c * per; e < end; ++e) {
      if (keys[e] != kNoVertex) place(e, counts[c][keys[e]]++);
    }
  });
}

}  // namespace

absl::StatusOr<Topology> Topology::Build(const GraphInput& input, const partition::Range& split,
                                         uint64_t part, bool in_edges,
                                         std::vector<uint32_t>* input_edge_of_out,
                                         std::vector<uint32_t>* input_edge_of_in) {
  if (part >= split.size()) {
    return absl::OutOfRangeError(
        absl::StrCat("partition ", part, " out of range (", split.size(), " partitions)"));
  }
  const uint32_t n_global = static_cast<uint32_t>(input.num_vertices());
  Topology t(split);
  t.part_ = part;
  t.num_global_ = n_global;

  // UUIDs and owners of every input vertex; a worker reads the shared input and keeps its range.
  std::vector<VertexId> uuids(n_global);
  std::vector<uint32_t> owner(n_global);
  tbb::parallel_for(uint32_t{0}, n_global, [&](uint32_t g) {
    uuids[g] = VertexIdFromExternal(input.external_ids[g]);
    owner[g] = static_cast<uint32_t>(split.PartitionForUnchecked(uuids[g]));
  });

  // Global -> local slot; local vertices keep the input's (external ID) order.
  std::vector<uint32_t> slot(n_global, kNoVertex);
  uint32_t n_local = 0;
  for (uint32_t g = 0; g < n_global; ++g) {
    if (owner[g] == part) slot[g] = n_local++;
  }
  t.ids_.resize(n_local);
  t.global_.resize(n_local);
  t.external_.resize(n_local);
  tbb::parallel_for(uint32_t{0}, n_global, [&](uint32_t g) {
    if (slot[g] == kNoVertex) return;
    t.ids_[slot[g]] = uuids[g];
    t.global_[slot[g]] = g;
    t.external_[slot[g]] = input.external_ids[g];
  });
  t.index_.reserve(n_local);
  for (uint32_t v = 0; v < n_local; ++v) {
    if (!t.index_.emplace(t.ids_[v], v).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("vertex IDs '", t.external_[v], "' and '", t.external_[t.index_[t.ids_[v]]],
                       "' map to the same UUID ", ToString(t.ids_[v])));
    }
  }

  // Remote endpoints, ordered by (partition, UUID), get the slots after the local ones.
  const size_t m = input.num_edges();
  std::vector<uint8_t> needed(n_global, 0);
  tbb::parallel_for(size_t{0}, m, [&](size_t e) {
    const uint32_t s = input.src[e], d = input.dst[e];
    if (slot[s] != kNoVertex && slot[d] == kNoVertex) {
      std::atomic_ref<uint8_t>(needed[d]).store(1, std::memory_order_relaxed);
    }
    if (in_edges && slot[d] != kNoVertex && slot[s] == kNoVertex) {
      std::atomic_ref<uint8_t>(needed[s]).store(1, std::memory_order_relaxed);
    }
  });
  std::vector<uint32_t> remotes;
  for (uint32_t g = 0; g < n_global; ++g) {
    if (needed[g]) remotes.push_back(g);
  }
  std::sort(remotes.begin(), remotes.end(), [&](uint32_t a, uint32_t b) {
    return owner[a] != owner[b] ? owner[a] < owner[b] : uuids[a] < uuids[b];
  });
  if (static_cast<uint64_t>(n_local) + remotes.size() >= kNoVertex) {
    return absl::OutOfRangeError("too many vertices for 32-bit edge slots");
  }
  t.remote_ids_.resize(remotes.size());
  t.remote_global_ = remotes;
  t.remote_partition_.resize(remotes.size());
  t.remote_partition_begin_.assign(split.size() + 1, 0);
  for (uint32_t r = 0; r < remotes.size(); ++r) {
    const uint32_t g = remotes[r];
    slot[g] = n_local + r;
    t.remote_ids_[r] = uuids[g];
    t.remote_partition_[r] = owner[g];
    ++t.remote_partition_begin_[owner[g] + 1];
  }
  t.remote_index_.reserve(remotes.size());
  for (uint32_t r = 0; r < remotes.size(); ++r) t.remote_index_.emplace(t.remote_ids_[r], r);
  std::partial_sum(t.remote_partition_begin_.begin(), t.remote_partition_begin_.end(),
                   t.remote_partition_begin_.begin());

  // Out-edges of local sources in CSR, in input order per source.
  std::vector<uint32_t> keys(m);
  tbb::parallel_for(size_t{0}, m, [&](size_t e) {
    const uint32_t s = slot[input.src[e]];
    keys[e] = s < n_local ? s : kNoVertex;
  });
  uint64_t kept = 0;
  for (uint32_t k : keys) kept += k != kNoVertex;
  t.out_targets_.resize(kept);
  if (input_edge_of_out) input_edge_of_out->resize(kept);
  StableBucket(keys, n_local, t.out_offsets_, [&](size_t e, uint64_t pos) {
    t.out_targets_[pos] = slot[input.dst[e]];
    if (input_edge_of_out) (*input_edge_of_out)[pos] = static_cast<uint32_t>(e);
  });

  if (in_edges) {
    tbb::parallel_for(size_t{0}, m, [&](size_t e) {
      const uint32_t d = slot[input.dst[e]];
      keys[e] = d < n_local ? d : kNoVertex;
    });
    kept = 0;
    for (uint32_t k : keys) kept += k != kNoVertex;
    t.in_sources_.resize(kept);
    if (input_edge_of_in) input_edge_of_in->resize(kept);
    StableBucket(keys, n_local, t.in_offsets_, [&](size_t e, uint64_t pos) {
      t.in_sources_[pos] = slot[input.src[e]];
      if (input_edge_of_in) (*input_edge_of_in)[pos] = static_cast<uint32_t>(e);
    });
  }
  return t;
}

}  // namespace lockstep::bsp
