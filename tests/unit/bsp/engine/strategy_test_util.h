// Helpers for the unit tests of the engine's message strategies (bsp/engine/strategy.h), which
// drive one strategy directly, with no driver and no Compute: a strategy over each part of a tiny
// hand-drawn graph, its sends made by hand from a block, its relay handed from part to part.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/engine/relay_in.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/program.h"
#include "lockstep/bsp/vertex_id.h"
#include "test_graphs.h"
#include "util/engine_cluster.h"
#include "util/thread_exchange.h"

namespace lockstep::bsp::strategytest {

// Strategy S (of program P) over each part of a `parts`-way split of `input`, each with a relayer
// that queues what it is handed.
template <class S>
struct Parts {
  using P = typename S::Program;

  Parts(const P& program, const GraphInput& input, uint32_t parts) {
    const partition::Range split = bsptest::Split(parts);
    for (uint32_t p = 0; p < parts; ++p) {
      auto graph =
          Graph<typename P::EdgeValue>::Build(input, split, p, NeedsInEdges<P>(input.symmetric));
      if (!graph.ok()) throw std::runtime_error(graph.status().ToString());
      strategies.push_back(std::make_unique<S>(program, std::move(*graph)));
      relayers.push_back(std::make_unique<test::QueueingRelayer>());
      strategies.back()->relay_out().SetRelayer(relayers.back().get());
    }
  }

  S& operator[](uint32_t p) { return *strategies[p]; }
  uint32_t size() const { return static_cast<uint32_t>(strategies.size()); }

  // Every part agrees on the relay's positions with the others (each on its own thread, as each
  // worker does); the first failure.
  absl::Status Connect() {
    auto group = std::make_shared<test::ThreadExchangeGroup>(size());
    std::vector<absl::Status> status(size());
    std::vector<std::thread> threads;
    for (uint32_t p = 0; p < size(); ++p) {
      threads.emplace_back([&, p] {
        test::ThreadExchange exchange(group, p);
        auto agreed = strategies[p]->AgreePositions(exchange);
        status[p] = agreed.ok() ? *agreed : agreed.status();
      });
    }
    for (auto& t : threads) t.join();
    for (const absl::Status& st : status) {
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  // Every part hands this superstep's non-local messages to its relayer, and each part decodes
  // what was relayed to it; returns how many batches crossed.
  size_t Relay(uint64_t superstep) {
    std::vector<std::vector<RelayBatch>> to(size());
    for (uint32_t p = 0; p < size(); ++p) {
      EXPECT_TRUE(strategies[p]->FlushRemote(superstep).ok());
      for (RelayBatch& batch : relayers[p]->TakePending()) {
        to[batch.to_partition].push_back(std::move(batch));
      }
    }
    size_t crossed = 0;
    for (uint32_t q = 0; q < size(); ++q) {
      crossed += to[q].size();
      EXPECT_TRUE(DecodeRelayed(*strategies[q], to[q], strategies[q]->peers(), q).ok());
    }
    return crossed;
  }

  // The part that holds vertex `name`, and its local index there.
  std::pair<uint32_t, uint32_t> Find(std::string_view name) const {
    const VertexId id = VertexIdFromExternal(name);
    for (uint32_t p = 0; p < strategies.size(); ++p) {
      const uint32_t v = strategies[p]->topology().Find(id);
      if (v != kNoVertex) return {p, v};
    }
    throw std::out_of_range("no vertex " + std::string(name));
  }

  std::vector<std::unique_ptr<S>> strategies;
  std::vector<std::unique_ptr<test::QueueingRelayer>> relayers;
};

// Every vertex of every part asleep, as after a superstep in which all voted to halt.
template <class S>
void HaltAll(Parts<S>& parts) {
  for (auto& s : parts.strategies) {
    for (uint32_t v = 0; v < s->topology().num_local(); ++v) s->Halt(v);
  }
}

// Each vertex's messages (as the strategy gives them to Compute) and whether it is awake, by name.
template <class S>
std::map<std::string, std::vector<typename S::Message>> Inboxes(Parts<S>& parts) {
  std::map<std::string, std::vector<typename S::Message>> inboxes;
  for (auto& s : parts.strategies) {
    for (uint32_t v = 0; v < s->topology().num_local(); ++v) {
      const auto messages = s->MessagesOf(v / S::kBlock, v);
      inboxes[std::string(s->topology().external_id(v))].assign(messages.begin(), messages.end());
    }
  }
  return inboxes;
}
template <class S>
std::map<std::string, bool> Awake(Parts<S>& parts) {
  std::map<std::string, bool> awake;
  for (auto& s : parts.strategies) {
    for (uint32_t v = 0; v < s->topology().num_local(); ++v) {
      awake[std::string(s->topology().external_id(v))] = s->awake(v);
    }
  }
  return awake;
}

}  // namespace lockstep::bsp::strategytest
