#pragma once

// A fault-injection app for the distributed failure tests: a PageRank-like vertex program (rank
// 1/N, then 0.15/N + 0.85 * the sum of the in-neighbours' rank/outdeg, for --iterations
// supersteps, with a sum aggregator) whose parameters say where to fail:
//
//   --fail-start-worker K        start_job fails on worker K
//   --fail-complete-worker K     complete_job fails on worker K
//   --skip-part-worker K         worker K removes its part after writing it (and reports it)
//   --damage-part-worker K       worker K flips a bit of its part after writing it
//   --fail-compute-superstep S   compute fails at superstep S on the vertex --fail-compute-vertex V
//                                (so on the worker that owns V)
//   --nobody-superstep S         at superstep S the vertex --nobody-from V sends a message with
//                                ctx.SendTo to VertexIdFromExternal("nobody"), which no vertex has
//   --sleep-ms MS                each worker's first vertex sleeps MS in every superstep's compute
//                                (slow supersteps, to kill or signal a process in the middle of
//                                one)
//   --once FILE                  every fault above (the sleep included) fires for the first job
//                                only: the first job to start claims FILE (atomically, with its job
//                                ID); later jobs run clean
//
// A second app, "fault-poison", runs the same program with a message type whose encoding carries
// a poison flag: while the job is armed every message is poisoned and the Codec's Decode of a
// poisoned message always fails, so the receiver of a relayed payload cannot decode it (local
// messages are never encoded, so this needs two workers).
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <span>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/app.h"
#include "lockstep/catalogue/app.h"
#include "lockstep/runner/program_runner.h"

namespace lockstep::fault {

// A message whose encoding can be poisoned.
struct Poisonable {
  double value = 0;
  uint8_t poison = 0;
};

}  // namespace lockstep::fault

namespace lockstep::bsp {

template <>
struct Codec<fault::Poisonable> {
  static void Encode(const fault::Poisonable& m, std::string& out) {
    Codec<double>::Encode(m.value, out);
    out.push_back(static_cast<char>(m.poison));
  }
  static bool Decode(std::string_view& in, fault::Poisonable& m) {
    if (in.size() < sizeof(double) + 1) return false;
    if (in[sizeof(double)] != 0) return false;  // a poisoned message never decodes
    Codec<double>::Decode(in, m.value);
    m.poison = 0;
    in.remove_prefix(1);
    return true;
  }
};

}  // namespace lockstep::bsp

namespace lockstep::fault {

struct Faults {
  bool armed = true;
  uint64_t iterations = 5;
  int64_t fail_compute_superstep = -1;
  std::string fail_compute_vertex;
  int64_t nobody_superstep = -1;
  std::string nobody_from;
  int64_t sleep_ms = 0;
};

inline double ValueOf(double m) { return m; }
inline double ValueOf(const Poisonable& m) { return m.value; }
template <class Msg>
Msg MakeMessage(double value, bool poison) {
  if constexpr (std::is_same_v<Msg, double>) {
    (void)poison;
    return value;
  } else {
    return Msg{value, static_cast<uint8_t>(poison ? 1 : 0)};
  }
}

template <class Msg>
struct Program {
  using VertexValue = double;
  using EdgeValue = bsp::NoValue;
  using Message = Msg;
  static constexpr bool kPoison = !std::is_same_v<Msg, double>;

  Faults faults;
  bsp::SumAggregator<double>* total = nullptr;

  static void Combine(Msg& into, const Msg& m) {
    if constexpr (kPoison) {
      into.value += m.value;
      into.poison |= m.poison;
    } else {
      into += m;
    }
  }

  void Register(bsp::AggregatorRegistry& aggregators) {
    total = aggregators.Register<double>("fault.total");
  }

