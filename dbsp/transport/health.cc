#include "lockstep/dbsp/health.h"

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "lockstep/dbsp/settings.h"
#include "transport/grpc_options.h"
#include "transport/health_service.h"

namespace lockstep::dbsp {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

namespace transport {

HealthService::HealthService() { serving_[""] = true; }

void HealthService::Set(const std::string& service, bool serving) {
  std::lock_guard<std::mutex> lock(mu_);
  serving_[service] = serving;
}

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const HealthCheckRequest* request,
                                               HealthCheckResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = serving_.find(request->service());
  if (it == serving_.end()) {
    // The name is the caller's: quote it bounded and escaped.
    reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                 "unknown service " + bsp::SanitizeForLog(request->service(), 64)));
    return reactor;
  }
  response->set_status(it->second ? HealthCheckResponse::SERVING
                                  : HealthCheckResponse::NOT_SERVING);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace transport

void HealthServer::Set(bool serving) { health_->Set(service_, serving); }

HealthServer::~HealthServer() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
}

absl::StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(const std::string& address,
                                                                  const std::string& service,
                                                                  const Security& security) {
  std::unique_ptr<HealthServer> s(new HealthServer());
  s->health_ = std::make_unique<transport::HealthService>();
  s->health_->Set(service, false);
  s->service_ = service;
  grpc::ServerBuilder builder;
  transport::ConfigureServer(
      builder, security);  // as the master's: keepalive, and a port in use is an error
  builder.AddListeningPort(address, security.ServerCredentials(), &s->port_);
  builder.RegisterService(s->health_.get());
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat(SettingName(Setting::kHealthPort), ": cannot listen on ", address));
  }
  return s;
}

absl::StatusOr<std::string> CheckHealth(const std::string& address, const std::string& service,
                                        std::chrono::milliseconds timeout,
                                        const Security& security) {
  auto stub = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(address, security.ChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  HealthCheckRequest request;
  request.set_service(service);
  HealthCheckResponse response;
  const grpc::Status st = stub->Check(&ctx, request, &response);
  if (!st.ok()) {
    return absl::UnavailableError(absl::StrCat("health check of ", address, " (service '", service,
                                               "'): ", st.error_message()));
  }
  return HealthCheckResponse::ServingStatus_Name(response.status());
}

}  // namespace lockstep::dbsp
