#pragma once

#include "lockstep/bsp/app.h"

namespace lockstep::cli {

// The apps built into the `lockstep` command: the one place that names them.
bsp::AppRegistry BuiltinApps();

}  // namespace lockstep::cli
