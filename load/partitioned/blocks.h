// Where a worker of a partitioned load (docs/design.md §4.4) keeps the edges it receives: in blocks
// mapped from the kernel, per sender. Private to the load library.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <utility>
#include <vector>

namespace lockstep::load::partitioned {

// An append-only array in fixed-size blocks: growing it never copies what it holds nor leaves
// more than one block's slack, which a vector's doubling would. The blocks are mapped from the
// kernel, not taken from malloc, so that they never sit between a round's temporaries in the heap
// (which malloc could then not give back) and are returned as soon as they are drained.
template <class T>
class Blocks {
 public:
  static constexpr size_t kBlock = size_t{1} << 18;
  static constexpr size_t kBlockBytes = kBlock * sizeof(T);
  Blocks() = default;
  Blocks(const Blocks&) = delete;
  Blocks& operator=(const Blocks&) = delete;
  Blocks(Blocks&& o) noexcept
      : blocks_(std::move(o.blocks_)), size_(o.size_), next_(o.next_), end_(o.end_) {
    o.blocks_.clear();
    o.size_ = 0;
    o.next_ = o.end_ = nullptr;
  }
  ~Blocks() { Clear(); }

  size_t size() const { return size_; }
  T& operator[](size_t i) { return blocks_[i / kBlock][i % kBlock]; }
  void push_back(T v) {
    if (next_ == end_) Grow();
    *next_++ = v;
    ++size_;
  }
  // For a loop that appends through a cursor of its own (its state then stays in registers):
  // the free room of the last block (of a new block if it is full), then Appended(n) once n
  // elements are written at its start.
  std::span<T> Room() {
    if (next_ == end_) Grow();
    return {next_, end_};
  }
  void Appended(size_t n) {
    next_ += n;
    size_ += n;
  }
  // Calls f(data, n) for each block in order, unmapping each block after it.
  template <class F>
  void Drain(F&& f) {
    for (size_t b = 0; b < blocks_.size(); ++b) {
      f(static_cast<const T*>(blocks_[b]), std::min(kBlock, size_ - b * kBlock));
      ::munmap(blocks_[b], kBlockBytes);
      blocks_[b] = nullptr;
    }
    Clear();
  }
  // Calls f(data, n) for each block in order, which may change its elements.
  template <class F>
  void Update(F&& f) {
    for (size_t b = 0; b < blocks_.size(); ++b) f(blocks_[b], std::min(kBlock, size_ - b * kBlock));
  }
  // Calls f(a, b, n) for each pair of blocks of this and `other` (as many elements), in order.
  template <class F>
  void VisitWith(const Blocks& other, F&& f) const {
    for (size_t b = 0; b < blocks_.size(); ++b) {
      f(static_cast<const T*>(blocks_[b]), static_cast<const T*>(other.blocks_[b]),
        std::min(kBlock, size_ - b * kBlock));
    }
  }
  // Calls f(a, b, n) for each pair of blocks of this and `other` (as many elements), in order,
  // then hands both to give(block, kBlockBytes), which takes them (maps them elsewhere or
  // unmaps them).
  template <class F, class Give>
  void DrainWith(Blocks& other, F&& f, Give&& give) {
    for (size_t b = 0; b < blocks_.size(); ++b) {
      f(static_cast<const T*>(blocks_[b]), static_cast<const T*>(other.blocks_[b]),
        std::min(kBlock, size_ - b * kBlock));
      T* mine = std::exchange(blocks_[b], nullptr);
      T* theirs = std::exchange(other.blocks_[b], nullptr);
      give(static_cast<void*>(mine), kBlockBytes);
      give(static_cast<void*>(theirs), kBlockBytes);
    }
    Clear();
    other.Clear();
  }
  void Clear() {
    for (T* b : blocks_) {
      if (b != nullptr) ::munmap(b, kBlockBytes);
    }
    blocks_.clear();
    size_ = 0;
    next_ = end_ = nullptr;
  }

 private:
  void Grow() {
    // Populated at once: the block is about to be filled, and one call maps its pages for less
    // than a fault per page.
    void* p = ::mmap(nullptr, kBlockBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    blocks_.push_back(static_cast<T*>(p));
    next_ = blocks_.back();
    end_ = next_ + kBlock;
  }

  std::vector<T*> blocks_;
  size_t size_ = 0;
  T* next_ = nullptr;  // where the next element goes in the last block
  T* end_ = nullptr;
};

// Moves the pages of drained blocks into a PartEdges' mapped bytes (PartEdges::Mapped) ahead of
// where its pairs are written next, instead of unmapping them: mremap moves a block's pages with
// no copy, where the pairs' own bytes would fault fresh, zeroed pages in one by one. The pairs
// are written as runs, each in order from its first pair (an oriented part's heads, then its
// reverses): a page is moved only where its run has written nothing yet and wholly inside one

// The stored edges a worker received from one sender, in the sender's (input) order.
struct EdgesFrom {
  Blocks<uint32_t> src, dst;
  Blocks<double> weights;
  // What OrientEdges counts, counted as the first `counted` edges came (TakeRawParts,
  // which reads each end's partition in its record): the edges from a vertex the receiver owns,
  // those into one that are not loops, and whether one is a loop at an owned vertex.
  size_t counted = 0, heads = 0, reverses = 0;
  bool owned_loop = false;
};

}  // namespace lockstep::load::partitioned
