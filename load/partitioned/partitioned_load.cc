// Loading by partition (docs/design.md §4.4).
//
// Worker r of P reads share r of each file: the lines that start in bytes [r*S/P, (r+1)*S/P) of
// a file of S bytes, in rounds of a bounded number of bytes (rounds.h). Each round is parsed in
// parallel by the whole-graph loader's parser (text/parse.h); each distinct ID of the round is
// hashed to its UUID once per share (share_ids.h), which gives its owner; then, through the
// Exchange, vertices go to their owners (with the UUID) and every stored edge goes to the owner
// of its source and, when the program needs in-edges or the input is symmetric, of its target,
// as compact records (records.h; edge_sender.h, edge_receiver.h). A listed graph's vertices come
// first (vertex_rounds.h), then the edges (edge_rounds.h).
//
// A worker keeps the stored edges it receives per sender (load_state.h); senders are shares and
// shares are in file order, so the concatenation is in input order. An edge list's integer IDs
// are received raw while they can be (raw_ids.h). Global indexes are ranks in ExternalIdLess
// order (ranking.h). The worker's vertices and edges then build exactly the part
// Topology::Build makes from the whole input (assembly.h, orient.h).
//
// Errors are collective: each worker keeps its first failure of each kind with its position
// (share, line in the share; failures.h); all exchange them with their line counts at the end of
// the input, and every worker picks the same failure, in the order the whole-graph loader would
// report it, with its line in the whole file (agreement.h).
#include "lockstep/load/partitioned_load.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/collectives.h"
#include "lockstep/bsp/free_memory.h"
#include "lockstep/load/input_form.h"
#include "partitioned/agreement.h"
#include "partitioned/assembly.h"
#include "partitioned/edge_rounds.h"
#include "partitioned/load_state.h"
#include "partitioned/ranking.h"
#include "partitioned/vertex_rounds.h"
#include "text/parse.h"

namespace lockstep::load {
namespace {

using partitioned::InputPlan;
using partitioned::LoadFrame;

// What the setup found: the input's plan, and the error that stops the load (which every worker
// hears before any returns).
struct Setup {
  InputPlan plan;
  absl::Status status;
};

// A table's rows: a vertex table makes it a listed graph, as Graphalytics' .v does.
absl::StatusOr<Setup> PlanTable(const LoadFrame& frame) {
  const bsp::GraphSource& source = frame.source;
  Setup setup;
  InputPlan& plan = setup.plan;
  plan.sorted = true;
  plan.symmetric = source.undirected;
  plan.edge_file = source.text->EdgesName();
  plan.vertex_file = source.text->VerticesName();
  auto probe = source.text->OpenShare(true, false, frame.rank, frame.size);
  if (probe.ok()) {
    plan.graphalytics = true;
    plan.vertex_share = *std::move(probe);
  } else if (!absl::IsNotFound(probe.status())) {
    setup.status = probe.status();
  }
  // Every worker must take the same path: a vertex table made or dropped while they looked
  // would split them.
  auto seen = bsp::AllGather(frame.exchange, std::string(1, plan.graphalytics ? '1' : '0'));
  if (!seen.ok()) return seen.status();
  for (const std::string& x : *seen) {
    if ((x == "1") != plan.graphalytics && setup.status.ok()) {
      setup.status = absl::FailedPreconditionError(
          absl::StrCat(plan.vertex_file, " was made or dropped while the workers opened it"));
    }
  }
  return setup;
}

// Files: a Graphalytics graph's properties name its vertex and edge files; an edge list is one.
// (A partitioned form's directory read as text is an edge list that refuses it: ListEdgeFiles.)
Setup PlanFiles(const bsp::GraphSource& source) {
  Setup setup;
  InputPlan& plan = setup.plan;
  auto form = FormOf(source);
  if (!form.ok()) {
    setup.status = form.status();
  } else if (*form == InputForm::kGraphalytics) {
    plan.graphalytics = true;
    auto files = text::ResolveGraphalytics(source);
    if (files.ok()) {
      plan.properties = std::move(files->properties);
      plan.vertex_file = std::move(files->vertex_file);
      plan.edge_file = std::move(files->edge_file);
      plan.symmetric = !files->directed;
    } else {
      setup.status = files.status();
    }
  } else {
    plan.edge_file = source.path;
    plan.symmetric = source.undirected;
  }
  return setup;
}

// The vertex and edge rounds, the agreement, the ranking and the assembly, in turn.
absl::StatusOr<PartitionInput> Load(const LoadFrame& frame, InputPlan& plan) {
  bsp::PartitionLoadStats stats;
  partitioned::ShareTally tally;
  partitioned::Received got(frame.size);
  if (plan.graphalytics) {
    partitioned::VertexRounds vertices(frame, tally, got.table, stats);
    if (auto st = vertices.Run(plan.vertex_file, std::move(plan.vertex_share)); !st.ok()) return st;
  }
  // A bad vertex line anywhere ends the load before the edges, as in LoadGraph (all know it).
  if (!tally.vertex_stopped) {
    partitioned::EdgeRounds edges(frame, plan, tally, got, stats);
    if (auto st = edges.Run(); !st.ok()) return st;
  }
  // The rounds' buffers stay in malloc's heap, where the steps up to the assembly reuse them
  // without faulting their pages in again; what is free goes back before the assembly, whose
  // packed edges are mapped beside the received ones and do not reuse the heap (and the build
  // gives back what the assembly frees before it lays out the CSR, where a worker's memory
  // peaks; a cluster's writer of shard files, before it encodes them).
  auto agreement = partitioned::AgreeOnInput(frame, plan, tally, got.raw);
  if (!agreement.ok()) return agreement.status();
  auto raw_ranks = partitioned::RankRaw(frame, *agreement, got, stats);
  if (!raw_ranks.ok()) return raw_ranks.status();
  absl::StatusOr<partitioned::Ranks> ranks =
      raw_ranks->has_value() ? **std::move(raw_ranks) : partitioned::RankBySample(frame, got.table);
  if (!ranks.ok()) return ranks.status();
  absl::Status asked = partitioned::AskRemotes(frame, got.table, ranks->rank_of);
  if (auto st = bsp::AgreeOnStatus(frame.exchange, asked); !st.ok()) return st;
  bsp::ReturnFreedMemory();
  return partitioned::Assemble(frame, plan, got, *ranks, agreement->weighted, stats);
}

}  // namespace

absl::StatusOr<PartitionInput> LoadPartitionFromText(const bsp::GraphSource& source,
                                                     bsp::WeightUse weights,
                                                     bsp::Exchange& exchange, bool in_edges,
                                                     const PartitionLoadOptions& options) {
  const LoadFrame frame{source,  weights,         exchange,       in_edges,
                        options, exchange.rank(), exchange.size()};
  absl::StatusOr<Setup> setup =
      source.text ? PlanTable(frame) : absl::StatusOr<Setup>(PlanFiles(source));
  if (!setup.ok()) return setup.status();
  if (auto st = bsp::AgreeOnStatus(exchange, setup->status); !st.ok()) return st;
  return Load(frame, setup->plan);
}

}  // namespace lockstep::load
