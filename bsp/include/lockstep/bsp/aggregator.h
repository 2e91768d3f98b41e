#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/codec.h"
#include "lockstep/bsp/exact_sum.h"

namespace lockstep::bsp {

// An aggregator operation: an identity and a commutative, associative merge.
template <class Op, class T>
concept AggregatorOp = requires(T& a, const T& b) {
  { Op::Identity() } -> std::convertible_to<T>;
  Op::Merge(a, b);
};

template <class T>
struct SumOp {
  static T Identity() { return T{}; }
  static void Merge(T& into, const T& x) { into += x; }
};
// A floating-point sum is accumulated exactly and rounded once (see ExactSum), so that it does not
// depend on how the contributions were grouped: by blocks, threads or workers. An Op may name
// such an `Accumulator` with Add(acc, x) and Result(acc); the aggregator then keeps its partials,
// delta and value as accumulators, merges them with acc.Add(acc), and exchanges them, not rounded
// values, with the distributed layer.
template <class T>
requires std::is_same_v<T, float> || std::is_same_v<T, double>
struct SumOp<T> {
  using Accumulator = ExactSum;
  static T Identity() { return T{}; }
  static void Merge(T& into, const T& x) { into += x; }
  static void Add(ExactSum& into, T x) { into.Add(x); }
  static T Result(const ExactSum& sum) { return sum.Round<T>(); }
};
template <class T>
requires std::is_same_v<T, long double>
struct SumOp<T> {
  static_assert(sizeof(T) == 0,
                "a sum of long doubles would not be reproducible; use SumAggregator<double>, which "
                "is exact");
};
template <class T>
struct MinOp {
  static T Identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  }
  static void Merge(T& into, const T& x) { into = std::min(into, x); }
};
template <class T>
struct MaxOp {
  static T Identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  }
  static void Merge(T& into, const T& x) { into = std::max(into, x); }
};

// The type-erased face of an aggregator, used by the engine (merging at a superstep's end) and by
// the distributed layer (deltas out, global values in).
class AggregatorBase {
 public:
  explicit AggregatorBase(std::string name) : name_(std::move(name)) {}
  virtual ~AggregatorBase() = default;
  AggregatorBase(const AggregatorBase&) = delete;
  AggregatorBase& operator=(const AggregatorBase&) = delete;

  const std::string& name() const { return name_; }

  // Sizes the per-block partials; slot `slots` (one past the blocks) takes contributions made
  // outside compute, e.g. from callbacks.
  virtual void PrepareSlots(size_t slots) = 0;
  // Merges the partials, in slot order so that the result does not depend on the thread count,
  // into this superstep's delta, folds the delta into the value and clears the partials.
  virtual void MergeStep() = 0;
  // A distributed worker leaves contributions made outside compute out of its deltas: every
  // process runs the callbacks, so only the master's count (docs/design.md §3.3: the same values as
  // a local run).
  void set_count_outside_compute(bool count) { count_outside_compute_ = count; }
  bool count_outside_compute() const { return count_outside_compute_; }

  virtual void EncodeDelta(std::string& out) const = 0;
  virtual void EncodeValue(std::string& out) const = 0;
  // Folds a peer's encoded delta into this aggregator's value (the master's side).
  virtual absl::Status MergeEncodedDelta(std::string_view bytes) = 0;
  // Overwrites the value with an encoded global value (the worker's side).
  virtual absl::Status SetEncodedValue(std::string_view bytes) = 0;

 private:
  std::string name_;
  bool count_outside_compute_ = true;
};

// Whether an Op accumulates in a type of its own (SumOp<double>: an exact sum) rather than in T.
template <class Op, class T>
concept AccumulatingOp = AggregatorOp<Op, T> &&
    requires(typename Op::Accumulator& acc, const typename Op::Accumulator& other, const T& x) {
  Op::Add(acc, x);
  acc.Add(other);
  { Op::Result(other) } -> std::convertible_to<T>;
  requires HasCodec<typename Op::Accumulator>;
};

namespace internal {
// The state an aggregator keeps: T merged with Op::Merge, or Op's accumulator.
template <class T, class Op>
struct Accumulation {
  using Type = T;
  static Type Identity() { return Op::Identity(); }
  static Type Of(const T& x) { return x; }
  static void Add(Type& into, const T& x) { Op::Merge(into, x); }
  static void Merge(Type& into, const Type& x) { Op::Merge(into, x); }
};
template <class T, class Op>
requires AccumulatingOp<Op, T>
struct Accumulation<T, Op> {
  using Type = typename Op::Accumulator;
  static Type Identity() { return Type{}; }
  static Type Of(const T& x) {
    Type acc{};
    Op::Add(acc, x);
    return acc;
  }
  static void Add(Type& into, const T& x) { Op::Add(into, x); }
  static void Merge(Type& into, const Type& x) { into.Add(x); }
};
}  // namespace internal

