#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace lockstep::dbsp {

// gRPC's standard health-checking protocol (grpc.health.v1.Health/Check), which Kubernetes' gRPC
// probes speak. The empty service name is the process as a whole (liveness); the names below say
// whether a role can do its work (readiness): the master serves workers, a worker is connected to
// its master.
inline constexpr char kMasterHealthService[] = "lockstep.v1.JobQueue";
inline constexpr char kWorkerHealthService[] = "lockstep.v1.Worker";

// The service itself, registered on the master's server and on a worker's probe port. Unknown
// service names get NOT_FOUND, as the protocol asks. (grpc++'s built-in service is not used: a
// server with no synchronous service of its own, like a worker's probe port, cannot host it.)
class HealthService final : public grpc::health::v1::Health::Service {
 public:
  HealthService();
  void Set(const std::string& service, bool serving);
  grpc::Status Check(grpc::ServerContext* context,
                     const grpc::health::v1::HealthCheckRequest* request,
                     grpc::health::v1::HealthCheckResponse* response) override;

 private:
  std::mutex mu_;
  std::map<std::string, bool, std::less<>> serving_;
};

// A server that serves nothing but the health service: a worker's probe port.
class HealthServer {
 public:
  // Listens on `address` (HOST:PORT; port 0 picks a free one). `service` starts NOT_SERVING.
  static absl::StatusOr<std::unique_ptr<HealthServer>> Start(const std::string& address,
                                                             const std::string& service);
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  int port() const { return port_; }
  void Set(bool serving) { health_->Set(service_, serving); }

 private:
  HealthServer() = default;
  std::unique_ptr<HealthService> health_;
  std::unique_ptr<grpc::Server> server_;
  std::string service_;
  int port_ = 0;
};

// Asks the health service at `address` for `service`'s status: "SERVING", "NOT_SERVING", ...
// An unreachable peer or an unknown service is an error naming the address.
absl::StatusOr<std::string> CheckHealth(const std::string& address, const std::string& service,
                                        std::chrono::milliseconds timeout);

}  // namespace lockstep::dbsp
