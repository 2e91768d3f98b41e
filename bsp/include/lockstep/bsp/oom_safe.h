#pragma once

// Growing an absl hash map where memory may run out.
//
// abseil 20220623 (Debian 12's) sets a hash map's new capacity before it allocates the new table:
// when that allocation throws std::bad_alloc the map is left unsafe to destroy (an empty map's
// destructor then frees a static array and the process aborts with "free(): invalid pointer",
// seen with a worker under an address-space limit). A job turns running out of memory into a
// failed job, which destroys what it built, so every growth of a map that can meet a large input
// goes through GrowOrAbandon: on bad_alloc the broken map's storage is abandoned (leaked; the job
// fails anyway), an empty map takes its place, and the exception goes on.

#include <memory>
#include <new>
#include <utility>

namespace lockstep::bsp {

template <class Map, class Grow>
decltype(auto) GrowOrAbandon(Map& map, Grow&& grow) {
  try {
    return std::forward<Grow>(grow)();
  } catch (const std::bad_alloc&) {
    std::construct_at(&map);  // over the broken map, whose destructor must not run
    throw;
  }
}

}  // namespace lockstep::bsp
