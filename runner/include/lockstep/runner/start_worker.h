#pragma once

// What a process does before its first superstep (StartWorker): everything between receiving its
// job details and running superstep 0, or the superstep it resumes at. The engine (bsp) knows
// none of it: no attempts, no coordinator, no partitioned form to write.

#include <algorithm>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/bsp/app.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/collectives.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/executor.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/load/input_form.h"
#include "lockstep/load/names.h"
#include "lockstep/load/partitioned_form.h"
#include "lockstep/load/source.h"
#include "lockstep/partition/range.h"
#include "lockstep/runner/job.h"

namespace lockstep::runner {

// A process ready for its first superstep: its engine, and the names it prints global indexes by.
template <class Program>
struct StartedWorker {
  std::unique_ptr<bsp::Engine<Program>> engine;
  // A distributed worker's: the names of its range of global indexes (load::LoadPartition).
  load::RankNames names;
  // A worker that loaded the whole input, for apps that print names: all of them.
  std::vector<std::string> all_names;
  // The superstep the job goes on at: a distributed worker's resumes where its checkpoint was
  // taken; local mode and the master start at 0 (the master restores its aggregators itself).
  uint64_t first_superstep = 0;
};

// What the loaded input holds while the graph is built from it.
inline uint64_t InputBytes(const bsp::GraphInput& input) {
  return input.num_vertices() * 40 + input.num_stored_edges() * 8 + input.weights.size() * 8;
}

// The steps of StartWorker, each naming what it builds and roughly how many bytes that takes, so
// that running out of memory fails the job with a status that says so.
template <class App, bool kKeepAllNames>
class WorkerStart {
 public:
  using Program = typename App::Program;

  explicit WorkerStart(const JobDetails& details) : details_(details) {}

  absl::StatusOr<StartedWorker<Program>> Run() {
    try {
      if (details_.place.exchange != nullptr && !details_.place.coordinator) return Partitioned();
      return Whole();
    } catch (const std::bad_alloc&) {
      return bsp::OutOfMemoryError(building_, needed_);
    } catch (const std::exception& e) {
      // E.g. oneTBB failing to start a thread when the address space is short.
      return bsp::FailedWhileBuilding(building_, e);
    }
  }

 private:
  // Local mode, a worker without an exchange (the whole input) and the coordinator (no graph).
  absl::StatusOr<StartedWorker<Program>> Whole() {
    const JobWork& work = details_.work;
    const bool coordinator = details_.place.coordinator;
    building_ = "the input graph from " + work.graph.path;
    needed_ = coordinator ? 0 : load::EstimateLoadBytes(work.graph);
    if (!coordinator && details_.place.worker_count <= 1 &&
        load::IsPartitionedForm(work.graph.path)) {
      return WholeFromRows();
    }
    absl::StatusOr<bsp::GraphInput> input = bsp::GraphInput{};
    if (!coordinator) input = load::LoadGraph(work.graph, App::kWeights);
    if (!input.ok()) return input.status();
    auto split = partition::Range::Whole(coordinator ? 1 : details_.place.worker_count);
    if (!split.ok()) return split.status();
    // The master's engine (a coordinator's) knows no graph.
    auto program = App::Make(
        work.params, coordinator ? bsp::GraphFacts{} : bsp::FactsOf<App>(work.params, *input));
    if (!program.ok()) return program.status();
    building_ = "the graph and the engine's state";
    const uint64_t parts = coordinator ? 1 : std::max<uint32_t>(1, details_.place.worker_count);
    needed_ = InputBytes(*input) + bsp::EstimateEngineBytes<Program>(input->num_vertices() / parts,
                                                                     input->num_edges() / parts,
                                                                     input->symmetric);
    StartedWorker<Program> started;
    if constexpr (kKeepAllNames) {
      if (parts > 1) started.all_names = input->external_ids;
    }
    // The graph takes what the job needs; the input goes as it is used, and entirely before the
    // engine's state is allocated, which keeps it out of the peak memory of a run.
    auto graph = bsp::Graph<typename Program::EdgeValue>::BuildReleasing(
        *input, *split, details_.place.worker_index, bsp::NeedsInEdges<Program>(input->symmetric));
    if (!graph.ok()) return graph.status();
    started.engine = std::make_unique<bsp::Engine<Program>>(std::move(*program), std::move(*graph));
    return started;
  }

  // Local mode on the partitioned form: the CSRs read row by row, with no edge list beside them.
  absl::StatusOr<StartedWorker<Program>> WholeFromRows() {
    const JobWork& work = details_.work;
    auto rows = load::LoadWholeRows(work.graph, App::kWeights, [](bool symmetric) {
      return bsp::NeedsInEdges<Program>(symmetric);
    });
    if (!rows.ok()) return rows.status();
    building_ = "the graph and the engine's state";
    needed_ = bsp::EstimateEngineBytes<Program>(
        rows->rows.name_end.size(), rows->rows.out_targets.size(), rows->rows.symmetric);
    auto graph = bsp::Graph<typename Program::EdgeValue>::FromRows(
        std::move(rows->rows), std::move(rows->out_weights), std::move(rows->in_weights));
    if (!graph.ok()) return graph.status();
    auto program =
        App::Make(work.params, bsp::FactsOf<App>(work.params, graph->topology(), rows->properties));
    if (!program.ok()) return program.status();
    StartedWorker<Program> started;
    started.engine = std::make_unique<bsp::Engine<Program>>(std::move(*program), std::move(*graph));
    return started;
  }

