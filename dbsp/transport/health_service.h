#pragma once

#include <map>
#include <mutex>
#include <string>

#include "grpc/health/v1/health.grpc.pb.h"

namespace lockstep::dbsp::transport {

// gRPC's health-checking protocol (grpc.health.v1.Health/Check) on the callback API, registered
// on the master's server and on a worker's probe port. Unknown service names get NOT_FOUND, as
// the protocol asks. (grpc++'s built-in service is not used: it would bring the synchronous
// server's thread pool with it.)
class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  HealthService();
  void Set(const std::string& service, bool serving);
  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                  const grpc::health::v1::HealthCheckRequest* request,
                                  grpc::health::v1::HealthCheckResponse* response) override;

 private:
  std::mutex mu_;
  std::map<std::string, bool, std::less<>> serving_;
};

}  // namespace lockstep::dbsp::transport
