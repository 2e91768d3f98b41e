// The engine's neighbour lists (bsp/neighbourhood.h): the intersection of sorted lists, each
// vertex's neighbours ranked above it in degree order with their edge directions, the same lists
// on 2 and 3 parts with the remote ones received from their owners, and a peer's bad list refused.
#include "lockstep/bsp/neighbourhood.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "test_graphs.h"
#include "util/thread_exchange.h"

namespace lockstep::bsp {
namespace {

using bsptest::Edge;
using bsptest::MakeInput;
using bsptest::Split;

NeighbourList ListOf(const std::vector<uint64_t>& keys) {
  return NeighbourList(keys.data(), nullptr, static_cast<uint32_t>(keys.size()));
}

TEST(ForEachCommonTest, FindsEveryCommonEntryByMergeOrGallop) {
  std::mt19937_64 rng(5);
  // Equal sizes merge; a short list against a long one gallops.
  for (const auto& [na, nb] : {std::pair{200, 300}, std::pair{5, 4000}, std::pair{4000, 3},
                               std::pair{0, 10}, std::pair{1, 1}}) {
    for (uint64_t range : {uint64_t{50}, uint64_t{5000}}) {
      std::set<uint64_t> a, b;
      std::uniform_int_distribution<uint64_t> any(0, range);
      while (a.size() < static_cast<size_t>(std::min<uint64_t>(na, range / 2))) a.insert(any(rng));
      while (b.size() < static_cast<size_t>(std::min<uint64_t>(nb, range / 2))) b.insert(any(rng));
      const std::vector<uint64_t> va(a.begin(), a.end()), vb(b.begin(), b.end());
      std::vector<std::pair<uint32_t, uint32_t>> got, want;
      ForEachCommon(ListOf(va), ListOf(vb),
                    [&](uint32_t i, uint32_t j) { got.emplace_back(i, j); });
      for (uint32_t i = 0; i < va.size(); ++i) {
        const auto it = std::lower_bound(vb.begin(), vb.end(), va[i]);
        if (it != vb.end() && *it == va[i]) want.emplace_back(i, it - vb.begin());
      }
      EXPECT_EQ(got, want) << na << " against " << nb << " in [0, " << range << "]";
    }
  }
}

// A directed graph with a hub, parallel edges both ways, a self-loop and an isolated pair.
std::vector<Edge> Edges() {
  std::vector<Edge> edges;
  for (int v = 1; v < 40; ++v) edges.push_back({"0", std::to_string(v)});
  for (int v = 1; v < 39; ++v) edges.push_back({std::to_string(v), std::to_string(v + 1)});
  for (int v = 1; v < 30; v += 3) edges.push_back({std::to_string(v + 2), std::to_string(v)});
  edges.push_back({"5", "6"});
  edges.push_back({"6", "5"});
  edges.push_back({"7", "7"});
  edges.push_back({"50", "51"});
  return edges;
}

// The lists computed directly: by global index, the (key, bits) of the neighbours ranked above.
std::vector<std::vector<std::pair<uint64_t, uint32_t>>> Expected(const GraphInput& input,
                                                                 std::vector<uint32_t>& k) {
  const size_t n = input.num_vertices();
  std::vector<std::map<uint32_t, uint32_t>> bits(n);
  for (size_t e = 0; e < input.src.size(); ++e) {
    const uint32_t a = input.src[e], b = input.dst[e];
    if (a == b) continue;
    bits[a][b] |= 1;
    bits[b][a] |= 2;
    if (input.symmetric) bits[a][b] = bits[b][a] = 3;
  }
  k.assign(n, 0);
  for (size_t v = 0; v < n; ++v) k[v] = static_cast<uint32_t>(bits[v].size());
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> lists(n);
  for (uint32_t v = 0; v < n; ++v) {
    for (const auto& [u, b] : bits[v]) {
      if (RankKey(k[u], u) > RankKey(k[v], v)) lists[v].emplace_back(RankKey(k[u], u), b);
    }
    std::sort(lists[v].begin(), lists[v].end());
  }
  return lists;
}

std::vector<std::pair<uint64_t, uint32_t>> Entries(const NeighbourList& list) {
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (uint32_t i = 0; i < list.size(); ++i) out.emplace_back(list.key(i), list.bits(i));
  return out;
}

// mirror[q] for part p: the local vertices of p that part q holds as remotes, in q's order (what
// Engine::ConnectPeers agrees).
std::vector<std::vector<uint32_t>> MirrorOf(const std::vector<Topology>& topos, uint32_t p) {
  std::vector<std::vector<uint32_t>> mirror(topos.size());
  for (uint32_t q = 0; q < topos.size(); ++q) {
    if (q == p) continue;
    const auto& begin = topos[q].remote_partition_begin();
    for (uint32_t r = begin[p]; r < begin[p + 1]; ++r) {
      mirror[q].push_back(topos[p].Find(topos[q].remote_id(r)));
    }
  }
  return mirror;
}

// Builds every part's lists at once, each on its own thread; `wrap` may stand between a part and
// its exchange.
// With `degrees`, then SlotDegrees on every part too (degrees[p], another collective step).
std::vector<absl::StatusOr<Neighbourhood>> BuildAll(
    const std::vector<Topology>& topos,
    const std::function<std::unique_ptr<Exchange>(std::unique_ptr<Exchange>)>& wrap = nullptr,
    std::vector<std::vector<uint32_t>>* degrees = nullptr) {
  const uint32_t parts = static_cast<uint32_t>(topos.size());
  auto group = std::make_shared<test::ThreadExchangeGroup>(parts);
  std::vector<absl::StatusOr<Neighbourhood>> built(parts, absl::UnknownError("not built"));
  if (degrees != nullptr) degrees->assign(parts, {});
  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < parts; ++p) {
    threads.emplace_back([&, p] {
      std::unique_ptr<Exchange> ex = std::make_unique<test::ThreadExchange>(group, p);
      if (wrap) ex = wrap(std::move(ex));
      Exchange* exchange = parts > 1 ? ex.get() : nullptr;
      built[p] = Neighbourhood::Build(topos[p], exchange, MirrorOf(topos, p));
      if (degrees != nullptr) {
        absl::Status bad_peer;
        auto d = SlotDegrees(topos[p], exchange, MirrorOf(topos, p), &bad_peer);
        EXPECT_TRUE(d.ok() && bad_peer.ok());
        if (d.ok()) (*degrees)[p] = *std::move(d);
      }
    });
  }
  for (auto& t : threads) t.join();
  return built;
}

std::vector<Topology> Parts(const GraphInput& input, uint32_t parts) {
  std::vector<Topology> topos;
  for (uint32_t p = 0; p < parts; ++p) {
    auto t = Topology::Build(input, Split(parts), p, !input.symmetric, nullptr, nullptr);
    EXPECT_TRUE(t.ok()) << t.status();
    topos.push_back(*std::move(t));
  }
  return topos;
}

TEST(NeighbourhoodTest, EveryPartHasTheNeighboursRankedAboveAndTheirListsOnAnyPartCount) {
  for (bool symmetric : {false, true}) {
    GraphInput input = MakeInput(Edges());
    input.symmetric = symmetric;
    std::vector<uint32_t> k;
    const auto expected = Expected(input, k);
    for (uint32_t parts : {1u, 2u, 3u}) {
      SCOPED_TRACE(::testing::Message() << parts << " parts, symmetric " << symmetric);
      const std::vector<Topology> topos = Parts(input, parts);
      std::vector<std::vector<uint32_t>> degrees;
      auto built = BuildAll(topos, nullptr, &degrees);
      uint64_t listed = 0, remote_lists = 0;
      for (uint32_t p = 0; p < parts; ++p) {
        ASSERT_TRUE(built[p].ok()) << built[p].status();
        const Topology& topo = topos[p];
        const Neighbourhood& nb = *built[p];
        // Every slot's k, remote ones from their owners.
        ASSERT_EQ(degrees[p].size(), uint64_t{topo.num_local()} + topo.num_remote());
        for (uint32_t slot = 0; slot < degrees[p].size(); ++slot) {
          EXPECT_EQ(degrees[p][slot], k[topo.SlotGlobalIndex(slot)]);
        }
        for (uint32_t v = 0; v < topo.num_local(); ++v) {
          const uint32_t g = topo.global_index(v);
          EXPECT_EQ(nb.degree(v), k[g]) << input.external_ids[g];
          const NeighbourList list = nb.Higher(v);
          ASSERT_EQ(Entries(list), expected[g]) << input.external_ids[g];
          for (uint32_t i = 0; i < list.size(); ++i) {
            // The slot reaches the neighbour, and its own list came along.
            EXPECT_EQ(topo.SlotGlobalIndex(nb.Slot(v, i)), list.global(i));
            EXPECT_EQ(Entries(nb.HigherOfNeighbour(v, i)), expected[list.global(i)]);
            remote_lists += topo.IsLocal(nb.Slot(v, i)) ? 0 : 1;
          }
          listed += list.size();
        }
      }
      EXPECT_GT(listed, 70u);
      EXPECT_EQ(remote_lists > 0, parts > 1);
    }
  }
}

// Lets the first AllToAll through, then swaps two keys of the first list with entries that
// partition `from` sent.
class SwappingExchange final : public Exchange {
 public:
  SwappingExchange(std::unique_ptr<Exchange> inner, uint32_t from)
      : inner_(std::move(inner)), from_(from) {}
  uint32_t rank() const override { return inner_->rank(); }
  uint32_t size() const override { return inner_->size(); }
  absl::StatusOr<std::vector<std::string>> AllToAll(std::vector<std::string> outgoing) override {
    auto incoming = inner_->AllToAll(std::move(outgoing));
    if (!incoming.ok() || calls_++ == 0 || rank() == from_) return incoming;
    // counts_ lengths of 4 bytes, then the 8-byte keys: the first list of 2 or more has its
    // first two keys swapped.
    std::string& bytes = (*incoming)[from_];
    const uint64_t counts = counts_;
    uint64_t at = 4 * counts;
    for (uint64_t i = 0; i < counts; ++i) {
      uint32_t len;
      std::memcpy(&len, bytes.data() + 4 * i, 4);
      if (len >= 2) {
        std::string first = bytes.substr(at, 8);
        bytes.replace(at, 8, bytes.substr(at + 8, 8));
        bytes.replace(at + 8, 8, first);
        break;
      }
      at += 8 * uint64_t{len};
    }
    return incoming;
  }
  void set_counts(uint64_t counts) { counts_ = counts; }

