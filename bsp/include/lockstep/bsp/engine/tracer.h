#pragma once

// Vertex tracing (--trace-vertex, docs/design.md §12) inside the engine: which vertices are
// traced, what each did in the superstep under way, and its line afterwards (bsp/trace.h). The
// driver runs the blocks that hold a traced vertex on a path of their own (Engine::RunTracedBlock),
// so a job that traces nothing runs the compute loop it always did.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/bsp/trace.h"
#include "lockstep/bsp/vertex_id.h"

namespace lockstep::bsp {

template <class P>
class Tracer {
 public:
  using VertexValue = typename P::VertexValue;
  using Message = typename P::Message;
  using Format = std::function<void(const VertexValue&, std::string&)>;

  // Traces the vertices named by external ID that this partition's range holds, in blocks of
  // `block_size` vertices; `format` writes a value (unset: AppendTraceText). A named vertex that
  // the range should hold but the graph lacks gets one line saying so, after the first superstep.
  void Set(const std::vector<std::string>& ids, Format format, const Topology& topo,
           size_t num_blocks, uint32_t block_size) {
    traced_.clear();
    missing_.clear();
    blocks_.clear();
    format_ = std::move(format);
    for (size_t i = 0; i < ids.size(); ++i) {
      const std::string& id = ids[i];
      if (std::find(ids.begin(), ids.begin() + i, id) != ids.begin() + i) continue;
      const VertexId uuid = VertexIdFromExternal(id);
      auto part = topo.split().PartitionFor(uuid);
      if (!part.ok() || *part != topo.part()) continue;
      const uint32_t v = topo.Find(uuid);
      if (v == kNoVertex) {
        missing_.push_back(id);
        continue;
      }
      // One vertex named twice (a UUID in two cases): traced once.
      if (std::any_of(traced_.begin(), traced_.end(),
                      [v](const TracedVertex& t) { return t.vertex == v; })) {
        continue;
      }
      if (blocks_.empty()) blocks_.assign(num_blocks, 0);
      blocks_[v / block_size] = 1;
      traced_.push_back(TracedVertex{.vertex = v, .id = id});
    }
  }

  // Whether there are lines to write after a superstep.
  bool active() const { return !traced_.empty() || !missing_.empty(); }
  // Whether block b holds a traced vertex (the compute loop's one test per block).
  bool traces_block(size_t b) const { return !blocks_.empty() && blocks_[b] != 0; }

  // Before a superstep's compute: nothing recorded yet.
  void StartStep() {
    for (TracedVertex& t : traced_) {
      t.ran = false;
      t.received = t.sent = 0;
      t.messages.clear();
    }
  }
  // The record of local vertex v if it is traced, else nullptr.
  TracedVertex* Find(uint32_t v) {
    TracedVertex* found = nullptr;
    for (TracedVertex& candidate : traced_) {
      if (candidate.vertex == v) found = &candidate;
    }
    return found;
  }
  // Records the messages a traced vertex's compute is about to see.
  static void Received(TracedVertex& t, std::span<const Message> messages) {
    t.received = messages.size();
    for (size_t i = 0; i < messages.size() && i < kTracedMessages; ++i) {
      if (i > 0) t.messages += ", ";
      AppendTraceText(messages[i], t.messages);
    }
  }

  // After the superstep: a line per traced vertex with its value, and the missing ones' once.
  void WriteLines(uint64_t superstep, std::span<const VertexValue> values,
                  const std::vector<uint8_t>& halted) {
    for (const std::string& id : missing_) {
      lines_.push_back(absl::StrCat("vertex '", id, "' is not in the graph: not traced"));
    }
    missing_.clear();
    std::string value;
    for (const TracedVertex& t : traced_) {
      value.clear();
      if (format_) {
        format_(values[t.vertex], value);
      } else {
        AppendTraceText(values[t.vertex], value);
      }
      lines_.push_back(TraceLine(t, superstep, value, halted[t.vertex] != 0));
    }
  }
  // The last superstep's lines, taken once.
  std::vector<std::string> Take() { return std::exchange(lines_, {}); }

 private:
  std::vector<TracedVertex> traced_;
  std::vector<uint8_t> blocks_;  // empty: no block holds a traced vertex
  std::vector<std::string> missing_;
  Format format_;
  std::vector<std::string> lines_;
};

}  // namespace lockstep::bsp
