#pragma once

#include <grpcpp/grpcpp.h>

#include <string_view>

#include "lockstep/dbsp/security.h"

namespace lockstep::dbsp::transport {

// Whether a call to one of our servers presented the join token `security` asks for.
inline bool Admitted(const Security& security, const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find(kTokenKey);
  if (it == metadata.end()) return security.Admits(nullptr);
  const std::string_view presented(it->second.data(), it->second.size());
  return security.Admits(&presented);
}

}  // namespace lockstep::dbsp::transport
