#include "job/shipping_runner.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"

namespace lockstep::dbsp::job {

absl::StatusOr<ShippingRunner> ShippingRunner::Make(runner::JobRunner& inner, Ship ship,
                                                    const runner::JobDetails& details) {
  if (!ship) {
    return absl::UnimplementedError(absl::StrCat("this worker cannot write results to ",
                                                 bsp::SanitizeForLog(details.work.output, 100)));
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string dir =
      absl::StrCat(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp", "/lockstep-part.XXXXXX");
  if (::mkdtemp(dir.data()) == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot make a directory ", dir, ": ", std::strerror(errno)));
  }
  return ShippingRunner(inner, std::move(ship), std::move(dir), details);
}

ShippingRunner::ShippingRunner(runner::JobRunner& inner, Ship ship, std::string dir,
                               runner::JobDetails sink)
    : inner_(inner),
      ship_(std::move(ship)),
      dir_(std::move(dir)),
      sink_(std::move(sink)),
      local_(sink_) {
  local_.work.output = dir_ + "/part";
}

ShippingRunner::ShippingRunner(ShippingRunner&& o) noexcept
    : inner_(o.inner_),
      ship_(std::move(o.ship_)),
      dir_(std::exchange(o.dir_, std::string())),
      sink_(std::move(o.sink_)),
      local_(std::move(o.local_)) {}

ShippingRunner::~ShippingRunner() {
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

absl::StatusOr<runner::OutputSummary> ShippingRunner::CompleteJob(const runner::JobDetails& d) {
  auto written = inner_.CompleteJob(d);
  if (!written.ok()) return written;
  if (auto st = ship_(sink_, d.work.output); !st.ok()) return st;
  return written;
}

}  // namespace lockstep::dbsp::job
