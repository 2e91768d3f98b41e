#pragma once

// The engine: Engine<P>, the single-node engine for one vertex program over one partition of a
// graph (docs/design.md §3.8), and Context<P>, what the program's Compute sees. The superstep
// driver is engine/driver.h; how messages travel is the message strategy's that the program's
// traits choose (engine/strategy.h); each of the driver's pieces has a header in engine/.

#include "lockstep/bsp/engine/context.h"  // IWYU pragma: export
#include "lockstep/bsp/engine/driver.h"   // IWYU pragma: export
