#pragma once

#include <grpcpp/grpcpp.h>

#include <climits>

namespace lockstep::dbsp {

// Keepalive on both ends so that a vanished peer (a killed pod, a dropped network) is noticed
// within about 10 s even when no payload is in flight: a ping every 3 s, dead after 4 s without
// its ack. Messages may be large: a relay batch carries a superstep's worth of combined messages.
inline constexpr int kKeepaliveTimeMs = 3000;
inline constexpr int kKeepaliveTimeoutMs = 4000;
inline constexpr int kMaxMessageBytes = INT_MAX;

inline grpc::ChannelArguments ClientChannelArguments() {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  // Redial quickly after the master restarts.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // gRPC 1.51's pick_first stays in TRANSIENT_FAILURE after a refused connection and dials again
  // only after a re-resolution, which the DNS resolver's cooldown delays: a worker then found a
  // restarted master only 5-10 s later. Re-resolving at once makes the backoff above the bound.
  args.SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS, 100);
  return args;
}

inline void ConfigureServer(grpc::ServerBuilder& builder) {
  // gRPC binds with SO_REUSEPORT by default: a second master on a busy port would start and
  // share its connections with the first. Refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
}

}  // namespace lockstep::dbsp
