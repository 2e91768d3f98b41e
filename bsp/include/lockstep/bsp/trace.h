#pragma once

// Vertex tracing (--trace-vertex, docs/design.md §12): what a few named vertices did in every
// superstep, as text lines. The engine records them on a path of their own, taken only by the
// blocks that hold a traced vertex; a job that traces nothing runs the compute loop it always did.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/output.h"

namespace lockstep::bsp {

// How many of a traced vertex's messages a trace line shows; the rest are counted.
inline constexpr size_t kTracedMessages = 8;

// Appends a message as trace text: a number as a number (a double to 17 significant digits), a
// program's own text if its message type has `void AppendTraceText(std::string&) const`, and
// otherwise the size of its encoding ("<24 bytes>").
template <class T>
void AppendTraceText(const T& value, std::string& out) {
  if constexpr (std::is_same_v<T, bool>) {
    out += value ? "true" : "false";
  } else if constexpr (std::is_floating_point_v<T>) {
    AppendDouble(static_cast<double>(value), out);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    AppendInt(static_cast<int64_t>(value), out);
  } else if constexpr (std::is_integral_v<T>) {
    AppendUint(static_cast<uint64_t>(value), out);
  } else if constexpr (requires(std::string & s) { value.AppendTraceText(s); }) {
    value.AppendTraceText(out);
  } else {
    std::string bytes;
    Codec<T>::Encode(value, bytes);
    out += '<';
    AppendUint(bytes.size(), out);
    out += " bytes>";
  }
}

// One traced vertex of this partition and what it did in the superstep under way.
struct TracedVertex {
  uint32_t vertex = 0;  // local index
  std::string id;       // its external ID
  bool ran = false;     // compute ran for it
  uint64_t received = 0;
  std::string messages;  // the first kTracedMessages of them, as text
  uint64_t sent = 0;
};

// The line of one traced vertex in superstep `superstep`, given its value as text:
//   vertex 'v7' superstep 3: ran, received 2 [0.5, 0.25], sent 4, value 0.75, halted no
//   vertex 'v7' superstep 4: did not run, value 0.75, halted yes
std::string TraceLine(const TracedVertex& t, uint64_t superstep, std::string_view value,
                      bool halted);

}  // namespace lockstep::bsp
