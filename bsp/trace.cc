#include "lockstep/bsp/trace.h"

#include "absl/strings/str_cat.h"

namespace lockstep::bsp {

std::string TraceLine(const TracedVertex& t, uint64_t superstep, std::string_view value,
                      bool halted) {
  std::string line = absl::StrCat("vertex '", t.id, "' superstep ", superstep, ": ");
  if (t.ran) {
    absl::StrAppend(&line, "ran, received ", t.received);
    if (t.received > 0) {
      absl::StrAppend(&line, " [", t.messages);
      if (t.received > kTracedMessages) {
        absl::StrAppend(&line, ", ... ", t.received - kTracedMessages, " more");
      }
      line += ']';
    }
    absl::StrAppend(&line, ", sent ", t.sent);
  } else {
    line += "did not run";
  }
  line += ", value ";
  line += value;
  line += halted ? ", halted yes" : ", halted no";
  return line;
}

}  // namespace lockstep::bsp
