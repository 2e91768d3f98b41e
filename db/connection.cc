#include "connection.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "lockstep/db/postgres.h"
#include "spdlog/spdlog.h"

namespace lockstep::db {

std::string Clean(const char* message) {
  std::string m;
  for (const char* p = message == nullptr ? "" : message; *p != '\0'; ++p) {
    const bool blank = *p == '\n' || *p == '\t' || *p == ' ';
    if (!blank) {
      m.push_back(*p);
    } else if (!m.empty() && m.back() != ' ') {
      m.push_back(' ');
    }
  }
  while (!m.empty() && m.back() == ' ') m.pop_back();
  return bsp::SanitizeForLog(m, 400);
}

std::string Shown(const std::string& uri) { return bsp::SanitizeForLog(uri, 200); }

absl::StatusOr<Conn> Connect(const std::string& uri) {
  if (auto st = CheckUri(uri, "the database URI"); !st.ok()) return st;  // loads libpq
  Conn c(Pq().PQconnectdb(uri.c_str()));
  if (c == nullptr) return absl::ResourceExhaustedError("libpq could not allocate a connection");
  if (Pq().PQstatus(c.get()) != CONNECTION_OK) {
    return absl::UnavailableError(absl::StrCat(
        "PostgreSQL at ", Shown(uri), ": cannot connect: ", Clean(Pq().PQerrorMessage(c.get()))));
  }
  // The server's notices and warnings go to the log, one line each, not to stderr as they are.
  Pq().PQsetNoticeReceiver(
      c.get(),
      [](void*, const PGresult* r) {
        const char* severity = Pq().PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
        const std::string message = Clean(Pq().PQresultErrorMessage(r));
        if (severity != nullptr && std::strcmp(severity, "WARNING") == 0) {
          spdlog::warn("PostgreSQL: {}", message);
        } else {
          spdlog::debug("PostgreSQL: {}", message);
        }
      },
      nullptr);
  return c;
}

absl::StatusOr<Result> Exec(PGconn* c, const std::string& sql, const std::string& what,
                            ExecStatusType want, const std::vector<std::string>& params) {
  std::vector<const char*> values;
  for (const std::string& p : params) values.push_back(p.c_str());
  Result r(params.empty() ? Pq().PQexec(c, sql.c_str())
                          : Pq().PQexecParams(c, sql.c_str(), static_cast<int>(values.size()),
                                              nullptr, values.data(), nullptr, nullptr, 0));
  if (r == nullptr || Pq().PQresultStatus(r.get()) != want) {
    return absl::UnavailableError(
        absl::StrCat("PostgreSQL: ", what, ": ",
                     Clean(r ? Pq().PQresultErrorMessage(r.get()) : Pq().PQerrorMessage(c))));
  }
  return r;
}

std::string Identifier(PGconn* c, const std::string& name) {
  char* quoted = Pq().PQescapeIdentifier(c, name.data(), name.size());
  std::string out = quoted == nullptr ? std::string("\"\"") : std::string(quoted);
  Pq().PQfreemem(quoted);
  return out;
}

absl::StatusOr<Conn> OpenRead(const std::string& uri, const std::string& snapshot) {
  auto conn = Connect(uri);
  if (!conn.ok()) return conn.status();
  PGconn* c = conn->get();
  if (auto r = Exec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "starting a read");
      !r.ok()) {
    return r.status();
  }
  if (!snapshot.empty()) {
    char* literal = Pq().PQescapeLiteral(c, snapshot.data(), snapshot.size());
    if (literal == nullptr)
      return absl::InvalidArgumentError("a snapshot ID that cannot be quoted");
    const std::string sql = absl::StrCat("SET TRANSACTION SNAPSHOT ", literal);
    Pq().PQfreemem(literal);
    if (auto r = Exec(c, sql, "taking the job's snapshot (the master's session must live)");
        !r.ok()) {
      return r.status();
    }
  }
  return conn;
}

}  // namespace lockstep::db
