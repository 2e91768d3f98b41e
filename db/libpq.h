#pragma once

// libpq, opened on first use rather than linked: a process that never touches a database (every
// `run` and worker of a file-based job) does not load the client and what it pulls in (Kerberos,
// LDAP, SASL, GnuTLS: a quarter of the binary's libraries, and a cost at every process's start that
// bench/README.md measures). libpq-fe.h gives the types; the functions come from the library's
// stable soname. The db module's own header (its include directories are private to it, and the db
// test's).
#include <libpq-fe.h>

#include "absl/status/status.h"

namespace lockstep::db {

inline constexpr char kLibPqSoname[] = "libpq.so.5";

// The functions of libpq this module calls, each as the library defines it.
struct LibPq {
  decltype(&::PQclear) PQclear = nullptr;
  decltype(&::PQconnectdb) PQconnectdb = nullptr;
  decltype(&::PQconninfoFree) PQconninfoFree = nullptr;
  decltype(&::PQconninfoParse) PQconninfoParse = nullptr;
  decltype(&::PQerrorMessage) PQerrorMessage = nullptr;
  decltype(&::PQescapeIdentifier) PQescapeIdentifier = nullptr;
  decltype(&::PQescapeLiteral) PQescapeLiteral = nullptr;
  decltype(&::PQexec) PQexec = nullptr;
  decltype(&::PQexecParams) PQexecParams = nullptr;
  decltype(&::PQfinish) PQfinish = nullptr;
  decltype(&::PQfreemem) PQfreemem = nullptr;
  decltype(&::PQgetCopyData) PQgetCopyData = nullptr;
  decltype(&::PQgetResult) PQgetResult = nullptr;
  decltype(&::PQgetisnull) PQgetisnull = nullptr;
  decltype(&::PQgetvalue) PQgetvalue = nullptr;
  decltype(&::PQntuples) PQntuples = nullptr;
  decltype(&::PQputCopyData) PQputCopyData = nullptr;
  decltype(&::PQputCopyEnd) PQputCopyEnd = nullptr;
  decltype(&::PQresultErrorField) PQresultErrorField = nullptr;
  decltype(&::PQresultErrorMessage) PQresultErrorMessage = nullptr;
  decltype(&::PQresultStatus) PQresultStatus = nullptr;
  decltype(&::PQsetNoticeReceiver) PQsetNoticeReceiver = nullptr;
  decltype(&::PQsocket) PQsocket = nullptr;
  decltype(&::PQstatus) PQstatus = nullptr;
};

// Opens the library `soname` and fills `out` with its functions; an error names the library and
// says why it could not be opened, or which function it lacks. The library stays open.
absl::Status OpenLibPq(const char* soname, LibPq& out);

// OpenLibPq(kLibPqSoname) once per process (thread-safe); later calls return the first outcome.
absl::Status LoadLibPq();

// The functions, once LoadLibPq() has succeeded (every path to a connection or a parsed URI
// calls it first).
const LibPq& Pq();

}  // namespace lockstep::db
