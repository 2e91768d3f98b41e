#include "lockstep/apps/lcc/lcc.h"

#include <algorithm>
#include <bit>
#include <set>

namespace lockstep::apps::lcc {
namespace {

const Neighbour* FindNeighbour(const std::vector<Neighbour>& ns, uint32_t global) {
  auto it = std::lower_bound(ns.begin(), ns.end(), global,
                             [](const Neighbour& n, uint32_t g) { return n.global < g; });
  return it != ns.end() && it->global == global ? &*it : nullptr;
}

// The degree order: by k, then by global index.
bool Below(uint64_t k_a, uint32_t a, uint64_t k_b, uint32_t b) {
  return k_a != k_b ? k_a < k_b : a < b;
}

}  // namespace

void Program::Compute(bsp::Context<Program>& ctx, std::span<const Message> messages) const {
  Value& me = ctx.value();
  const uint64_t s = ctx.superstep();
  const uint32_t self = ctx.global_index();
  if (s == 0) {
    auto add = [&](uint32_t slot, uint32_t bit) {
      if (ctx.IsSelf(slot)) return;
      me.neighbours.push_back({ctx.SlotGlobalIndex(slot), slot, 0, bit});
    };
    for (uint32_t slot : ctx.out_slots()) add(slot, 1);
    for (uint32_t slot : ctx.in_slots()) add(slot, 2);
    std::sort(me.neighbours.begin(), me.neighbours.end(),
              [](const Neighbour& a, const Neighbour& b) {
                return a.global != b.global ? a.global < b.global : a.bits < b.bits;
              });
    // Merge parallel edges and both directions into one neighbour.
    size_t out = 0;
    for (size_t i = 0; i < me.neighbours.size(); ++i) {
      if (out > 0 && me.neighbours[out - 1].global == me.neighbours[i].global) {
        me.neighbours[out - 1].bits |= me.neighbours[i].bits;
      } else {
        me.neighbours[out++] = me.neighbours[i];
      }
    }
    me.neighbours.resize(out);
    me.neighbours.shrink_to_fit();
    me.k = out;
    for (const Neighbour& n : me.neighbours) {
      ctx.Send(n.slot, Message{Message::kDegree, static_cast<uint32_t>(me.k), self, 0});
    }
    return;
  }

  thread_local std::vector<uint64_t> credit;  // per neighbour, this superstep
  credit.assign(me.neighbours.size(), 0);
  bool any_credit = false;
  for (const Message& m : messages) {
    switch (m.kind) {
      case Message::kDegree: {
        auto* n = const_cast<Neighbour*>(FindNeighbour(me.neighbours, m.b));
        if (n != nullptr) n->degree = m.a;
        break;
      }
      case Message::kEntry: {
        // From x, the lowest corner of the wedge x < self < z: a triangle if z is our neighbour.
        // Each corner is credited with the directed edges between the other two.
        const Neighbour* z = FindNeighbour(me.neighbours, m.b);
        if (z == nullptr) break;
        const Neighbour* x = FindNeighbour(me.neighbours, m.a);
        me.edges += std::popcount(m.c);
        credit[x - me.neighbours.data()] += std::popcount(z->bits);
        credit[z - me.neighbours.data()] += std::popcount(x->bits);
        any_credit = true;
        break;
      }
      case Message::kCredit:
        me.edges += (uint64_t{m.b} << 32) | m.a;
        break;
    }
  }
  if (any_credit) {
    for (size_t i = 0; i < me.neighbours.size(); ++i) {
      if (credit[i] == 0) continue;
      ctx.Send(me.neighbours[i].slot, Message{Message::kCredit, static_cast<uint32_t>(credit[i]),
                                              static_cast<uint32_t>(credit[i] >> 32), 0});
    }
  }
  if (s >= 1 && s <= phases) {
    // Phase p = s - 1: for each higher neighbour y with y mod phases == p, send y the higher
    // neighbours z of self ranked above y: y closes the triangle self < y < z if z is its
    // neighbour too. The volume is the wedges centred at their lowest vertex, which degree
    // ordering keeps small (a hub has few higher neighbours).
    thread_local std::vector<const Neighbour*> higher;
    higher.clear();
    for (const Neighbour& n : me.neighbours) {
      if (Below(me.k, self, n.degree, n.global)) higher.push_back(&n);
    }
    std::sort(higher.begin(), higher.end(), [](const Neighbour* a, const Neighbour* b) {
      return Below(a->degree, a->global, b->degree, b->global);
    });
    const uint32_t p = static_cast<uint32_t>(s - 1);
    for (size_t i = 0; i < higher.size(); ++i) {
      const Neighbour& y = *higher[i];
      if (y.global % phases != p) continue;
      for (size_t j = i + 1; j < higher.size(); ++j) {
        // z's bits are seen from self: 1 for self->z, 2 for z->self; only the count matters.
        ctx.Send(y.slot, Message{Message::kEntry, self, higher[j]->global, higher[j]->bits});
      }
    }
  }
  if (s == phases + 1) me.neighbours = {};  // enumeration done; only credits arrive now
  if (s >= phases + 2) ctx.VoteToHalt();
}

absl::StatusOr<Program> App::Make(const bsp::Params& params, const bsp::GraphFacts&) {
  auto phases = bsp::ParamInt(params, "phases");
  if (!phases.ok()) return phases.status();
  if (*phases < 1 || *phases > 1 << 20) {
    return bsp::ParamError("phases", "must be between 1 and 1048576");
  }
  Program p;
  p.phases = static_cast<uint32_t>(*phases);
  return p;
}

catalogue::AppInfo Info() {
  catalogue::AppInfo info;
  info.name = "lcc";
  info.summary = "local clustering coefficient (directed, Graphalytics semantics)";
  info.validation = catalogue::ValidationRule::kEpsilon;
  info.params = {{"phases", "1",
                  "spread the triangle enumeration over this many supersteps "
                  "(bounds message memory)"}};
  info.make_runner = [](std::ostream* report) -> std::unique_ptr<bsp::JobRunner> {
    return std::make_unique<bsp::ProgramRunner<App>>(report);
  };
  return info;
}

std::vector<double> Oracle(const bsp::GraphInput& stored) {
  // The oracle reads every directed edge from the arrays.
  const bsp::GraphInput input = bsp::WithReverseEdges(stored);
  const size_t n = input.num_vertices();
  std::vector<std::set<uint32_t>> nbrs(n), out(n);
  for (size_t e = 0; e < input.num_edges(); ++e) {
    const uint32_t a = input.src[e], b = input.dst[e];
    if (a == b) continue;
    nbrs[a].insert(b);
    nbrs[b].insert(a);
    out[a].insert(b);
  }
  std::vector<double> lcc(n, 0.0);
  for (size_t v = 0; v < n; ++v) {
    const double k = static_cast<double>(nbrs[v].size());
    if (k < 2) continue;
    uint64_t edges = 0;
    for (uint32_t a : nbrs[v]) {
      for (uint32_t b : out[a]) edges += nbrs[v].count(b);
    }
    lcc[v] = static_cast<double>(edges) / (k * (k - 1));
  }
  return lcc;
}

}  // namespace lockstep::apps::lcc
