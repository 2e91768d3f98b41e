#include "lockstep/dbsp/grpc_log.h"

#include <grpc/support/log.h>

#include <chrono>
#include <cstdint>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "spdlog/spdlog.h"
#include "transport/log_limit.h"

namespace lockstep::dbsp {
namespace {

transport::LogLimit errors;

void ToSpdlog(gpr_log_func_args* args) {
  if (args->severity != GPR_LOG_SEVERITY_ERROR) {
    spdlog::debug("gRPC: {}",
                  bsp::SanitizeForLog(args->message == nullptr ? "" : args->message, 400));
    return;
  }
  // A peer can make gRPC log an error per connection (a failed TLS handshake, garbage on the
  // port).
  if (auto suffix = errors.Admit()) {
    spdlog::warn("gRPC: {}{}",
                 bsp::SanitizeForLog(args->message == nullptr ? "" : args->message, 400), *suffix);
  }
}

}  // namespace

void RouteGrpcLogs() { gpr_set_log_function(ToSpdlog); }

}  // namespace lockstep::dbsp
