#pragma once

// The lists a distributed job's relay batches address by position instead of by UUID
// (docs/design.md §5.5), agreed once with every peer before the first superstep
// (StepEngine::ConnectPeers): for each peer, what its positions stand for here. A program that
// sends messages agrees on the remote vertices each partition addresses in the other (their
// UUIDs travel, once); a broadcast on the vertices whose values each partition sends the other
// (both sides list them in global-index order, so only a length and a digest travel).
//
// Each agreement returns the exchange's error at once (no further collective step can be taken),
// or else the status of the agreement: a peer that sent a wrong list fails it only after every
// collective step was taken, and the engine then takes the remaining ones (its neighbours'
// set-up) before it fails, so that no process waits for one that has given up.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

// Per partition, a list of this partition's vertices (local indexes, or indexes into the remote
// table).
using PartitionLists = std::vector<std::vector<uint32_t>>;

class Peers {
 public:
  // How many UUIDs AgreeByIds sends each peer per step (at least 1; tests take small steps).
  void SetListStep(size_t step) { list_step_ = std::max<size_t>(1, step); }

  // Whether an agreement succeeded: batches then address by position.
  bool connected() const { return connected_; }
  // Per sending partition, what its positions stand for here: a local vertex for messages, a
  // remote vertex for published values. Also what the neighbours' set-up sends by (neighbours.h).
  const PartitionLists& mirror() const { return mirror_; }

