#pragma once

#include <map>
#include <mutex>
#include <string>

#include "grpc/health/v1/health.grpc.pb.h"

namespace lockstep::dbsp {

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

}  // namespace lockstep::dbsp
