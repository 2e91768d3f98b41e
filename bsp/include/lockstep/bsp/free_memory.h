#pragma once

// Giving freed memory back to the kernel at the points where a build's peak is about to come.
//
// glibc's malloc keeps memory freed below its mmap threshold (which it raises to the size of the
// largest block freed, up to 32 MB) in its heaps for reuse. A load frees tens of MB of such
// temporaries (a round's buffers, sort arrays) just before it allocates the CSR arrays, which are
// large enough to be mapped afresh: the freed memory is then never reused, yet stays resident and
// counts in the worker's peak. ReturnFreedMemory() hands it back (malloc_trim releases the free
// pages of every heap, not only the top); it costs a walk of malloc's free lists, so it is called
// between phases, never per round or per superstep.

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace lockstep::bsp {

// Not under AddressSanitizer, whose allocator replaces malloc's: there glibc's malloc is never
// initialised, and a first malloc_trim from several threads at once initialises it on each of
// them, which glibc then asserts against when they exit ("a->attached_threads > 0", seen in the
// unit tests, which load partitions on threads).
inline void ReturnFreedMemory() {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  malloc_trim(0);
#endif
}

}  // namespace lockstep::bsp
