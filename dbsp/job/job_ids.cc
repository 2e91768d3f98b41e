#include "job/job_ids.h"

#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <mutex>

#include "transport/wire.h"

namespace lockstep::dbsp::job {
namespace {

// A random (v4) UUID; the generator is shared and not thread-safe.
boost::uuids::uuid RandomUuid() {
  static std::mutex mu;
  static boost::uuids::random_generator gen;
  std::lock_guard<std::mutex> lock(mu);
  return gen();
}

}  // namespace

std::string NewJobId() { return boost::uuids::to_string(RandomUuid()); }

std::string NewJobKey() {
  const boost::uuids::uuid u = RandomUuid();
  static_assert(sizeof(u.data) == transport::kJobKeyBytes);
  return std::string(reinterpret_cast<const char*>(u.data), sizeof(u.data));
}

}  // namespace lockstep::dbsp::job
