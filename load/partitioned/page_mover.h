// The pages of drained receive blocks moved into a partition's packed edges, on the assembly of a
// partitioned load (docs/design.md §4.4). Private to the load library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "lockstep/bsp/topology.h"

namespace lockstep::load::partitioned {

// Moves the pages of drained blocks into a PartEdges' mapped bytes (PartEdges::Mapped) ahead of
// where its pairs are written next, instead of unmapping them: mremap moves a block's pages with
// no copy, where the pairs' own bytes would fault fresh, zeroed pages in one by one. The pairs
// are written as runs, each in order from its first pair (an oriented part's heads, then its
// reverses): a page is moved only where its run has written nothing yet and wholly inside one
// run, so that the page two runs share and the last one (with the slack) fault in as before.
// What the pages held before is overwritten by the pairs (a moved page is never read before).
class PageMover {
 public:
  // `starts`: each run's first pair, in increasing order; the last run ends at the last pair.
  PageMover(bsp::PartEdges& edges, std::initializer_list<size_t> starts);
  PageMover(const PageMover&) = delete;
  PageMover& operator=(const PageMover&) = delete;

  // The bytes moved so far.
  uint64_t moved() const { return moved_; }
  // Run r has written its pairs up to (not including) pair `next`.
  void Wrote(size_t r, size_t next) { runs_[r].written = next * stride_; }

  // Takes a mapped block of `bytes` (a multiple of the page size): its pages go to the runs
  // that have the fewest moved ahead of where they write, the rest is unmapped.
  void Give(void* block, size_t bytes);

 private:
  struct Run {
    size_t written;  // bytes from the start: the run's pairs are written up to here
    size_t next;     // where the next moved page goes (page-aligned)
    size_t end;      // the end of the last page wholly inside the run
  };
  size_t RoundUp(size_t at) const { return (at + page_ - 1) / page_ * page_; }

  // Each move leaves a mapping of its own (moved pages do not merge with their neighbours'),
  // so they stop short of the kernel's limit of mappings a process (vm.max_map_count, 65,530 by
  // default): 4 GiB of pairs moved at most.
  static constexpr size_t kMaxMoves = 4096;

  uint8_t* base_;
  size_t stride_;
  size_t page_;
  std::vector<Run> runs_;
  uint64_t moved_ = 0;
  size_t moves_ = 0;
};

}  // namespace lockstep::load::partitioned
