#pragma once

// What runs an app's job (issue 41's runner layer, between the engine and the jobs): a JobRunner
// over an app's vertex program that loads the graph (the load library), builds the engine, and
// writes the results. An app makes one from its catalogue entry; dbsp and `run` drive it through
// the JobRunner interface (job_runner.h). What it does before the first superstep is StartWorker
// (start_worker.h).

#include <algorithm>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/app.h"
#include "lockstep/bsp/checksum.h"
#include "lockstep/bsp/engine.h"
#include "lockstep/bsp/output.h"
#include "lockstep/load/names.h"
#include "lockstep/runner/job.h"
#include "lockstep/runner/job_runner.h"
#include "lockstep/runner/start_worker.h"
#include "tbb/parallel_for.h"
#include "tbb/task_arena.h"

namespace lockstep::runner {

// A JobRunner for any app described by a spec `App`:
//   using Program = ...;                                  // a VertexProgram
//   static constexpr WeightUse kWeights = ...;
//   static std::vector<std::string> NamedVertices(const Params&);   // optional
//       // the external IDs the parameters name, whose presence Make may check (GraphFacts)
//   static absl::StatusOr<Program> Make(const Params&, const GraphFacts&);
//       // the facts are empty on the distributed master; name a bad parameter with ParamError
//   static void Format(const Program&, const Program::VertexValue&, std::string& out);
//       // or, for values that are global vertex indexes, with the names to print them by:
//   static void Format(const Program&, const Program::VertexValue&, const VertexNames&,
//                      std::string& out);
//   static void Report(const Engine<Program>&, const Params&, std::ostream&);   // optional
//
// In local mode the runner loads the whole input (the fast path). A worker of a distributed job
// (JobPlace::exchange set) loads only its partition (load::LoadPartition), and its StartJob and,
// for apps that print names, CompleteJob are collective over the exchange: every worker calls them
// at the same point of the job.
template <class App>
class ProgramRunner final : public JobRunner {
 public:
  using Program = typename App::Program;
  static_assert(bsp::VertexProgram<Program>);

  explicit ProgramRunner(std::ostream* report = nullptr) : report_(report) {}

  // The program made over an empty graph, as the distributed master makes it: what Make checks
  // without a graph.
  absl::Status CheckParams(const JobWork& work) const override {
    return App::Make(work.params, bsp::GraphFacts{}).status();
  }

  // Running out of memory (std::bad_alloc, from this thread or carried out of a TBB loop) fails the
  // job with a status naming what was being built, instead of terminating the process: `run`
  // prints it and a worker reports it to its master.
  absl::StatusOr<std::unique_ptr<bsp::Executor>> StartJob(
      const JobDetails& details, const bsp::ExecutorFactory& factory) override {
    AbortJob(details);
    auto started = StartWorker<App, kFormatsNames>(details);
    if (!started.ok()) return started.status();
    engine_ = std::move(started->engine);
    names_ = std::move(started->names);
    all_names_ = std::move(started->all_names);
    try {
      Trace(details);
      auto executor = factory(*engine_, engine_->ProgramCallbacks());
      if (executor.ok()) (*executor)->ResumeAt(started->first_superstep);
      return executor;
    } catch (const std::bad_alloc&) {
      const uint64_t needed = engine_->EstimatedPeakBytes();
      engine_.reset();
      return bsp::OutOfMemoryError("the graph and the engine's state", needed);
    } catch (const std::exception& e) {
      engine_.reset();
      return bsp::FailedWhileBuilding("the graph and the engine's state", e);
    }
  }

  absl::StatusOr<OutputSummary> CompleteJob(const JobDetails& details) override {
    if (!engine_) return absl::FailedPreconditionError("complete_job before start_job");
    try {
      return WriteResults(details);
    } catch (const std::bad_alloc&) {
      // The text of every line twice (the pieces, then the whole), at a few dozen bytes a line.
      return bsp::OutOfMemoryError("the output " + details.work.output,
                                   2 * 48 * uint64_t{engine_->topology().num_local()});
    } catch (const std::exception& e) {
      return bsp::FailedWhileBuilding("the output " + details.work.output, e);
    }
  }

