#pragma once

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "lockstep/dbsp/security.h"
#include "transport/accept_guard.h"

namespace lockstep::dbsp::transport {

// Keepalive on both ends, so that a vanished peer (a killed pod, a dropped network) is noticed
// even when no payload is in flight: a ping every 2 s, and a peer whose answer does not come
// within 10 s is gone (docs/design.md §7). A peer that is alive but slow (starved of CPU, in a
// long superstep) answers pings from gRPC's own threads and is bound by --peer-timeout instead.
inline constexpr int kKeepaliveTimeMs = 2000;
inline constexpr int kKeepaliveTimeoutMs = 10000;
// gRPC's message size limits are ints.
inline int MessageLimit(const Security& security) {
  return static_cast<int>(
      std::min<uint64_t>(security.limits().max_message_bytes, uint64_t{INT_MAX}));
}

inline grpc::ChannelArguments ClientChannelArguments(
    const Security& security = *Security::Plain()) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetMaxReceiveMessageSize(MessageLimit(security));
  args.SetMaxSendMessageSize(MessageLimit(security));
  // Redial quickly after the master restarts.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // gRPC 1.51's pick_first stays in TRANSIENT_FAILURE after a refused connection and dials again
  // only after a re-resolution, which the DNS resolver's cooldown delays (bench/README.md, issue
  // 41). Re-resolving at once makes the backoff above the bound.
  args.SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS, 100);
  return args;
}

inline void ConfigureServer(grpc::ServerBuilder& builder,
                            const Security& security = *Security::Plain()) {
  // gRPC binds with SO_REUSEPORT by default: a second master on a busy port would start and
  // share its connections with the first. Refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.SetMaxReceiveMessageSize(MessageLimit(security));
  builder.SetMaxSendMessageSize(MessageLimit(security));
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             static_cast<int>(security.limits().handshake_timeout.count()));
  ConfigureAcceptGuard(security.limits().handshake_timeout);
}

}  // namespace lockstep::dbsp::transport
