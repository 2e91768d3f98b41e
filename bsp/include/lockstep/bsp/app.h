#pragma once

// What runs an app's job: its parameters and a JobRunner over its vertex program. What an app is
// called, its defaults and help live in the app catalogue (lockstep/catalogue/app.h), above bsp.

#include <algorithm>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/job.h"
#include "lockstep/bsp/output.h"
#include "tbb/parallel_for.h"

namespace lockstep::bsp {

// An app's parameters by name, as the job details carry them.
using Params = std::map<std::string, std::string>;

// Parameter access. Errors about a parameter start with its name and a colon
// ("damping: expected a number, got 'x'"), so that a command line can show it as its own flag.
absl::StatusOr<double> ParamDouble(const Params& params, const std::string& name);
absl::StatusOr<int64_t> ParamInt(const Params& params, const std::string& name);
std::string ParamString(const Params& params, const std::string& name);
// An invalid-argument error about parameter `name`, worded as above.
absl::Status ParamError(std::string_view name, std::string_view problem);

// A JobRunner for any app described by a spec `App`:
//   using Program = ...;                                  // a VertexProgram
//   static constexpr WeightUse kWeights = ...;
//   static absl::StatusOr<Program> Make(const Params&, const GraphInput&);
//       // the input is empty on the distributed master: check the graph only when it has
//       // vertices; name a bad parameter with ParamError
//   static void Format(const Program&, const Program::VertexValue&, std::string& out);
//   static void Report(const Engine<Program>&, const Params&, std::ostream&);   // optional
template <class App>
class ProgramRunner final : public JobRunner {
 public:
  using Program = typename App::Program;
  static_assert(VertexProgram<Program>);

  explicit ProgramRunner(std::ostream* report = nullptr) : report_(report) {}

  // The program made over an empty graph, as the distributed master makes it: what Make checks
  // without a graph.
  absl::Status CheckParams(const JobDetails& details) const override {
    return App::Make(details.params, GraphInput{}).status();
  }

  // Running out of memory (std::bad_alloc, from this thread or carried out of a TBB loop) fails the
  // job with a status naming what was being built, instead of terminating the process: `run`
  // prints it and a worker reports it to its master.
  absl::StatusOr<std::unique_ptr<Executor>> StartJob(const JobDetails& details,
                                                     const ExecutorFactory& factory) override {
    std::string building = "the input graph from " + details.graph.path;
    uint64_t needed = details.coordinator ? 0 : EstimateLoadBytes(details.graph);
    try {
      absl::StatusOr<GraphInput> input = GraphInput{};
      if (!details.coordinator) input = LoadGraph(details.graph, App::kWeights);
      if (!input.ok()) return input.status();
      auto split = partition::Range::Whole(details.coordinator ? 1 : details.worker_count);
      if (!split.ok()) return split.status();
      auto program = App::Make(details.params, *input);
      if (!program.ok()) return program.status();
      building = "the graph and the engine's state";
      const uint64_t parts = details.coordinator ? 1 : std::max<uint32_t>(1, details.worker_count);
      needed = InputBytes(*input) + EstimateEngineBytes<Program>(input->num_vertices() / parts,
                                                                 input->num_edges() / parts);
      // The graph takes what the job needs; the input goes as it is used, and entirely before the
      // engine's state is allocated, which keeps it out of the peak memory of a run.
      auto graph = Graph<typename Program::EdgeValue>::BuildReleasing(
          *input, *split, details.worker_index, NeedsInEdges<Program>());
      if (!graph.ok()) return graph.status();
      engine_ = std::make_unique<Engine<Program>>(std::move(*program), std::move(*graph));
      // Every worker of a distributed job connects, in the same order of collectives.
      if (details.exchange != nullptr && !details.coordinator) {
        building = "the relay's lists of vertices shared with the other workers";
        if (auto st = engine_->ConnectPeers(*details.exchange); !st.ok()) {
          engine_.reset();
          return st;
        }
      }
      return factory(*engine_, engine_->ProgramCallbacks());
    } catch (const std::bad_alloc&) {
      engine_.reset();
      return OutOfMemoryError(building, needed);
    } catch (const std::exception& e) {
      // E.g. oneTBB failing to start a thread when the address space is short.
      engine_.reset();
      return FailedWhileBuilding(building, e);
    }
  }

  absl::StatusOr<OutputSummary> CompleteJob(const JobDetails& details) override {
    if (!engine_) return absl::FailedPreconditionError("complete_job before start_job");
    try {
      return WriteResults(details);
    } catch (const std::bad_alloc&) {
      // The text of every line twice (the pieces, then the whole), at a few dozen bytes a line.
      return OutOfMemoryError("the output " + details.output,
                              2 * 48 * uint64_t{engine_->topology().num_local()});
    } catch (const std::exception& e) {
      return FailedWhileBuilding("the output " + details.output, e);
    }
  }

  void AbortJob(const JobDetails&) override { engine_.reset(); }

  const Engine<Program>* engine() const { return engine_.get(); }

 private:
  absl::StatusOr<OutputSummary> WriteResults(const JobDetails& details) {
    const Topology& topo = engine_->topology();
    const auto values = engine_->values();
    constexpr uint32_t kChunk = 1 << 16;
    const uint32_t n = topo.num_local();
    std::vector<std::string> parts((n + kChunk - 1) / kChunk);
    tbb::parallel_for(size_t{0}, parts.size(), [&](size_t c) {
      std::string& out = parts[c];
      const uint32_t end = std::min<uint32_t>(n, static_cast<uint32_t>((c + 1) * kChunk));
      for (uint32_t v = static_cast<uint32_t>(c * kChunk); v < end; ++v) {
        out += topo.external_id(v);
        out += ' ';
        App::Format(engine_->program(), values[v], out);
        out += '\n';
      }
    });
    std::string text;
    size_t total = 0;
    for (const auto& p : parts) total += p.size();
    text.reserve(total);
    for (const auto& p : parts) text += p;
    if (auto st = WriteFileAtomically(details.output, text); !st.ok()) return st;
    if constexpr (requires(std::ostream & os) { App::Report(*engine_, details.params, os); }) {
      if (report_ != nullptr) App::Report(*engine_, details.params, *report_);
    }
    return OutputSummary{n, text.size(), Crc32c(text)};
  }

  // What the loaded input holds while the graph is built from it.
  static uint64_t InputBytes(const GraphInput& input) {
    return input.num_vertices() * 40 + input.num_stored_edges() * 8 + input.weights.size() * 8;
  }

  std::ostream* report_;
  std::unique_ptr<Engine<Program>> engine_;
};

}  // namespace lockstep::bsp