  void AbortJob(const JobDetails&) override {
    engine_.reset();
    names_ = load::RankNames();
    all_names_ = {};
  }

  const bsp::Engine<Program>* engine() const { return engine_.get(); }

 private:
  static constexpr bool kFormatsNames =
      requires(const Program& p, const typename Program::VertexValue& v,
               const bsp::VertexNames& names, std::string& out) {
    App::Format(p, v, names, out);
  };

  // The names of global indexes in local mode, where the one part holds every vertex and a local
  // index is the global one.
  // A distributed worker without an exchange loads the whole input and keeps all names instead.
  class LocalNames final : public bsp::VertexNames {
   public:
    LocalNames(const bsp::Topology& topology, const std::vector<std::string>& all)
        : topology_(topology), all_(all) {}
    void Append(uint32_t g, std::string& out) const override {
      out += all_.empty() ? topology_.external_id(g) : std::string_view(all_[g]);
    }

   private:
    const bsp::Topology& topology_;
    const std::vector<std::string>& all_;
  };
  // Records the indexes a first formatting pass asks for (distributed mode).
  class RecordedNames final : public bsp::VertexNames {
   public:
    explicit RecordedNames(std::vector<uint32_t>& asked) : asked_(asked) {}
    void Append(uint32_t g, std::string&) const override { asked_.push_back(g); }

   private:
    std::vector<uint32_t>& asked_;
  };
  // Names fetched from the workers that hold them.
  class FetchedNames final : public bsp::VertexNames {
   public:
    explicit FetchedNames(absl::flat_hash_map<uint32_t, std::string> names)
        : names_(std::move(names)) {}
    void Append(uint32_t g, std::string& out) const override { out += names_.at(g); }

   private:
    absl::flat_hash_map<uint32_t, std::string> names_;
  };

  static constexpr uint32_t kNoRank = ~uint32_t{0};
  // The names of global indexes in a trace line: a distributed worker (`rank`) has those of its
  // range of indexes, and writes any other as "#index"; local mode has all.
  class TraceNames final : public bsp::VertexNames {
   public:
    TraceNames(const ProgramRunner& runner, uint32_t rank) : runner_(runner), rank_(rank) {}
    void Append(uint32_t g, std::string& out) const override {
      if (rank_ == kNoRank) {
        LocalNames(runner_.engine_->topology(), runner_.all_names_).Append(g, out);
      } else if (runner_.names_.HolderOf(g) == rank_) {
        runner_.names_.Append(g, out);
      } else {
        out += '#';
        bsp::AppendUint(g, out);
      }
    }

   private:
    const ProgramRunner& runner_;
    uint32_t rank_;
  };
  // Sets the job's traced vertices on the engine, with the app's way of writing a value.
  void Trace(const JobDetails& details) {
    // The master's engine (a coordinator's) holds no vertex to trace.
    const JobPlace& place = details.place;
    if (details.work.trace_vertices.empty() || place.coordinator) return;
    const uint32_t rank = place.exchange != nullptr ? place.exchange->rank() : kNoRank;
    engine_->SetTrace(details.work.trace_vertices,
                      [this, rank](const typename Program::VertexValue& value, std::string& out) {
                        if constexpr (kFormatsNames) {
                          App::Format(engine_->program(), value, TraceNames(*this, rank), out);
                        } else {
                          (void)rank;  // names only for apps that print them
                          App::Format(engine_->program(), value, out);
                        }
                      });
  }

  // Results are formatted in chunks of this many vertices.
  static constexpr uint32_t kChunk = 1 << 16;

  // Formats the lines of vertices [begin, end) into `out`.
  void FormatLines(uint32_t begin, uint32_t end, const bsp::VertexNames* names,
                   std::string& out) const {
    const bsp::Topology& topo = engine_->topology();
    const auto values = engine_->values();
    for (uint32_t v = begin; v < end; ++v) {
      out += topo.external_id(v);
      out += ' ';
      if constexpr (kFormatsNames) {
        App::Format(engine_->program(), values[v], *names, out);
      } else {
        App::Format(engine_->program(), values[v], out);
      }
      out += '\n';
    }
  }

