#pragma once

// The options of the processes that serve or dial gRPC (master, worker, and the commands that ask
// them): security (docs/design.md §11), the limits a server puts on its peers, and /metrics
// (§12).
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "CLI/CLI.hpp"
#include "lockstep/dbsp/metrics.h"
#include "lockstep/dbsp/security.h"

namespace lockstep::cli {

// --tls-cert, --tls-key, --tls-ca, --token-file, --insecure.
void AddSecurityOptions(CLI::App* command, dbsp::SecurityFlags& flags);

// --max-message-bytes and --handshake-timeout; with `pool` (the master) also the limits of its
// worker pool, --max-pool-workers and --max-conns-per-ip.
void AddLimitOptions(CLI::App* command, dbsp::ConnectionLimits& limits,
                     std::string& handshake_timeout, bool pool);

// --metrics-port (negative: none given).
void AddMetricsOption(CLI::App* command, int& port);

// The Security of `flags` and `limits`, or the exit code of its usage error.
std::variant<int, std::shared_ptr<const dbsp::Security>> LoadSecurity(
    const dbsp::SecurityFlags& flags, dbsp::ConnectionLimits limits = {},
    const std::string& handshake_timeout = "10s");

// The process's figures for /metrics (docs/design.md §12).
dbsp::Metrics& ProcessMetrics();

// Serves /metrics on `port` (0: any free one) over plain HTTP, or nothing for a negative port; or
// the exit code of its failure.
std::variant<int, std::unique_ptr<dbsp::MetricsServer>> StartMetrics(
    int port, std::function<std::string()> render);

}  // namespace lockstep::cli