 private:
  std::unique_ptr<Exchange> inner_;
  uint32_t from_;
  int calls_ = 0;
  uint64_t counts_ = 0;
};

TEST(NeighbourhoodTest, APeersListOutOfOrderIsRefusedNamingThePeer) {
  GraphInput input = MakeInput(Edges());
  input.symmetric = true;
  const std::vector<Topology> topos = Parts(input, 2);
  auto built = BuildAll(topos, [&](std::unique_ptr<Exchange> inner) -> std::unique_ptr<Exchange> {
    const uint32_t p = inner->rank();
    auto ex = std::make_unique<SwappingExchange>(std::move(inner), 1 - p);
    const auto& begin = topos[p].remote_partition_begin();
    ex->set_counts(begin[1 - p + 1] - begin[1 - p]);
    return ex;
  });
  // Each part received a list of 2 or more from the other (the hub's neighbours), swapped.
  for (uint32_t p = 0; p < 2; ++p) {
    ASSERT_FALSE(built[p].ok()) << "part " << p;
    EXPECT_EQ(built[p].status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(built[p].status().message().find("partition " + std::to_string(1 - p)),
              std::string::npos)
        << built[p].status();
    EXPECT_NE(built[p].status().message().find("not sorted"), std::string::npos);
  }
}

}  // namespace
}  // namespace lockstep::bsp