  // Whether `exchange` joins this engine's partition of the split, as the agreements need.
  static absl::Status CheckExchange(const Exchange& exchange, const Topology& topo) {
    const uint32_t parts = static_cast<uint32_t>(topo.split().size());
    const uint32_t self = static_cast<uint32_t>(topo.part());
    if (exchange.size() != parts || exchange.rank() != self) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot set up the relay: the exchange joins process ", exchange.rank(), " of ",
          exchange.size(), ", but this engine holds partition ", self, " of ", parts));
    }
    return absl::OkStatus();
  }

  // For programs that send messages: to each peer q, as UUIDs, the remote vertices this partition
  // will address in q by position (its remote table's slice for q), each looked up once, here,
  // by the receiver: the lookups that the message path no longer does. The lists go in steps of
  // at most the list step per peer, so that a worker never holds them whole as bytes (16 bytes a
  // vertex, its remote table's size); each step's batch is led by a byte: whether its sender has
  // more to send.
  absl::StatusOr<absl::Status> AgreeByIds(Exchange& exchange, const Topology& topo) {
    const uint32_t parts = static_cast<uint32_t>(topo.split().size());
    const uint32_t self = static_cast<uint32_t>(topo.part());
    PartitionLists mirror(parts);
    std::vector<size_t> sent(parts, 0);
    absl::Status failed;
    for (bool more = true; more;) {
      std::vector<std::string> outgoing = NextIdStep(topo, sent);
      auto incoming = exchange.AllToAll(std::move(outgoing));
      if (!incoming.ok()) return incoming.status();
      if (incoming->size() != parts) {
        return absl::InternalError(absl::StrCat("cannot set up the relay: ", incoming->size(),
                                                " lists for ", parts, " partitions"));
      }
      more = false;
      for (uint32_t p = 0; p < parts; ++p) {
        const std::string& bytes = (*incoming)[p];
        if (bytes.empty()) {
          return absl::DataLossError(
              absl::StrCat("cannot set up the relay: partition ", p, " sent an empty step"));
        }
        more = more || bytes[0] != 0;
        if (p != self && failed.ok()) {
          failed = TakeIds(topo, p, std::string_view(bytes).substr(1), mirror[p]);
        }
      }
    }
    mirror_ = std::move(mirror);
    connected_ = failed.ok();
    return failed;
  }

  // For broadcasts: partition p sends partition q the values of boundary[q] by position, and q
  // holds those vertices as its remote in-neighbours in p (`remote_source`, by remote index).
  // Both sides list them in global-index order (the load's numbering of the whole graph, which
  // both hold for these vertices), so no vertex needs naming: each sender sends each peer its
  // list's length and a digest of its vertices' global indexes and UUIDs, and the receiver checks
  // them against its own list, which its remote table holds in that order. (The lists went as
  // UUIDs, 16 bytes a vertex, each looked up in the remote table: about 4% of the workers' CPU in
  // a 1-iteration PageRank job at scale 20.) Sorts each boundary list into that order.
  absl::StatusOr<absl::Status> AgreeByDigest(Exchange& exchange, const Topology& topo,
                                             PartitionLists& boundary,
                                             const std::vector<uint8_t>& remote_source) {
    const uint32_t parts = static_cast<uint32_t>(topo.split().size());
    absl::Status failed;
    std::vector<std::string> outgoing = DigestHeads(topo, boundary, failed);
    auto incoming = exchange.AllToAll(std::move(outgoing));
    if (!incoming.ok()) return incoming.status();
    if (incoming->size() != parts) {
      return absl::InternalError(absl::StrCat("cannot set up the relay: ", incoming->size(),
                                              " lists for ", parts, " partitions"));
    }
    PartitionLists mirror(parts);
    for (uint32_t p = 0; p < parts && failed.ok(); ++p) {
      if (p == static_cast<uint32_t>(topo.part())) continue;
      failed = CheckDigest(topo, p, (*incoming)[p], remote_source, mirror[p]);
    }
    mirror_ = std::move(mirror);
    connected_ = failed.ok();
    return failed;
  }

 private:
  // A digest of a set of vertices (their global indexes and UUIDs): a sum of a hash of each, so
  // that the receiver adds its vertices in its remote table's order, reading the UUIDs in turn.
  struct ListDigest {
    uint64_t value = 0;
    static uint64_t Mix(uint64_t x) {
      x ^= x >> 30;
      x *= 0xbf58476d1ce4e5b9ULL;
      x ^= x >> 27;
      x *= 0x94d049bb133111ebULL;
      return x ^ (x >> 31);
    }
    void Add(uint32_t global, const VertexId& id) {
      uint64_t half[2];
      std::memcpy(half, id.data, sizeof(half));
      value += Mix(Mix(half[0] ^ uint64_t{global} << 32 ^ global) ^ half[1]);
    }
  };

  // The next step's batch for each peer: a byte (whether this partition has more to send after
  // it), then up to the list step's UUIDs of its list for the peer; advances `sent`.
  std::vector<std::string> NextIdStep(const Topology& topo, std::vector<size_t>& sent) const {
    const uint32_t parts = static_cast<uint32_t>(topo.split().size());
    const uint32_t self = static_cast<uint32_t>(topo.part());
    const std::vector<uint32_t>& begin = topo.remote_partition_begin();
    auto list_size = [&](uint32_t q) -> size_t { return q == self ? 0 : begin[q + 1] - begin[q]; };
    std::vector<std::string> outgoing(parts);
    bool mine = false;
    for (uint32_t q = 0; q < parts; ++q) {
      const size_t end = std::min(list_size(q), sent[q] + list_step_);
      outgoing[q].reserve(1 + 16 * (end - sent[q]));
      outgoing[q].push_back('\0');
      for (; sent[q] < end; ++sent[q]) {
        const VertexId& id = topo.remote_id(begin[q] + static_cast<uint32_t>(sent[q]));
        outgoing[q].append(reinterpret_cast<const char*>(id.data), sizeof(id.data));
      }
      mine = mine || sent[q] < list_size(q);
    }
    for (std::string& o : outgoing) o[0] = mine ? 1 : 0;
    return outgoing;
  }

  // Maps the next UUIDs of partition p's list to local vertices.
  static absl::Status TakeIds(const Topology& topo, uint32_t p, std::string_view bytes,
                              std::vector<uint32_t>& mirror) {
    if (bytes.size() % 16 != 0) {
      return absl::DataLossError(absl::StrCat("cannot set up the relay: partition ", p,
                                              " sent a list that is not 16-byte UUIDs"));
    }
    for (size_t i = 0; i < bytes.size(); i += 16) {
      VertexId id;
      std::memcpy(id.data, bytes.data() + i, 16);
      const uint32_t v = topo.Find(id);
      if (v == kNoVertex) {
        return absl::NotFoundError(
            absl::StrCat("cannot set up the relay: partition ", p, " has an edge to vertex ",
                         ToString(id), ", which partition ", topo.part(), " does not have"));
      }
      mirror.push_back(v);
    }
    return absl::OkStatus();
  }

  // To each peer q: the length of boundary[q] and its digest, the list put in global-index order
  // first (a loaded part numbers its vertices in that order already). Two vertices with one
  // global index fail the agreement, after the exchange.
  static std::vector<std::string> DigestHeads(const Topology& topo, PartitionLists& boundary,
                                              absl::Status& failed) {
    const uint32_t parts = static_cast<uint32_t>(topo.split().size());
    const uint32_t self = static_cast<uint32_t>(topo.part());
    std::vector<std::string> outgoing(parts);
    for (uint32_t q = 0; q < parts; ++q) {
      if (q == self) continue;
      std::vector<uint32_t>& list = boundary[q];
      auto by_global = [&](uint32_t a, uint32_t b) {
        return topo.global_index(a) < topo.global_index(b);
      };
      if (!std::is_sorted(list.begin(), list.end(), by_global)) {
        std::sort(list.begin(), list.end(), by_global);
      }
      ListDigest digest;
      bool increasing = true;
      for (size_t i = 0; i < list.size(); ++i) {
        const uint32_t g = topo.global_index(list[i]);
        increasing = increasing && (i == 0 || g > topo.global_index(list[i - 1]));
        digest.Add(g, topo.id(list[i]));
      }
      if (!increasing && failed.ok()) {
        failed = absl::InternalError(absl::StrCat(
            "cannot set up the relay: two vertices of partition ", self, " share a global index"));
      }
      const uint64_t head[2] = {list.size(), digest.value};
      outgoing[q].assign(reinterpret_cast<const char*>(head), sizeof(head));
    }
    return outgoing;
  }

  // Checks partition p's length and digest against this partition's remote in-neighbours in p
  // (each partition's remote vertices are in global-index order in the remote table), listing
  // them as `mirror`.
  static absl::Status CheckDigest(const Topology& topo, uint32_t p, const std::string& bytes,
                                  const std::vector<uint8_t>& remote_source,
                                  std::vector<uint32_t>& mirror) {
    const uint32_t self = static_cast<uint32_t>(topo.part());
    const uint32_t n = topo.num_local();
    const std::vector<uint32_t>& begin = topo.remote_partition_begin();
    uint64_t head[2];
    if (bytes.size() != sizeof(head)) {
      return absl::DataLossError(absl::StrCat("cannot set up the relay: partition ", p, " sent ",
                                              bytes.size(),
                                              " bytes for a list's length and digest"));
    }
    std::memcpy(head, bytes.data(), sizeof(head));
    ListDigest digest;
    bool increasing = true;
    uint32_t last_global = 0;
    mirror.reserve(static_cast<size_t>(std::count(
        remote_source.begin() + begin[p], remote_source.begin() + begin[p + 1], uint8_t{1})));
    for (uint32_t r = begin[p]; r < begin[p + 1]; ++r) {
      if (!remote_source[r]) continue;
      const uint32_t g = topo.SlotGlobalIndex(n + r);
      increasing = increasing && (mirror.empty() || g > last_global);
      last_global = g;
      mirror.push_back(r);
      digest.Add(g, topo.remote_id(r));
    }
    if (head[0] != mirror.size()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot set up the relay: partition ", p, " would send the values of ",
                       head[0], " vertices, but partition ", self, " has ", mirror.size(),
                       " remote in-neighbours in partition ", p));
    }
    if (!increasing) {
      return absl::InternalError(
          absl::StrCat("cannot set up the relay: two remote vertices of partition ", self,
                       " in partition ", p, " share a global index"));
    }
    if (head[1] != digest.value) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot set up the relay: partition ", p, " would send the values of ",
                       head[0], " vertices that are not the ", mirror.size(),
                       " remote in-neighbours partition ", self, " has in partition ", p));
    }
    return absl::OkStatus();
  }

  PartitionLists mirror_;
  bool connected_ = false;
  size_t list_step_ = size_t{1} << 15;
};

}  // namespace lockstep::bsp
