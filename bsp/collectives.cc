#include "lockstep/bsp/collectives.h"

#include <cstdint>
#include <string_view>

#include "lockstep/bsp/bytes.h"

namespace lockstep::bsp {

absl::StatusOr<std::vector<std::string>> AllGather(Exchange& exchange, const std::string& mine) {
  return exchange.AllToAll(std::vector<std::string>(exchange.size(), mine));
}

absl::Status AgreeOnStatus(Exchange& exchange, const absl::Status& status) {
  std::string mine;
  Put(mine, static_cast<int32_t>(status.code()));
  mine.append(status.message().data(), status.message().size());
  auto all = AllGather(exchange, mine);
  if (!all.ok()) return all.status();
  for (const std::string& s : *all) {
    ByteReader r(s);
    int32_t code;
    if (!r.Get(code)) return absl::InternalError("a peer sent a malformed status");
    if (code == 0) continue;
    const std::string_view message = r.rest();
    return absl::Status(static_cast<absl::StatusCode>(code),
                        absl::string_view(message.data(), message.size()));
  }
  return absl::OkStatus();
}

}  // namespace lockstep::bsp
