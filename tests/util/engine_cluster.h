#pragma once

// The engines of a distributed job in one process: one engine per part of a split, connected
// through a ThreadExchange (each engine's ConnectPeers on its own thread, as each worker calls it)
// and stepped in lockstep by one thread. At each superstep's barrier the aggregators' deltas are
// merged as the master merges them, the callbacks see the global counts, and every relayed batch
// reaches its destination. No gtest here: the benchmark uses it too.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/graph.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/relayer.h"
#include "lockstep/partition/range.h"
#include "util/thread_exchange.h"

namespace lockstep::test {

// Queues relayed batches until the test's barrier takes them, as the distributed layer delivers a
// superstep's relayed messages only after every process has finished that superstep. Keeps a copy
// of every batch for inspection unless told not to.
class QueueingRelayer final : public bsp::Relayer {
 public:
  explicit QueueingRelayer(bool keep_copies = true) : keep_copies_(keep_copies) {}
  absl::Status Relay(bsp::RelayBatch batch) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!fail_with_.ok()) return fail_with_;
    if (keep_copies_) sent_.push_back(batch);
    pending_.push_back(std::move(batch));
    return absl::OkStatus();
  }
  std::vector<bsp::RelayBatch> TakePending() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(pending_, {});
  }
  const std::vector<bsp::RelayBatch>& sent() const { return sent_; }
  void FailWith(absl::Status st) { fail_with_ = std::move(st); }

 private:
  bool keep_copies_;
  std::mutex mu_;
  std::vector<bsp::RelayBatch> pending_;
  std::vector<bsp::RelayBatch> sent_;
  absl::Status fail_with_;
};

template <class P>
class EngineCluster {
 public:
  // Engines over every part of a `parts`-way split of `input`, each with its own copy of
  // `program`. Throws if a part's graph does not build (a test's input is wrong).
  EngineCluster(const P& program, const bsp::GraphInput& input, uint32_t parts,
                bool keep_copies = true)
      : split_(Whole(parts)) {
    for (uint32_t p = 0; p < parts; ++p) {
      auto graph = bsp::Graph<typename P::EdgeValue>::Build(input, split_, p,
                                                            bsp::NeedsInEdges<P>(input.symmetric));
      if (!graph.ok()) throw std::runtime_error(graph.status().ToString());
      engines_.push_back(std::make_unique<bsp::Engine<P>>(program, std::move(*graph)));
      relayers_.push_back(std::make_unique<QueueingRelayer>(keep_copies));
      engines_.back()->SetRelayer(relayers_.back().get());
      callbacks_.push_back(engines_.back()->ProgramCallbacks());
      // Contributions made outside compute count once, on part 0, as on the master.
      engines_.back()->aggregators().set_count_outside_compute(p == 0);
    }
  }

  // Engines over graphs already built, graphs[p] being part p of a graphs.size()-way split (e.g.
  // from a partitioned load).
  EngineCluster(const P& program, std::vector<bsp::Graph<typename P::EdgeValue>> graphs,
                bool keep_copies = true)
      : split_(Whole(static_cast<uint32_t>(graphs.size()))) {
    for (uint32_t p = 0; p < graphs.size(); ++p) {
      engines_.push_back(std::make_unique<bsp::Engine<P>>(program, std::move(graphs[p])));
      relayers_.push_back(std::make_unique<QueueingRelayer>(keep_copies));
      engines_.back()->SetRelayer(relayers_.back().get());
      callbacks_.push_back(engines_.back()->ProgramCallbacks());
      engines_.back()->aggregators().set_count_outside_compute(p == 0);
    }
  }

