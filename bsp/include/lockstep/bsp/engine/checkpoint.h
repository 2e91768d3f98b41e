#pragma once

// An engine's state in a checkpoint (docs/design.md §7.6; the file format is bsp/checkpoint.h):
// the frame every message strategy shares (aggregators, flags, values, which files to read, the
// checks), with the strategy's own part through its hooks:
//
//   kPublishes        whether it publishes values (a broadcast) rather than delivering messages:
//                     its published values are kept by source, so every file is read; messages are
//                     kept by destination, so only the files of ranges that meet this one are
//   kHoldsBack        whether it holds values back (kAnyOrder): a held section to write and read
//   CheckpointFlag(v) kCheckpointPublished or kCheckpointMessages if v has one, else 0
//   WriteExtra(s)     appends the extra section: the published values or the pending messages
//   WriteHeld(out)    the held-back values of remote vertices (kHoldsBack)
//   RestoreExtra(...) takes one vertex's extra record (an error's message says what is wrong)
//   RestorePublished  takes a published (or held-back) value of a local or remote vertex
//   AfterRestore()    rebuilds what the strategy derives from the restored state
//
// A strategy that delivers messages has them delivered before it writes (Engine::WriteCheckpoint).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/aggregator.h"
#include "lockstep/bsp/checkpoint.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/partition/range.h"

namespace lockstep::bsp {

// The partition's checkpoint index: its vertices' UUIDs and out-degrees.
inline std::string CheckpointIndexOf(const CheckpointHeader& header, const Topology& topo) {
  std::vector<uint32_t> degrees(topo.num_local());
  for (uint32_t v = 0; v < topo.num_local(); ++v) degrees[v] = topo.out_degree(v);
  return EncodeCheckpointIndex(header, topo.ids(), degrees);
}

inline void WriteCheckpointAggregators(const AggregatorRegistry& aggregators,
                                       CheckpointWriter& out) {
  aggregators.ForEach([&](const AggregatorBase& agg) {
    std::string value;
    agg.EncodeValue(value);
    out.Aggregator(agg.name(), value);
  });
}

// Every aggregator the program registers, and only those, from the checkpoint.
inline absl::Status RestoreCheckpointAggregators(AggregatorRegistry& aggregators,
                                                 const CheckpointSource& source) {
  size_t registered = 0;
  aggregators.ForEach([&](const AggregatorBase&) { ++registered; });
  if (source.aggregators().size() != registered) {
    return absl::DataLossError(absl::StrCat("checkpoint ", source.name(), " holds ",
                                            source.aggregators().size(), " aggregators; the ",
                                            "program registers ", registered));
  }
  for (const auto& [name, value] : source.aggregators()) {
    AggregatorBase* agg = aggregators.Find(name);
    absl::Status st = agg == nullptr ? absl::NotFoundError("the program does not register it")
                                     : agg->SetEncodedValue(value);
    if (!st.ok()) {
      return absl::DataLossError(
          absl::StrCat("checkpoint ", source.name(), ": aggregator '", name, "': ", st.message()));
    }
  }
  return absl::OkStatus();
}

// S: the engine's message strategy (strategy.h), which holds the vertex state.
template <class S>
class EngineCheckpoint {
 public:
  using VertexValue = typename S::VertexValue;
  using Message = typename S::Message;

  // Per local vertex, in the index's order: flags (halted; published; pending messages), the
  // value, then the strategy's extra record, and the held-back values of remote vertices.
  static void Write(S& s, CheckpointWriter& out) {
    const uint32_t n = s.topology().num_local();
    std::string& flags = out.Begin(CheckpointSection::kFlags);
    const size_t flags_at = flags.size();
    flags.resize(flags_at + n);
    for (uint32_t v = 0; v < n; ++v) {
      const uint8_t f = (s.halted_[v] ? kCheckpointHalted : 0) | s.CheckpointFlag(v);
      flags[flags_at + v] = static_cast<char>(f);
    }
    std::string& values = out.Begin(CheckpointSection::kValues);
    if constexpr (kRawValues) {
      values.append(reinterpret_cast<const char*>(s.values_.data()), n * sizeof(VertexValue));
    } else {
      for (uint32_t v = 0; v < n; ++v) Codec<VertexValue>::Encode(s.values_[v], values);
    }
    s.WriteExtra(out.Begin(CheckpointSection::kExtra));
    if constexpr (S::kHoldsBack) s.WriteHeld(out);
  }

