#pragma once

// What the job layer sees of the transport: a worker's stream on the master, the master's stream
// on a worker, and the handlers that receive what those streams read. The gRPC streams implement
// them (master_server.h, master_link.h); the unit tests wire jobs together in-process through
// them, with no sockets.

#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/v1/jobqueue.pb.h"

namespace lockstep::dbsp::transport {

// The master's end of one worker's stream, as a job uses it.
class WorkerStream {
 public:
  virtual ~WorkerStream() = default;
  virtual const std::string& peer() const = 0;
  // Queues a payload behind the ones already queued; never blocks and never calls into gRPC, so
  // it may be called under the job's lock (which keeps the order of releases and relays).
  // `urgent` drops whatever is still queued first (an abort makes it moot).
  virtual void Enqueue(v1::MasterPayload payload, bool urgent = false) = 0;
  // Starts writing what is queued. Call without holding a lock of your own.
  virtual void Flush() = 0;
};

// Receives what the streams of a job's workers read, on the transport's threads. Calls never
// block for long and never call into the transport's reactions.
class WorkerStreamHandler {
 public:
  virtual ~WorkerStreamHandler() = default;
  virtual void OnPayload(uint32_t worker, v1::WorkerPayload& payload) = 0;
  // The worker's stream ended (it hung up, its connection broke, or a write failed).
  virtual void OnHangUp(uint32_t worker, std::string_view why) = 0;
};

// A worker's end of its stream to the master, as a job uses it.
class MasterStream {
 public:
  virtual ~MasterStream() = default;
  // Queues a payload; blocks while the outbox holds more than its byte budget (back-pressure
  // from a slow master). False once the stream is closed (the payload is dropped).
  virtual bool Send(v1::WorkerPayload payload) = 0;
};

// Receives what a worker's stream reads from the master, on the transport's threads.
class MasterStreamHandler {
 public:
  virtual ~MasterStreamHandler() = default;
  virtual void OnPayload(v1::MasterPayload& payload) = 0;
  virtual void OnHangUp(std::string_view why) = 0;
};

}  // namespace lockstep::dbsp::transport