  // ConnectPeers everywhere at once; the first error in partition order.
  // list_step: as Engine::SetListStep, unless 0.
  absl::Status Connect(size_t list_step = 0) {
    if (list_step != 0) {
      for (auto& e : engines_) e->SetListStep(list_step);
    }
    auto group = std::make_shared<ThreadExchangeGroup>(size());
    std::vector<absl::Status> status(size());
    std::vector<std::thread> threads;
    for (uint32_t p = 0; p < size(); ++p) {
      threads.emplace_back([&, p] {
        ThreadExchange exchange(group, p);
        status[p] = engines_[p]->ConnectPeers(exchange);
      });
    }
    for (auto& t : threads) t.join();
    for (const absl::Status& st : status) {
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  // One superstep everywhere with its callbacks; returns the global counts and whether to go on.
  absl::StatusOr<bool> Step() {
    bsp::StepStats total;
    total.superstep = superstep_;
    for (uint32_t p = 0; p < size(); ++p) {
      if (callbacks_[p].pre_step) {
        if (auto st = callbacks_[p].pre_step(superstep_); !st.ok()) return st;
      }
    }
    for (auto& engine : engines_) {
      auto stats = engine->RunSuperstep(superstep_, cancel_);
      if (!stats.ok()) return stats.status();
      total.active += stats->active;
      total.messages += stats->messages;
      total.unhalted += stats->unhalted;
      relayed_messages_ += stats->relayed_messages;
      relayed_bytes_ += stats->relayed_bytes;
      decode_seconds_ += stats->relay_decode_seconds;
    }
    if (auto st = MergeAggregators(); !st.ok()) return st;
    for (auto& relayer : relayers_) {
      for (bsp::RelayBatch& batch : relayer->TakePending()) {
        if (batch.superstep != superstep_ || batch.to_partition >= size()) {
          return absl::InternalError("a batch of another superstep or for no partition");
        }
        const uint32_t to = batch.to_partition;
        if (auto st = engines_[to]->AcceptRelayed(std::move(batch)); !st.ok()) return st;
      }
    }
    bool keep_running = bsp::DefaultKeepRunning(total);
    for (uint32_t p = 0; p < size(); ++p) {
      if (callbacks_[p].post_step) {
        if (auto st = callbacks_[p].post_step(total); !st.ok()) return st;
      }
      if (callbacks_[p].keep_running) {
        auto go_on = callbacks_[p].keep_running(total);
        if (!go_on.ok()) return go_on.status();
        if (p == 0) keep_running = *go_on;
      }
    }
    ++superstep_;
    return keep_running;
  }

  absl::Status RunToCompletion(uint64_t max_supersteps = 1000) {
    while (superstep_ < max_supersteps) {
      auto go_on = Step();
      if (!go_on.ok()) return go_on.status();
      if (!*go_on) return absl::OkStatus();
    }
    return absl::DeadlineExceededError("too many supersteps");
  }

  // Every part's checkpoint before the next superstep, checked as a reader would check it.
  absl::StatusOr<std::vector<bsp::CheckpointFile>> Checkpoint(const std::string& app,
                                                              const std::string& job) {
    std::vector<bsp::CheckpointFile> files;
    for (uint32_t p = 0; p < size(); ++p) {
      const bsp::CheckpointHeader header{app, job, superstep_, p, size()};
      std::string index = engines_[p]->CheckpointIndex(header);
      bsp::CheckpointWriter writer(header, bsp::CheckpointCrc(index),
                                   engines_[p]->num_local_vertices());
      if (auto st = engines_[p]->WriteCheckpoint(superstep_, writer); !st.ok()) return st;
      auto file = bsp::CheckpointFile::Parse(writer.Finish(), "part " + std::to_string(p),
                                             std::move(index), "index " + std::to_string(p));
      if (!file.ok()) return file.status();
      files.push_back(*std::move(file));
    }
    return files;
  }

  // Every engine takes its state from `files` (of any split); the next superstep is theirs.
  absl::Status Restore(std::span<const bsp::CheckpointFile> files) {
    for (auto& engine : engines_) {
      auto source = bsp::CheckpointSource::InMemory(files);
      if (!source.ok()) return source.status();
      if (auto st = engine->RestoreCheckpoint(*source); !st.ok()) return st;
    }
    superstep_ = files.empty() ? 0 : files[0].header().superstep;
    return absl::OkStatus();
  }

  // Every vertex's value by external ID, from whichever engine holds it.
  std::map<std::string, typename P::VertexValue> Values() const {
    std::map<std::string, typename P::VertexValue> values;
    for (const auto& engine : engines_) {
      for (uint32_t v = 0; v < engine->topology().num_local(); ++v) {
        values[std::string(engine->topology().external_id(v))] = engine->values()[v];
      }
    }
    return values;
  }

  uint32_t size() const { return static_cast<uint32_t>(engines_.size()); }
  const partition::Range& split() const { return split_; }
  bsp::Engine<P>& engine(uint32_t p) { return *engines_[p]; }
  QueueingRelayer& relayer(uint32_t p) { return *relayers_[p]; }
  uint64_t superstep() const { return superstep_; }
  // Over the whole run, all engines: what StepStats says they relayed, and their decode time.
  uint64_t relayed_messages() const { return relayed_messages_; }
  uint64_t relayed_bytes() const { return relayed_bytes_; }
  double decode_seconds() const { return decode_seconds_; }

 private:
  static partition::Range Whole(uint32_t parts) {
    auto split = partition::Range::Whole(parts);
    if (!split.ok()) throw std::runtime_error(split.status().ToString());
    return *std::move(split);
  }

  // Part 0 plays the master: its value (the previous global one and its own delta) takes every
  // other part's delta, and every part takes the result.
  absl::Status MergeAggregators() {
    if (size() < 2) return absl::OkStatus();
    std::map<std::string, std::string> merged;
    absl::Status status;
    engines_[0]->aggregators().ForEach([&](bsp::AggregatorBase& global) {
      for (uint32_t p = 1; p < size() && status.ok(); ++p) {
        std::string delta;
        engines_[p]->aggregators().Find(global.name())->EncodeDelta(delta);
        status = global.MergeEncodedDelta(delta);
      }
      global.EncodeValue(merged[global.name()]);
    });
    if (!status.ok()) return status;
    for (uint32_t p = 1; p < size(); ++p) {
      for (const auto& [name, bytes] : merged) {
        if (auto st = engines_[p]->aggregators().Find(name)->SetEncodedValue(bytes); !st.ok()) {
          return st;
        }
      }
    }
    return absl::OkStatus();
  }

  partition::Range split_;
  std::vector<std::unique_ptr<bsp::Engine<P>>> engines_;
  std::vector<std::unique_ptr<QueueingRelayer>> relayers_;
  std::vector<bsp::Callbacks> callbacks_;
  std::atomic<bool> cancel_{false};
  uint64_t superstep_ = 0;
  uint64_t relayed_messages_ = 0;
  uint64_t relayed_bytes_ = 0;
  double decode_seconds_ = 0;
};

}  // namespace lockstep::test