// A named, typed aggregator. Contributions during superstep s go to per-block partials (no
// contention, no locks) and are merged at the step's end, so Get() inside compute always returns
// the value as of the step's start. The value persists across supersteps until Set().
//
// With an accumulating Op (floating-point sums) the partials, the delta and the value are exact
// accumulators, and Get() and Delta() their results rounded once: the value is then the same
// whatever the blocks, threads or workers were, and the encoded delta and value carry the exact
// accumulators.
template <class T, class Op>
requires AggregatorOp<Op, T>
class Aggregator final : public AggregatorBase {
  using Acc = internal::Accumulation<T, Op>;
  using State = typename Acc::Type;
  static constexpr bool kAccumulating = AccumulatingOp<Op, T>;
  struct NoCache {};
  using Cache = std::conditional_t<kAccumulating, T, NoCache>;

 public:
  explicit Aggregator(std::string name) : AggregatorBase(std::move(name)) {
    PrepareSlots(0);
    Refresh();
  }

  const T& Get() const {
    if constexpr (kAccumulating) {
      return value_result_;
    } else {
      return value_;
    }
  }
  void Set(const T& value) {
    value_ = Acc::Of(value);
    Refresh();
  }
  // The merged contributions of the last completed superstep under Op.
  const T& Delta() const {
    if constexpr (kAccumulating) {
      return delta_result_;
    } else {
      return delta_;
    }
  }

  // From compute: `slot` is the vertex block being computed.
  void AggregateIn(size_t slot, const T& x) { Acc::Add(slots_[slot].value, x); }
  // From outside compute (callbacks); merged with the next superstep's contributions.
  void Aggregate(const T& x) { Acc::Add(slots_.back().value, x); }

  void PrepareSlots(size_t slots) override { slots_.assign(slots + 1, Slot{Acc::Identity()}); }
  void MergeStep() override {
    delta_ = Acc::Identity();
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (i + 1 < slots_.size() || count_outside_compute()) Acc::Merge(delta_, slots_[i].value);
      slots_[i].value = Acc::Identity();
    }
    Acc::Merge(value_, delta_);
    Refresh();
  }
  void EncodeDelta(std::string& out) const override { Codec<State>::Encode(delta_, out); }
  void EncodeValue(std::string& out) const override { Codec<State>::Encode(value_, out); }
  absl::Status MergeEncodedDelta(std::string_view bytes) override {
    State x;
    if (!Codec<State>::Decode(bytes, x) || !bytes.empty()) return DecodeError();
    Acc::Merge(value_, x);
    Refresh();
    return absl::OkStatus();
  }
  absl::Status SetEncodedValue(std::string_view bytes) override {
    State x;
    if (!Codec<State>::Decode(bytes, x) || !bytes.empty()) return DecodeError();
    value_ = std::move(x);
    Refresh();
    return absl::OkStatus();
  }

 private:
  // One cache line per slot so that blocks computed on different threads do not share lines.
  struct alignas(64) Slot {
    State value;
  };
  absl::Status DecodeError() const {
    return absl::InvalidArgumentError("cannot decode a value for aggregator \"" + name() + "\"");
  }
  // Rounds the accumulators once, so that Get() in compute costs a load.
  void Refresh() {
    if constexpr (kAccumulating) {
      value_result_ = Op::Result(value_);
      delta_result_ = Op::Result(delta_);
    }
  }

  State value_ = Acc::Identity();
  State delta_ = Acc::Identity();
  [[no_unique_address]] Cache value_result_{};
  [[no_unique_address]] Cache delta_result_{};
  std::vector<Slot> slots_;
};

template <class T>
using SumAggregator = Aggregator<T, SumOp<T>>;
template <class T>
using MinAggregator = Aggregator<T, MinOp<T>>;
template <class T>
using MaxAggregator = Aggregator<T, MaxOp<T>>;
using CountAggregator = Aggregator<uint64_t, SumOp<uint64_t>>;

// Named aggregators of one job, in name order (so that every process lists them alike).
class AggregatorRegistry {
 public:
  // Registers an aggregator; a second registration of a name returns the first one if the types
  // agree and nullptr if they differ.
  template <class T, class Op = SumOp<T>>
  Aggregator<T, Op>* Register(const std::string& name) {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return dynamic_cast<Aggregator<T, Op>*>(it->second.get());
    auto owned = std::make_unique<Aggregator<T, Op>>(name);
    owned->PrepareSlots(slots_);
    Aggregator<T, Op>* raw = owned.get();
    by_name_.emplace(name, std::move(owned));
    return raw;
  }
  AggregatorBase* Find(std::string_view name) const {
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : it->second.get();
  }
  template <class F>
  void ForEach(F&& f) const {
    for (const auto& [name, agg] : by_name_) f(*agg);
  }
  void PrepareSlots(size_t slots) {
    slots_ = slots;
    for (auto& [name, agg] : by_name_) agg->PrepareSlots(slots);
  }
  void MergeStep() {
    for (auto& [name, agg] : by_name_) agg->MergeStep();
  }
  void set_count_outside_compute(bool count) {
    for (auto& [name, agg] : by_name_) agg->set_count_outside_compute(count);
  }
  bool empty() const { return by_name_.empty(); }

 private:
  std::map<std::string, std::unique_ptr<AggregatorBase>, std::less<>> by_name_;
  size_t slots_ = 0;
};

}  // namespace lockstep::bsp
