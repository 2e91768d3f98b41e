#include "lockstep/dbsp/grpc_log.h"

#include <grpc/support/log.h>

#include <chrono>
#include <cstdint>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp {
namespace {

std::mutex log_mu;
std::chrono::steady_clock::time_point last_line{};
uint64_t unlogged = 0;

void ToSpdlog(gpr_log_func_args* args) {
  if (args->severity != GPR_LOG_SEVERITY_ERROR) {
    spdlog::debug("gRPC: {}",
                  bsp::SanitizeForLog(args->message == nullptr ? "" : args->message, 400));
    return;
  }
  // A peer can make gRPC log an error per connection (a failed TLS handshake, garbage on the
  // port): at most a line a second, with the count of those left out.
  std::lock_guard<std::mutex> lock(log_mu);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_line < std::chrono::seconds(1)) {
    ++unlogged;
    return;
  }
  spdlog::warn("gRPC: {}{}",
               bsp::SanitizeForLog(args->message == nullptr ? "" : args->message, 400),
               unlogged == 0 ? "" : absl::StrCat(" (and ", unlogged, " more since the last)"));
  last_line = now;
  unlogged = 0;
}

}  // namespace

void RouteGrpcLogs() { gpr_set_log_function(ToSpdlog); }

}  // namespace lockstep::dbsp