  absl::Status Compute(bsp::Context<Program>& ctx, std::span<const Msg> messages) const {
    const uint64_t s = ctx.superstep();
    if (faults.armed && faults.sleep_ms > 0 && ctx.index() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(faults.sleep_ms));
    }
    if (faults.armed && static_cast<int64_t>(s) == faults.fail_compute_superstep &&
        ctx.external_id() == faults.fail_compute_vertex) {
      return absl::InternalError(absl::StrCat("fault injected: compute fails at superstep ", s));
    }
    if (faults.armed && static_cast<int64_t>(s) == faults.nobody_superstep &&
        ctx.external_id() == faults.nobody_from) {
      ctx.SendTo(bsp::VertexIdFromExternal("nobody"), MakeMessage<Msg>(1.0, false));
    }
    const double n = static_cast<double>(ctx.num_vertices());
    const double incoming = messages.empty() ? 0.0 : ValueOf(messages[0]);
    ctx.value() = s == 0 ? 1.0 / n : 0.15 / n + 0.85 * incoming;
    ctx.Aggregate(total, ctx.value());
    if (s + 1 < faults.iterations && ctx.out_degree() > 0) {
      ctx.SendToAllNeighbors(
          MakeMessage<Msg>(ctx.value() / ctx.out_degree(), kPoison && faults.armed));
    }
    return absl::OkStatus();
  }

  bool KeepRunning(const bsp::StepStats& stats) const {
    return stats.superstep + 1 < faults.iterations;
  }
};

template <class Msg>
struct App {
  using Program = fault::Program<Msg>;
  static constexpr bsp::WeightUse kWeights = bsp::WeightUse::kIgnore;
  static absl::StatusOr<Program> Make(const bsp::Params& params, const bsp::GraphFacts&) {
    Program p;
    auto integer = [&](const char* name, int64_t& into) -> absl::Status {
      auto v = bsp::ParamInt(params, name);
      if (!v.ok()) return v.status();
      into = *v;
      return absl::OkStatus();
    };
    int64_t iterations = 0;
    for (auto [name, into] : {std::pair{"iterations", &iterations},
                              std::pair{"fail-compute-superstep", &p.faults.fail_compute_superstep},
                              std::pair{"nobody-superstep", &p.faults.nobody_superstep},
                              std::pair{"sleep-ms", &p.faults.sleep_ms}}) {
      if (auto st = integer(name, *into); !st.ok()) return st;
    }
    if (iterations < 1) return bsp::ParamError("iterations", "must be >= 1");
    p.faults.iterations = static_cast<uint64_t>(iterations);
    p.faults.fail_compute_vertex = bsp::ParamString(params, "fail-compute-vertex");
    p.faults.nobody_from = bsp::ParamString(params, "nobody-from");
    p.faults.armed = bsp::ParamString(params, "armed") != "0";
    return p;
  }
  static void Format(const Program&, double value, std::string& out) {
    bsp::AppendDouble(value, out);
  }
};