  // The other half (StepEngine::RestoreCheckpoint), the aggregators restored. Every vertex of
  // every file read is taken: a broadcast's remote in-neighbours may be anywhere.
  static absl::Status Restore(S& s, const CheckpointSource& source) {
    const Topology& topo = s.topology();
    const uint32_t n = topo.num_local();
    const CheckpointHeader& h = source.header();
    auto old_split = partition::Range::Whole(h.parts);
    if (!old_split.ok()) return old_split.status();
    auto mine = topo.split().Extents(topo.part());
    if (!mine.ok()) return mine.status();
    std::vector<uint8_t> seen(n, 0);
    uint32_t restored = 0;
    uint64_t vertex_records = 0;
    for (uint32_t p = 0; p < h.parts; ++p) {
      if constexpr (!S::kPublishes) {
        // Messages are by destination: only the files of ranges that meet this one matter.
        auto theirs = old_split->Extents(p);
        if (!theirs.ok()) return theirs.status();
        if (theirs->second < mine->first || mine->second < theirs->first) continue;
      }
      auto file = source.Load(p);
      if (!file.ok()) return file.status();
      if (auto st = RestoreFile(s, *file, seen, restored); !st.ok()) return st;
      vertex_records += file->num_vertices();
    }
    if (S::kPublishes && vertex_records != topo.num_global()) {
      return absl::DataLossError(absl::StrCat("the checkpoint of job '", h.job, "' at superstep ",
                                              h.superstep, " holds ", vertex_records,
                                              " vertices; the graph has ", topo.num_global()));
    }
    if (restored != n) {
      const uint32_t missing =
          static_cast<uint32_t>(std::find(seen.begin(), seen.end(), uint8_t{0}) - seen.begin());
      return absl::DataLossError(
          absl::StrCat("the checkpoint of job '", h.job, "' at superstep ", h.superstep, " lacks ",
                       n - restored, " of partition ", topo.part(), "'s vertices, among them '",
                       std::string(topo.external_id(missing)), "'"));
    }
    // Awake: what has not halted (messages wake their targets as they are delivered).
    std::fill(s.awake_.begin(), s.awake_.end(), 0);
    for (uint32_t v = 0; v < n; ++v) {
      if (!s.halted_[v]) s.Wake(v);
    }
    s.AfterRestore();
    return absl::OkStatus();
  }

 private:
  // Vertex values go into a checkpoint as one copy of the value array if they are numbers (no
  // padding: the file's bytes are the same in every run); anything else with its codec, value by
  // value.
  static constexpr bool kRawValues =
      std::is_arithmetic_v<VertexValue> && !std::is_same_v<VertexValue, bool>;

  // What one file's sections have left to read.
  struct Sections {
    std::string_view flags;
    std::string_view values;
    std::string_view extra;
  };

  static absl::Status Bad(const CheckpointFile& file, const std::string& what) {
    return absl::DataLossError(absl::StrCat("checkpoint file ", file.name(), " ", what));
  }
  static absl::Status BadVertex(const CheckpointFile& file, uint64_t i, const std::string& what) {
    return Bad(file, absl::StrCat("vertex ", ToString(file.id(i)), " ", what));
  }

