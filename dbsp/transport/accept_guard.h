#pragma once

// The process's gRPC servers accept through this guard (docs/design.md §11). gRPC 1.51 offers no
// hook where a TCP connection is accepted, and its listener gives up for good on the first
// accept that fails for want of a descriptor ("Failed accept4: Too many open files"): a burst of
// silent connections left a master deaf. The link wraps `accept4` and `close`
// (`-Wl,--wrap=...`, dbsp/CMakeLists.txt) for gRPC, which is linked from its static archive:
// every accepted connection is counted against an `AcceptPolicy` until it is closed, one over
// the budget is closed at once, and an accept that finds no descriptor takes the one held in
// reserve to refuse the waiting connection, so the listener never sees the error.
#include <chrono>
#include <string_view>

#include "transport/accept_policy.h"

namespace lockstep::dbsp::transport {

// Sets how long an unadmitted connection is spared (the handshake timeout); the budget comes
// from the open-file limit when the first connection is accepted.
void ConfigureAcceptGuard(std::chrono::milliseconds grace);
// A call from gRPC peer `peer` passed admission (its token, over its certificate's channel).
void MarkAdmitted(std::string_view peer);
AcceptCounts CurrentAcceptCounts();
// Whether this binary's gRPC accepts through the guard (false when gRPC is a shared library,
// which the link cannot wrap).
bool AcceptGuardActive();

}  // namespace lockstep::dbsp::transport