// True if this job may fire its faults: always without a marker file; otherwise only for the job
// that claims the marker first. The claim is a hard link of a file holding the job ID, so it is
// atomic across processes and every process of that job (whenever it starts) sees its own ID.
inline bool ClaimOnce(const std::string& marker, const std::string& job_id) {
  if (marker.empty()) return true;
  static std::atomic<int> counter{0};
  const std::string tmp = absl::StrCat(marker, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  { std::ofstream(tmp, std::ios::trunc) << job_id; }
  (void)::link(tmp.c_str(), marker.c_str());
  ::unlink(tmp.c_str());
  std::ifstream in(marker);
  const std::string owner((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return owner == job_id;
}

// The job runner: the start and complete faults are the runner's; the others the program's.
template <class Msg>
class Runner final : public runner::JobRunner {
 public:
  absl::StatusOr<std::unique_ptr<bsp::Executor>> StartJob(
      const runner::JobDetails& details, const bsp::ExecutorFactory& factory) override {
    runner::JobDetails d = details;
    armed_ = ClaimOnce(bsp::ParamString(details.work.params, "once"), details.work.job_id);
    d.work.params["armed"] = armed_ ? "1" : "0";
    auto k = bsp::ParamInt(details.work.params, "fail-start-worker");
    if (!k.ok()) return k.status();
    if (armed_ && !details.place.coordinator &&
        *k == static_cast<int64_t>(details.place.worker_index)) {
      return absl::InternalError(
          absl::StrCat("fault injected: start-job fails on worker ", details.place.worker_index));
    }
    return inner_.StartJob(d, factory);
  }

  absl::StatusOr<runner::OutputSummary> CompleteJob(const runner::JobDetails& details) override {
    auto k = bsp::ParamInt(details.work.params, "fail-complete-worker");
    if (!k.ok()) return k.status();
    const auto me = static_cast<int64_t>(details.place.worker_index);
    if (armed_ && !details.place.coordinator && *k == me) {
      return absl::InternalError(absl::StrCat("fault injected: complete-job fails on worker ",
                                              details.place.worker_index));
    }
    auto written = inner_.CompleteJob(details);
    if (!written.ok() || !armed_ || details.place.coordinator) return written;
    // A worker that goes through the protocol but whose part is missing or damaged: it reports
    // what it wrote, and the master has to notice that the file does not hold it.
    auto skip = bsp::ParamInt(details.work.params, "skip-part-worker");
    if (!skip.ok()) return skip.status();
    if (*skip == me) std::remove(details.work.output.c_str());
    auto damage = bsp::ParamInt(details.work.params, "damage-part-worker");
    if (!damage.ok()) return damage.status();
    if (*damage == me && written->bytes > 0) {
      std::fstream f(details.work.output, std::ios::in | std::ios::out | std::ios::binary);
      char c = 0;
      f.seekg(0);
      f.get(c);
      f.seekp(0);
      f.put(static_cast<char>(c ^ 1));
    }
    return written;
  }

  void AbortJob(const runner::JobDetails& details) override {
    std::fprintf(stderr, "fault app: abort_job of job %s on %s %u\n", details.work.job_id.c_str(),
                 details.place.coordinator ? "master" : "worker", details.place.worker_index);
    inner_.AbortJob(details);
  }

 private:
  runner::ProgramRunner<App<Msg>> inner_;
  bool armed_ = false;
};

inline std::vector<catalogue::AppParam> Params() {
  return {
      {"iterations", "5", "supersteps to run"},
      {"once", "", "a marker file: faults fire for the first job only"},
      {"fail-start-worker", "-1", "start_job fails on this worker"},
      {"fail-complete-worker", "-1", "complete_job fails on this worker"},
      {"skip-part-worker", "-1", "this worker removes its part after writing it"},
      {"damage-part-worker", "-1", "this worker flips a bit of its part after writing it"},
      {"fail-compute-superstep", "-1", "compute fails at this superstep ..."},
      {"fail-compute-vertex", "", "... on this vertex"},
      {"nobody-superstep", "-1", "at this superstep ..."},
      {"nobody-from", "", "... this vertex sends a message to a vertex nobody has"},
      {"sleep-ms", "0", "each worker's first vertex sleeps this long in every superstep"},
  };
}

inline catalogue::AppInfo FaultInfo() {
  catalogue::AppInfo info;
  info.name = "fault";
  info.summary = "fault injection (tests only)";
  info.params = Params();
  info.make_runner = [](std::ostream*) -> std::unique_ptr<runner::JobRunner> {
    return std::make_unique<Runner<double>>();
  };
  return info;
}

inline catalogue::AppInfo PoisonInfo() {
  catalogue::AppInfo info;
  info.name = "fault-poison";
  info.summary = "fault injection with relayed payloads that cannot be decoded (tests only)";
  info.params = Params();
  info.make_runner = [](std::ostream*) -> std::unique_ptr<runner::JobRunner> {
    return std::make_unique<Runner<Poisonable>>();
  };
  return info;
}

}  // namespace lockstep::fault
