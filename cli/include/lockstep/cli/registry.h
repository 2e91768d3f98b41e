#pragma once

#include "lockstep/catalogue/app.h"

namespace lockstep::cli {

// The apps built into the `lockstep` command: the one place that names them.
catalogue::AppRegistry BuiltinApps();

}  // namespace lockstep::cli