  // Writes every vertex's line to `path`, formatted a batch of chunks at a time in parallel and
  // written as it comes: the text is never held whole (32 MB of PageRank's lines for 2^20
  // vertices). Returns its size and CRC-32C.
  absl::Status WriteLines(const std::string& path, const bsp::VertexNames* names, uint64_t& size,
                          uint32_t& crc) const {
    const uint32_t n = engine_->topology().num_local();
    const size_t chunks = (n + kChunk - 1) / kChunk;
    const size_t batch =
        std::min(chunks, 2 * static_cast<size_t>(tbb::this_task_arena::max_concurrency()));
    std::vector<std::string> lines(batch);
    size_t formatted = 0, taken = 0, in_batch = 0;
    auto next = [&](std::string_view& piece) {
      if (taken == in_batch) {
        if (formatted == chunks) return false;
        in_batch = std::min(batch, chunks - formatted);
        tbb::parallel_for(size_t{0}, in_batch, [&](size_t i) {
          const auto begin = static_cast<uint32_t>((formatted + i) * kChunk);
          lines[i].clear();
          FormatLines(begin, std::min<uint32_t>(n, begin + kChunk), names, lines[i]);
        });
        formatted += in_batch;
        taken = 0;
      }
      piece = lines[taken++];
      size += piece.size();
      crc = bsp::Crc32c(piece, crc);
      return true;
    };
    return bsp::WriteFileAtomically(path, next);
  }

  absl::StatusOr<OutputSummary> WriteResults(const JobDetails& details) {
    const bsp::Topology& topo = engine_->topology();
    const uint32_t n = topo.num_local();
    const size_t chunks = (n + kChunk - 1) / kChunk;
    auto chunk_end = [&](size_t c) {
      return std::min<uint32_t>(n, static_cast<uint32_t>((c + 1) * kChunk));
    };
    std::optional<FetchedNames> fetched;
    if constexpr (kFormatsNames) {
      if (details.place.exchange != nullptr && !details.place.coordinator) {
        // Collective: a first pass finds the labels, whose names their holders send.
        std::vector<std::vector<uint32_t>> asked(chunks);
        tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
          RecordedNames recorder(asked[c]);
          std::string ignored;
          FormatLines(static_cast<uint32_t>(c * kChunk), chunk_end(c), &recorder, ignored);
          std::sort(asked[c].begin(), asked[c].end());
          asked[c].erase(std::unique(asked[c].begin(), asked[c].end()), asked[c].end());
        });
        std::vector<uint32_t> labels;
        for (auto& a : asked) labels.insert(labels.end(), a.begin(), a.end());
        asked.clear();
        auto names = load::ResolveNames(names_, *details.place.exchange, std::move(labels));
        if (!names.ok()) return names.status();
        fetched.emplace(std::move(*names));
      }
    }
    const LocalNames local(topo, all_names_);
    const bsp::VertexNames* names =
        fetched ? static_cast<const bsp::VertexNames*>(&*fetched) : &local;
    uint64_t size = 0;
    uint32_t crc = 0;
    if (auto st = WriteLines(details.work.output, names, size, crc); !st.ok()) return st;
    if constexpr (requires(std::ostream & os) { App::Report(*engine_, details.work.params, os); }) {
      if (report_ != nullptr) App::Report(*engine_, details.work.params, *report_);
    }
    return OutputSummary{n, size, crc};
  }

  std::ostream* report_;
  std::unique_ptr<bsp::Engine<Program>> engine_;
  // Distributed mode: the names of this worker's range of global indexes (load::LoadPartition).
  load::RankNames names_;
  // A worker that loaded the whole input, for apps that print names: all of them.
  std::vector<std::string> all_names_;
};

}  // namespace lockstep::runner
