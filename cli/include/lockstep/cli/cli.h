#pragma once

#include "lockstep/catalogue/app.h"

namespace lockstep::cli {

// The `lockstep` command line over a registry of apps. A user's own binary registers its vertex
// programs and calls this to get the same `run` (and later `master | worker`) commands.
int Main(int argc, char** argv, const catalogue::AppRegistry& apps);

}  // namespace lockstep::cli