  // One part's file of a checkpoint: its local vertices' state, the published values of remote
  // vertices that publish to this partition, and their held-back values.
  static absl::Status RestoreFile(S& s, const CheckpointFile& file, std::vector<uint8_t>& seen,
                                  uint32_t& restored) {
    const uint64_t count = file.num_vertices();
    Sections in{.flags = file.section(CheckpointSection::kFlags),
                .values = file.section(CheckpointSection::kValues),
                .extra = file.section(CheckpointSection::kExtra)};
    if constexpr (kRawValues) {
      if (in.values.size() != count * sizeof(VertexValue)) {
        return Bad(file, "has a values section of the wrong size");
      }
    }
    VertexValue scratch{};  // the value of a vertex that is not local
    for (uint64_t i = 0; i < count; ++i) {
      if (auto st = RestoreVertex(s, file, i, in, scratch, seen, restored); !st.ok()) return st;
    }
    if constexpr (!kRawValues) {
      if (!in.values.empty()) return Bad(file, "has bytes after its last value");
    }
    if (!in.extra.empty()) return Bad(file, "has bytes after its last published value or message");
    return RestoreHeld(s, file);
  }

  // Vertex i of a file: its flags checked, its value and halted flag taken if it is local, and its
  // extra record handed to the strategy.
  static absl::Status RestoreVertex(S& s, const CheckpointFile& file, uint64_t i, Sections& in,
                                    VertexValue& scratch, std::vector<uint8_t>& seen,
                                    uint32_t& restored) {
    const Topology& topo = s.topology();
    constexpr uint8_t kKnown = kCheckpointHalted | kCheckpointPublished | kCheckpointMessages;
    const uint8_t f = static_cast<uint8_t>(in.flags[i]);
    if (f & ~kKnown) {
      return BadVertex(file, i, absl::StrCat("has unknown flags ", static_cast<int>(f)));
    }
    if ((f & kCheckpointPublished) && !S::kPublishes) {
      return BadVertex(file, i, "has a published value, which this program never publishes");
    }
    if ((f & kCheckpointMessages) && S::kPublishes) {
      return BadVertex(file, i, "has messages, which this program publishes instead");
    }
    const VertexId id = file.id(i);
    const uint32_t v = topo.Find(id);
    VertexValue& into = v == kNoVertex ? scratch : s.values_[v];
    if constexpr (kRawValues) {
      std::memcpy(&into, in.values.data() + i * sizeof(VertexValue), sizeof(VertexValue));
    } else if (!Codec<VertexValue>::Decode(in.values, into)) {
      return BadVertex(file, i, "has a value that does not decode");
    }
    if (v == kNoVertex && InRange(topo, id)) {
      return BadVertex(
          file, i,
          absl::StrCat("is in partition ", topo.part(), "'s range, but not a vertex of the graph"));
    }
    if (v != kNoVertex) {
      if (seen[v]) return BadVertex(file, i, "is in the checkpoint twice");
      seen[v] = 1;
      ++restored;
      s.halted_[v] = (f & kCheckpointHalted) ? 1 : 0;
    }
    absl::Status st = s.RestoreExtra(f, v, id, into, file, i, in.extra);
    if (!st.ok()) return BadVertex(file, i, std::string(st.message()));
    return absl::OkStatus();
  }

  // The values a file holds back for remote vertices (kAnyOrder), which the strategy takes as
  // published.
  static absl::Status RestoreHeld(S& s, const CheckpointFile& file) {
    std::string_view held = file.section(CheckpointSection::kHeld);
    for (uint64_t i = 0; i < file.num_held(); ++i) {
      if constexpr (S::kHoldsBack) {
        VertexId id;
        Message m;
        if (held.size() < 16) return Bad(file, "ends inside its held values");
        std::memcpy(id.data, held.data(), 16);
        held.remove_prefix(16);
        if (!Codec<Message>::Decode(held, m)) {
          return Bad(file, absl::StrCat("vertex ", ToString(id),
                                        " has a held-back value that does not decode"));
        }
        s.RestorePublished(s.topology().Find(id), id, std::move(m));
      } else {
        return Bad(file, "has held-back values, which this program never holds");
      }
    }
    if (!held.empty()) return Bad(file, "has bytes after its last held value");
    return absl::OkStatus();
  }

  // Whether `id` is in this partition's range of the UUID space.
  static bool InRange(const Topology& topo, const VertexId& id) {
    auto part = topo.split().PartitionFor(id);
    return part.ok() && *part == topo.part();
  }
};

}  // namespace lockstep::bsp
