// A relay batch as a worker receives it from a peer (docs/design.md §5.5): the protobuf bytes
// parsed and converted as the transport does (FromWire), then accepted and decoded by the engine
// of partition 0 of a connected 2-part job of PageRank (published values by position), SSSP
// (published costs, pushed) or colouring (messages along edges, without a combiner). Whatever the
// bytes, the next superstep either runs or fails with an error; it never crashes, and a batch the
// engine took leaves it consistent enough to run again.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

#include "lockstep/apps/coloring/coloring.h"
#include "lockstep/apps/pagerank/pagerank.h"
#include "lockstep/apps/sssp/sssp.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/v1/jobqueue.pb.h"
#include "transport/wire.h"
#include "util/engine_cluster.h"

namespace {

namespace bsp = lockstep::bsp;
namespace apps = lockstep::apps;

// 40 vertices, each with edges to two others (weights 1-3), split into 2 parts.
const bsp::GraphInput& Input() {
  static const bsp::GraphInput input = [] {
    bsp::GraphInput g;
    for (uint32_t v = 0; v < 40; ++v) g.external_ids.push_back(std::to_string(v));
    for (uint32_t v = 0; v < 40; ++v) {
      for (uint32_t to : {(v * 7 + 3) % 40, (v + 1) % 40}) {
        g.src.push_back(v);
        g.dst.push_back(to);
        g.weights.push_back(1 + (v + to) % 3);
      }
    }
    return g;
  }();
  return input;
}

template <class App>
void Feed(const bsp::Params& params, const lockstep::v1::RelayBatch& wire) {
  auto program = App::Make(params, bsp::FactsOf<App>(params, Input()));
  if (!program.ok()) __builtin_trap();
  lockstep::test::EngineCluster<typename App::Program> cluster(*program, Input(), 2, false);
  if (!cluster.Connect().ok()) __builtin_trap();
  // Superstep 0 everywhere, its own batches delivered; then the fuzzed one of superstep 0.
  if (!cluster.Step().ok()) __builtin_trap();
  auto batch = lockstep::dbsp::transport::FromWire(lockstep::v1::RelayBatch(wire));
  if (!batch.ok()) return;
  if (batch->to_partition != 0) return;  // the master and peers check the destination
  auto& engine = cluster.engine(0);
  if (!engine.AcceptRelayed(*std::move(batch)).ok()) return;
  std::atomic<bool> cancel{false};
  // An error names what was wrong; otherwise the engine goes on.
  if (!engine.RunSuperstep(1, cancel).ok()) return;
  (void)engine.RunSuperstep(2, cancel);
}

}  // namespace

// The first byte picks the program; the rest is a serialised lockstep.v1.RelayBatch.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  lockstep::v1::RelayBatch wire;
  if (!wire.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
  switch (data[0] % 3) {
    case 0:
      Feed<apps::pagerank::App>({{"damping", "0.85"}, {"tolerance", "0"}, {"max-iterations", "5"}},
                                wire);
      break;
    case 1:
      Feed<apps::sssp::App>({{"source", "0"}}, wire);
      break;
    default:
      Feed<apps::coloring::App>({{"seed", "1"}}, wire);
      break;
  }
  return 0;
}
