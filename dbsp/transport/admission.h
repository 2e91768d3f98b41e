#pragma once

#include <grpcpp/grpcpp.h>

#include <string_view>

#include "lockstep/dbsp/security.h"
#include "transport/accept_guard.h"

namespace lockstep::dbsp::transport {

// Whether a call to one of our servers presented the join token `security` asks for. An admitted
// call's connection no longer counts against the share of unadmitted ones (accept_guard.h).
inline bool Admitted(const Security& security, const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find(kTokenKey);
  bool admitted = false;
  if (it == metadata.end()) {
    admitted = security.Admits(nullptr);
  } else {
    const std::string_view presented(it->second.data(), it->second.size());
    admitted = security.Admits(&presented);
  }
  if (admitted) MarkAdmitted(context.peer());
  return admitted;
}

}  // namespace lockstep::dbsp::transport
