#include "libpq.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"

namespace lockstep::db {
namespace {

LibPq lib;
absl::Status loaded = absl::InternalError("libpq not opened");
std::once_flag once;

template <class F>
bool Bind(void* handle, const char* name, F& f, absl::Status& error) {
  f = reinterpret_cast<F>(::dlsym(handle, name));
  if (f == nullptr && error.ok()) {
    error = absl::FailedPreconditionError(
        absl::StrCat("PostgreSQL: the client library ", kLibPqSoname, " has no ", name));
  }
  return f != nullptr;
}

absl::Status Open() {
  // Kept open for the life of the process: results and connections may outlive any caller.
  void* handle = ::dlopen(kLibPqSoname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "PostgreSQL: cannot load the client library ", kLibPqSoname, " (",
        why == nullptr ? "unknown reason" : why, "); install libpq5 (scripts/setup.sh does)"));
  }
  absl::Status error;
  Bind(handle, "PQclear", lib.PQclear, error);
  Bind(handle, "PQconnectdb", lib.PQconnectdb, error);
  Bind(handle, "PQconninfoFree", lib.PQconninfoFree, error);
  Bind(handle, "PQconninfoParse", lib.PQconninfoParse, error);
  Bind(handle, "PQerrorMessage", lib.PQerrorMessage, error);
  Bind(handle, "PQescapeIdentifier", lib.PQescapeIdentifier, error);
  Bind(handle, "PQescapeLiteral", lib.PQescapeLiteral, error);
  Bind(handle, "PQexec", lib.PQexec, error);
  Bind(handle, "PQexecParams", lib.PQexecParams, error);
  Bind(handle, "PQfinish", lib.PQfinish, error);
  Bind(handle, "PQfreemem", lib.PQfreemem, error);
  Bind(handle, "PQgetCopyData", lib.PQgetCopyData, error);
  Bind(handle, "PQgetResult", lib.PQgetResult, error);
  Bind(handle, "PQgetisnull", lib.PQgetisnull, error);
  Bind(handle, "PQgetvalue", lib.PQgetvalue, error);
  Bind(handle, "PQntuples", lib.PQntuples, error);
  Bind(handle, "PQputCopyData", lib.PQputCopyData, error);
  Bind(handle, "PQputCopyEnd", lib.PQputCopyEnd, error);
  Bind(handle, "PQresultErrorField", lib.PQresultErrorField, error);
  Bind(handle, "PQresultErrorMessage", lib.PQresultErrorMessage, error);
  Bind(handle, "PQresultStatus", lib.PQresultStatus, error);
  Bind(handle, "PQsetNoticeReceiver", lib.PQsetNoticeReceiver, error);
  Bind(handle, "PQsocket", lib.PQsocket, error);
  Bind(handle, "PQstatus", lib.PQstatus, error);
  return error;
}

}  // namespace

absl::Status LoadLibPq() {
  std::call_once(once, [] { loaded = Open(); });
  return loaded;
}

const LibPq& Pq() {
  // A call before a successful LoadLibPq is a bug in this module, not an input's fault.
  if (!LoadLibPq().ok()) std::abort();
  return lib;
}

}  // namespace lockstep::db
