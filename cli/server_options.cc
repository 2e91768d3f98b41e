#include "server_options.h"

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "exit_codes.h"
#include "flags.h"
#include "lockstep/cli/duration.h"
#include "spdlog/spdlog.h"

namespace lockstep::cli {

// The flags that secure a process's gRPC connections (docs/design.md §11), on master, worker and
// the commands that talk to them.
void AddSecurityOptions(CLI::App* app, dbsp::SecurityFlags& f) {
  app->add_option("--tls-cert", f.tls_cert,
                  "PEM certificate of this process, signed by --tls-ca (mutual TLS: with "
                  "--tls-key and --tls-ca)");
  app->add_option("--tls-key", f.tls_key, "PEM private key of --tls-cert");
  app->add_option("--tls-ca", f.tls_ca,
                  "PEM certificate of the cluster's authority: only peers whose certificate it "
                  "signed are trusted");
  app->add_option("--token-file", f.token_file,
                  "a file holding the cluster's join token (a trailing newline is ignored): every "
                  "worker must present it");
  app->add_flag("--insecure", f.insecure,
                "plain text on purpose: no warning when listening beyond loopback without TLS");
}

void AddLimitOptions(CLI::App* app, dbsp::ConnectionLimits& l, std::string& handshake_timeout,
                     bool pool) {
  app->add_option("--max-message-bytes", l.max_message_bytes,
                  "the largest gRPC message sent or taken (more than --max-batch-bytes)")
      ->check(CLI::Range(uint64_t{1} << 20, uint64_t{INT32_MAX}))
      ->capture_default_str();
  app->add_option("--handshake-timeout", handshake_timeout,
                  "close a connection whose TLS and HTTP/2 handshake is not done by then")
      ->capture_default_str();
  if (!pool) return;
  app->add_option("--max-pool-workers", l.max_pool_workers,
                  "refuse a worker beyond this many connected at once")
      ->check(kCount)
      ->capture_default_str();
  app->add_option("--max-conns-per-ip", l.max_conns_per_ip,
                  "refuse a worker beyond this many connected at once from one address")
      ->check(kCount)
      ->capture_default_str();
}

void AddMetricsOption(CLI::App* app, int& port) {
  app->add_option("--metrics-port", port,
                  "serve Prometheus metrics over plain HTTP on this port, /metrics (0: any free "
                  "port; default: none)")
      ->check(CLI::Range(0, 65535));
}

std::variant<int, std::shared_ptr<const dbsp::Security>> LoadSecurity(
    const dbsp::SecurityFlags& flags, dbsp::ConnectionLimits limits,
    const std::string& handshake_timeout) {
  auto timeout = ParseDuration(handshake_timeout, "--handshake-timeout");
  if (!timeout.ok()) return UsageError(timeout.status());
  if (timeout->count() <= 0) {
    return UsageError(absl::InvalidArgumentError("--handshake-timeout must be positive"));
  }
  limits.handshake_timeout = *timeout;
  auto security = dbsp::Security::Load(flags, limits);
  if (!security.ok()) return UsageError(security.status());
  return *std::move(security);
}

dbsp::Metrics& ProcessMetrics() {
  static dbsp::Metrics metrics;
  return metrics;
}

std::variant<int, std::unique_ptr<dbsp::MetricsServer>> StartMetrics(
    int port, std::function<std::string()> render) {
  if (port < 0) return std::unique_ptr<dbsp::MetricsServer>();
  auto server = dbsp::MetricsServer::Start("0.0.0.0:" + std::to_string(port), std::move(render));
  if (!server.ok()) return Fail(server.status());
  spdlog::info("metrics on port {} (http://HOST:{}/metrics)", (*server)->port(), (*server)->port());
  return *std::move(server);
}

}  // namespace lockstep::cli
