#pragma once

// How a cluster's gRPC connections are secured (docs/design.md §11): mutual TLS under one
// certificate authority, a shared join token, both, or plain text. Every connection of a process
// (master and workers, worker and worker, health checks) uses the one Security it was given.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace grpc {
class ChannelCredentials;
class ClientContext;
class ServerCredentials;
}  // namespace grpc

namespace lockstep::dbsp {

// The command line's security options, as given.
struct SecurityFlags {
  std::string tls_cert;    // PEM: this process's certificate (chain)
  std::string tls_key;     // PEM: its private key
  std::string tls_ca;      // PEM: the authority whose certificates are trusted, and only those
  std::string token_file;  // the join token (a trailing newline is not part of it)
  bool insecure = false;   // plain text asked for: no TLS flag may then be given
};

// The named limits a process puts on what its peers may use (docs/design.md §11).
struct ConnectionLimits {
  // The largest message sent or received (a batch is at most --max-batch-bytes, 4 MiB by
  // default, plus its framing).
  uint64_t max_message_bytes = uint64_t{64} << 20;
  // A connection that has not finished its handshake (TLS, HTTP/2) by then is closed: half-open
  // connections cannot pile up.
  std::chrono::milliseconds handshake_timeout{10000};
  // The master: workers connected at once (waiting in the pool or in a job), and from one
  // address.
  uint32_t max_pool_workers = 1024;
  uint32_t max_conns_per_ip = 256;
};

// The metadata key that carries the join token on every call to a master or a worker.
inline constexpr char kTokenKey[] = "lockstep-token";

class Security {
 public:
  // Plain text, no token.
  static std::shared_ptr<const Security> Plain();
  // Reads the files the flags name. Either all three TLS files or none; a file that cannot be
  // read, is not PEM, or a token file that is empty is an InvalidArgument error naming the flag
  // and the file.
  static absl::StatusOr<std::shared_ptr<const Security>> Load(
      const SecurityFlags& flags, const ConnectionLimits& limits = ConnectionLimits());

  bool tls() const { return !ca_.empty(); }
  bool has_token() const { return !token_.empty(); }
  bool insecure() const { return insecure_; }
  const ConnectionLimits& limits() const { return limits_; }
  // "mutual TLS and a join token", "mutual TLS", "a join token over plain text", "plain text".
  std::string Describe() const;

  // A server's credentials: with TLS, a client must present a certificate the authority signed.
  std::shared_ptr<grpc::ServerCredentials> ServerCredentials() const;
  // A client's: with TLS, it presents its certificate and trusts only a server whose certificate
  // the authority signed (the authority is the cluster's own: a peer's host name is not checked).
  std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials() const;
  // Puts the join token (if any) into a call's metadata.
  void Sign(grpc::ClientContext& context) const;
  // Whether a call presented the token (`presented`: its metadata value, or nullptr if it had
  // none); true when there is no token to check. Takes the same time for any wrong token.
  bool Admits(const std::string_view* presented) const;

 private:
  Security() = default;
  std::string cert_, key_, ca_, token_;
  bool insecure_ = false;
  ConnectionLimits limits_;
};

// Says at start how a server listening on `address` is secured: a warning when it takes plain
// text on an address other than loopback without --insecure (anyone who reaches the port is let
// in), an info line otherwise. `role` names the server ("master", "worker's peer server").
void LogSecurity(const std::string& role, const std::string& address, const Security& security);

}  // namespace lockstep::dbsp
