#pragma once

// What a command sets up in the process itself: how SIGTERM and SIGINT reach it, its limit of
// open files, the allocator of a worker, abseil's lock checks.
#include <atomic>

namespace lockstep::cli {

// Set once SIGTERM or SIGINT arrived (InstallSignalHandlers): a master or worker ends its service,
// a running job is aborted.
std::atomic<bool>& StopRequested();
void InstallSignalHandlers();

// A server's connections each hold a descriptor: the soft limit of open files (often 1,024) goes up
// to the hard one, so that connections from peers that never finish a handshake, which last up to
// --handshake-timeout, do not leave the process without descriptors for its own files.
void RaiseFileLimit();

// A worker's allocator, set before its first job (a no-op outside glibc, and under
// AddressSanitizer, which brings its own).
void TuneWorkerMalloc();

// Debian builds abseil without NDEBUG, which makes every absl::Mutex lock (gRPC's included) look
// its mutex up in a global lock-order graph, a measurable share of a worker's CPU
// (bench/README.md). The tests keep the check; the commands skip it.
void SkipLockOrderChecks();

}  // namespace lockstep::cli
