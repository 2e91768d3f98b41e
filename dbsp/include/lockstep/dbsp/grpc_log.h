#pragma once

namespace lockstep::dbsp {

// Sends gRPC's own log lines to the process's log, sanitised: its errors as warnings, at most one
// a second (a hostile peer can make it log one per connection), the rest at debug level.
void RouteGrpcLogs();

}  // namespace lockstep::dbsp