  // A distributed worker: its partition through the exchange, then its peers and the checkpoint
  // it resumes from. Collective: every worker calls it at the same point of the job.
  absl::StatusOr<StartedWorker<Program>> Partitioned() {
    bsp::Exchange& exchange = *details_.place.exchange;
    auto part = LoadShare(exchange);
    if (!part.ok()) return part.status();
    if (details_.on_partition_loaded) details_.on_partition_loaded(part->stats);
    StartedWorker<Program> started;
    started.names = std::move(part->names);
    started.first_superstep = details_.resume.superstep;
    auto engine = BuildEngine(*part, exchange);
    if (!engine.ok()) return engine.status();
    started.engine = std::move(*engine);
    // The relay's positions, agreed with every other worker (collective).
    building_ = "the relay's lists of vertices shared with the other workers";
    if (auto st = started.engine->ConnectPeers(exchange); !st.ok()) return st;
    if (auto st = Restore(*started.engine, exchange); !st.ok()) return st;
    // The lists exchanged go back before the supersteps' buffers come.
    bsp::ReturnFreedMemory();
    return started;
  }

  // This worker's share of the input, after writing the partitioned form if the job asks for it.
  absl::StatusOr<load::PartitionInput> LoadShare(bsp::Exchange& exchange) {
    const bsp::GraphSource& graph = details_.work.graph;
    building_ = "the input graph from " + graph.path;
    needed_ = load::EstimateLoadBytes(graph) / std::max<uint32_t>(1, exchange.size());
    bsp::GraphSource source = graph;
    if (!details_.save_form.empty()) {
      // Written from the text once; the job then runs on what was written, which it thereby
      // checks.
      building_ = "the partitioned form of " + graph.path;
      if (auto st = load::WritePartitionedFormDistributed(graph, exchange, details_.save_form);
          !st.ok()) {
        return st;
      }
      source = bsp::GraphSource{.path = details_.save_form};
      building_ = "the input graph from " + details_.save_form;
    }
    return load::LoadPartition(source, App::kWeights, exchange, bsp::NeedsInEdges<Program>(),
                               {.in_edges_if_symmetric = bsp::NeedsInEdges<Program>(true)});
  }

  // The worker's graph and the program made over the facts every worker agrees on.
  absl::StatusOr<std::unique_ptr<bsp::Engine<Program>>> BuildEngine(load::PartitionInput& part,
                                                                    bsp::Exchange& exchange) {
    auto split = partition::Range::Whole(exchange.size());
    if (!split.ok()) return split.status();
    bsp::GraphFacts facts;
    facts.known = true;
    facts.num_vertices = part.vertices.num_global;
    facts.properties = part.input.properties;
    building_ = "the graph and the engine's state";
    const bool symmetric = part.packed ? part.edges.symmetric : part.input.symmetric;
    needed_ =
        InputBytes(part.input) + part.edges.bytes() +
        bsp::EstimateEngineBytes<Program>(part.vertices.uuids.size(), part.num_edges(), symmetric);
    auto graph = load::BuildPartGraph<typename Program::EdgeValue>(
        part, *split, exchange.rank(), bsp::NeedsInEdges<Program>(symmetric));
    // Collective from here on: every worker takes part, whether its build failed or not.
    if (auto st = bsp::AgreeOnStatus(exchange, graph.status()); !st.ok()) return st;
    const std::vector<std::string> named = bsp::NamedVerticesOf<App>(details_.work.params);
    auto have = load::HaveVertices(graph->topology(), exchange, named);
    if (!have.ok()) return have.status();
    for (size_t i = 0; i < named.size(); ++i) facts.named[named[i]] = (*have)[i];
    auto program = App::Make(details_.work.params, facts);
    if (!program.ok()) return program.status();
    return std::make_unique<bsp::Engine<Program>>(std::move(*program), std::move(*graph));
  }

  // An attempt after a failure resumes from a complete checkpoint (docs/design.md §7.6), which
  // every worker reads a file at a time to take its vertices' state (and its remote
  // in-neighbours' published values); all fail alike if one cannot, and say that it was the
  // checkpoint they refused (the job may go on from an older one).
  absl::Status Restore(bsp::Engine<Program>& engine, bsp::Exchange& exchange) {
    const JobResume& resume = details_.resume;
    if (resume.restore_from.empty()) return absl::OkStatus();
    building_ = "the job's state from checkpoint " + resume.restore_from;
    const bsp::CheckpointHeader expect{details_.work.app, details_.work.job_id, resume.superstep, 0,
                                       0};
    auto checkpoint = bsp::CheckpointSource::Open(resume.restore_from, &expect);
    absl::Status st = checkpoint.ok() ? engine.RestoreCheckpoint(*checkpoint) : checkpoint.status();
    if (st = bsp::AgreeOnStatus(exchange, st); !st.ok()) return bsp::MarkCheckpointRefused(st);
    return absl::OkStatus();
  }

  const JobDetails& details_;
  std::string building_;
  uint64_t needed_ = 0;
};

// What a process does before its first superstep, as the job's details say:
//  - local mode (no exchange): loads the whole input and builds the engine over all of it;
//  - the distributed master (place.coordinator): builds the program over an empty graph;
//  - a distributed worker (place.exchange): writes the graph's partitioned form first if the job
//    asks (save_form) and runs on it, loads its partition (the collective load), builds its graph
//    and the program over the facts all workers agree on (names), agrees the relay's positions
//    with its peers, and restores its state from the checkpoint the attempt resumes from.
// Collective over the exchange for a distributed worker. `kKeepAllNames`: the app prints global
// indexes by their names, which a process that loads the whole input for several workers keeps.
// Running out of memory fails with a status naming what was being built.
template <class App, bool kKeepAllNames = false>
absl::StatusOr<StartedWorker<typename App::Program>> StartWorker(const JobDetails& details) {
  return WorkerStart<App, kKeepAllNames>(details).Run();
}

}  // namespace lockstep::runner
