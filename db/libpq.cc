#include "libpq.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace lockstep::db {
namespace {

// The process's libpq, opened by the first caller (a function-local static: thread-safe, and
// never destroyed, so that a late caller never reads a destroyed object).
struct Loaded {
  LibPq lib;
  absl::Status status;
};
const Loaded& TheLibPq() {
  static const Loaded* loaded = [] {
    auto* l = new Loaded;
    l->status = OpenLibPq(kLibPqSoname, l->lib);
    return l;
  }();
  return *loaded;
}

template <class F>
void Bind(void* handle, const char* soname, const char* name, F& f, absl::Status& error) {
  f = reinterpret_cast<F>(::dlsym(handle, name));
  if (f == nullptr && error.ok()) {
    error = absl::FailedPreconditionError(
        absl::StrCat("PostgreSQL: the client library ", soname, " has no ", name));
  }
}

}  // namespace

absl::Status OpenLibPq(const char* soname, LibPq& lib) {
  // Kept open for the life of the process: results and connections may outlive any caller.
  void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "PostgreSQL: cannot load the client library ", soname, " (",
        why == nullptr ? "unknown reason" : why, "); install libpq5 (scripts/setup.sh does)"));
  }
  absl::Status error;
  Bind(handle, soname, "PQclear", lib.PQclear, error);
  Bind(handle, soname, "PQconnectdb", lib.PQconnectdb, error);
  Bind(handle, soname, "PQconninfoFree", lib.PQconninfoFree, error);
  Bind(handle, soname, "PQconninfoParse", lib.PQconninfoParse, error);
  Bind(handle, soname, "PQerrorMessage", lib.PQerrorMessage, error);
  Bind(handle, soname, "PQescapeIdentifier", lib.PQescapeIdentifier, error);
  Bind(handle, soname, "PQescapeLiteral", lib.PQescapeLiteral, error);
  Bind(handle, soname, "PQexec", lib.PQexec, error);
  Bind(handle, soname, "PQexecParams", lib.PQexecParams, error);
  Bind(handle, soname, "PQfinish", lib.PQfinish, error);
  Bind(handle, soname, "PQfreemem", lib.PQfreemem, error);
  Bind(handle, soname, "PQgetCopyData", lib.PQgetCopyData, error);
  Bind(handle, soname, "PQgetResult", lib.PQgetResult, error);
  Bind(handle, soname, "PQgetisnull", lib.PQgetisnull, error);
  Bind(handle, soname, "PQgetvalue", lib.PQgetvalue, error);
  Bind(handle, soname, "PQntuples", lib.PQntuples, error);
  Bind(handle, soname, "PQputCopyData", lib.PQputCopyData, error);
  Bind(handle, soname, "PQputCopyEnd", lib.PQputCopyEnd, error);
  Bind(handle, soname, "PQresultErrorField", lib.PQresultErrorField, error);
  Bind(handle, soname, "PQresultErrorMessage", lib.PQresultErrorMessage, error);
  Bind(handle, soname, "PQresultStatus", lib.PQresultStatus, error);
  Bind(handle, soname, "PQsetNoticeReceiver", lib.PQsetNoticeReceiver, error);
  Bind(handle, soname, "PQsocket", lib.PQsocket, error);
  Bind(handle, soname, "PQstatus", lib.PQstatus, error);
  return error;
}

absl::Status LoadLibPq() { return TheLibPq().status; }

const LibPq& Pq() {
  const Loaded& loaded = TheLibPq();
  // A call before a successful LoadLibPq is a bug in this module, not an input's fault.
  if (!loaded.status.ok()) std::abort();
  return loaded.lib;
}

}  // namespace lockstep::db
