#include "partitioned/page_mover.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

namespace lockstep::load::partitioned {

PageMover::PageMover(bsp::PartEdges& edges, std::initializer_list<size_t> starts)
    : base_(edges.mapped_data()),
      stride_(edges.stride()),
      page_(static_cast<size_t>(::sysconf(_SC_PAGESIZE))) {
  std::vector<size_t> bounds(starts);
  bounds.push_back(edges.size());
  for (size_t r = 0; r + 1 < bounds.size(); ++r) {
    const size_t first = bounds[r] * stride_, last = bounds[r + 1] * stride_;
    runs_.push_back({first, RoundUp(first), last / page_ * page_});
  }
}

void PageMover::Give(void* block, size_t bytes) {
  auto* from = static_cast<uint8_t*>(block);
  size_t done = 0;
  while (base_ != nullptr && done < bytes) {
    Run* to = nullptr;
    for (Run& run : runs_) {
      run.next = std::max(run.next, RoundUp(run.written));
      if (run.next < run.end &&
          (to == nullptr || run.next - run.written < to->next - to->written)) {
        to = &run;
      }
    }
    if (to == nullptr) break;
    const size_t n = std::min(bytes - done, to->end - to->next);
    if (moves_ == kMaxMoves || ::mremap(from + done, n, n, MREMAP_MAYMOVE | MREMAP_FIXED,
                                        base_ + to->next) == MAP_FAILED) {
      // The rest of the pages fault in as they would have. (A failed mremap may have unmapped
      // the place already: it is mapped again, so that no pair lands in a hole.)
      if (moves_ != kMaxMoves) {
        ::mmap(base_ + to->next, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
               -1, 0);
      }
      base_ = nullptr;
      break;
    }
    ++moves_;
    to->next += n;
    done += n;
    moved_ += n;
  }
  if (done < bytes) ::munmap(from + done, bytes - done);
}

}  // namespace lockstep::load::partitioned
