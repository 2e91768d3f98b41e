#pragma once

// What a program that declares kNeighbourhood or kNeighbourDegrees reads besides its messages
// (docs/design.md §3.7): its vertices' higher neighbours' lists (bsp/neighbourhood.h), or the
// number of distinct neighbours of every vertex at one of its slots. They go with either strategy
// of programs that send messages (a broadcast's relay agrees on other vertices than its
// neighbours', Engine). A distributed job builds them when it sets up its peers, with the
// positions agreed there; local mode at the start of superstep 0, inside the job's compute.

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/engine/peers.h"
#include "lockstep/bsp/engine/state.h"
#include "lockstep/bsp/exchange.h"
#include "lockstep/bsp/neighbourhood.h"
#include "lockstep/bsp/program.h"
#include "lockstep/bsp/topology.h"

namespace lockstep::bsp {

template <class P>
class Neighbours {
 public:
  // k and the list's offset per vertex, and up to one listed neighbour per stored edge (a
  // directed graph's; half of them on a symmetric one) at 8 bytes with up to 5 more for bits and
  // slot, and the cut lists received and sent once at set-up; k of local and remote slots.
  static constexpr PeakBytes kPeakBytes{
      .per_vertex = (UsesNeighbourhood<P>() ? 4 + 8 : 0) + (UsesNeighbourDegrees<P>() ? 8 : 0),
      .per_edge = UsesNeighbourhood<P>() ? 13 : 0};

  // Collective (a distributed job's set-up), `mirror` the positions agreed with the peers (a
  // peer's wrong list leaves them short, which its peers find): every step is taken even after
  // one failed, then the first failure is returned.
  absl::Status Connect(const Topology& topo, Exchange& exchange, const PartitionLists& mirror) {
    absl::Status st;
    if constexpr (UsesNeighbourhood<P>()) {
      auto nb = Neighbourhood::Build(topo, &exchange, mirror);
      if (nb.ok()) {
        lists_ = std::move(*nb);
      } else {
        st = nb.status();
      }
    }
    if constexpr (UsesNeighbourDegrees<P>()) {
      absl::Status degrees = BuildDegrees(topo, &exchange, mirror);
      if (st.ok()) st = degrees;
    }
    return st;
  }

  // Before superstep 0: builds, with no peers, what Connect did not.
  absl::Status Prepare(const Topology& topo, const PartitionLists& mirror) {
    if constexpr (UsesNeighbourhood<P>()) {
      if (!lists_) {
        auto nb = Neighbourhood::Build(topo, nullptr, mirror);
        if (!nb.ok()) return nb.status();
        lists_ = std::move(*nb);
      }
    }
    if constexpr (UsesNeighbourDegrees<P>()) {
      if (slot_degree_.empty() && topo.num_local() > 0) {
        if (auto st = BuildDegrees(topo, nullptr, mirror); !st.ok()) return st;
      }
    }
    return absl::OkStatus();
  }

  // kNeighbourhood: the lists, from superstep 0 on.
  const Neighbourhood& lists() const { return *lists_; }
  // kNeighbourDegrees: k of the vertex at `slot`, from superstep 0 on.
  uint32_t degree(uint32_t slot) const { return slot_degree_[slot]; }

 private:
  absl::Status BuildDegrees(const Topology& topo, Exchange* exchange,
                            const PartitionLists& mirror) {
    absl::Status bad_peer;
    auto degrees = SlotDegrees(topo, exchange, mirror, &bad_peer);
    if (!degrees.ok()) return degrees.status();
    if (!bad_peer.ok()) return bad_peer;
    slot_degree_ = std::move(*degrees);
    return absl::OkStatus();
  }

  std::optional<Neighbourhood> lists_;
  std::vector<uint32_t> slot_degree_;
};

}  // namespace lockstep::bsp
