#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lockstep/dbsp/security.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace lockstep::dbsp {

// gRPC's standard health-checking protocol (grpc.health.v1.Health/Check), which Kubernetes' gRPC
// probes speak. The empty service name is the process as a whole (liveness); the names below say
// whether a role can do its work (readiness): the master serves workers, a worker is connected to
// its master.
inline constexpr char kMasterHealthService[] = "lockstep.v1.JobQueue";
inline constexpr char kWorkerHealthService[] = "lockstep.v1.Worker";

namespace transport {
class HealthService;
}  // namespace transport

// A server that serves nothing but the health service: a worker's probe port.
class HealthServer {
 public:
  // Listens on `address` (HOST:PORT; port 0 picks a free one), with `security`'s credentials.
  // `service` starts NOT_SERVING.
  static absl::StatusOr<std::unique_ptr<HealthServer>> Start(
      const std::string& address, const std::string& service,
      const Security& security = *Security::Plain());
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  int port() const { return port_; }
  void Set(bool serving);

 private:
  HealthServer() = default;
  std::unique_ptr<transport::HealthService> health_;
  std::unique_ptr<grpc::Server> server_;
  std::string service_;
  int port_ = 0;
};

// Asks the health service at `address` for `service`'s status: "SERVING", "NOT_SERVING", ...
// An unreachable peer or an unknown service is an error naming the address.
absl::StatusOr<std::string> CheckHealth(const std::string& address, const std::string& service,
                                        std::chrono::milliseconds timeout,
                                        const Security& security = *Security::Plain());

}  // namespace lockstep::dbsp
