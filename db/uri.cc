// Connection URIs: which strings are one, the refusal of a password in one, and the local paths a
// URI has libpq use, which a worker's --data-root confines.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "connection.h"
#include "libpq.h"
#include "lockstep/db/postgres.h"

namespace lockstep::db {
namespace {

// Keywords of libpq 15 and 16 that name no local path.
const std::set<std::string, std::less<>>& KeywordsWithoutPaths() {
  static const std::set<std::string, std::less<>> kNoPath = {"hostaddr",
                                                             "port",
                                                             "dbname",
                                                             "user",
                                                             "password",
                                                             "connect_timeout",
                                                             "client_encoding",
                                                             "options",
                                                             "application_name",
                                                             "fallback_application_name",
                                                             "keepalives",
                                                             "keepalives_idle",
                                                             "keepalives_interval",
                                                             "keepalives_count",
                                                             "tcp_user_timeout",
                                                             "sslmode",
                                                             "sslcompression",
                                                             "sslsni",
                                                             "sslpassword",
                                                             "sslcertmode",
                                                             "requirepeer",
                                                             "ssl_min_protocol_version",
                                                             "ssl_max_protocol_version",
                                                             "gssencmode",
                                                             "krbsrvname",
                                                             "gsslib",
                                                             "gssdelegation",
                                                             "target_session_attrs",
                                                             "load_balance_hosts",
                                                             "channel_binding",
                                                             "require_auth",
                                                             "replication"};
  return kNoPath;
}

// Keywords whose value is a file's path.
const std::set<std::string, std::less<>>& KeywordsWithFiles() {
  static const std::set<std::string, std::less<>> kFiles = {"sslcert", "sslkey",    "sslrootcert",
                                                            "sslcrl",  "sslcrldir", "passfile"};
  return kFiles;
}

// The options a URI gives (keyword -> value, those with a value), as libpq parses it.
absl::StatusOr<std::map<std::string, std::string>> UriOptions(std::string_view uri) {
  if (auto st = LoadLibPq(); !st.ok()) return st;
  char* error = nullptr;
  PQconninfoOption* options = Pq().PQconninfoParse(std::string(uri).c_str(), &error);
  if (options == nullptr) {
    std::string why = error == nullptr ? "out of memory" : Clean(error);
    Pq().PQfreemem(error);
    return absl::InvalidArgumentError(absl::StrCat("not a PostgreSQL URI: ", why));
  }
  std::map<std::string, std::string> given;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val != nullptr && o->val[0] != '\0') given[o->keyword] = o->val;
  }
  Pq().PQconninfoFree(options);
  return given;
}

}  // namespace

bool IsPostgresUri(std::string_view text) {
  return text.starts_with("postgresql://") || text.starts_with("postgres://");
}

absl::Status CheckUri(std::string_view uri, const std::string& flag) {
  if (auto st = LoadLibPq(); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat(flag, ": ", st.message()));
  }
  auto options = UriOptions(uri);
  if (!options.ok())
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", options.status().message()));
  if (options->contains("password")) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag,
        ": the URI holds a password, which would show in process lists and logs; give it in "
        "PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass) instead"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> UriPaths(std::string_view uri) {
  if (auto st = LoadLibPq(); !st.ok()) return st;  // fails closed
  std::vector<std::pair<std::string, std::string>> paths;
  auto options = UriOptions(uri);
  if (!options.ok()) return paths;
  for (const auto& [keyword, value] : *options) {
    if (KeywordsWithoutPaths().contains(keyword)) continue;
    if (keyword == "host") {
      // A list; an entry that starts with '/' is a socket's directory, '@' an abstract socket.
      const std::vector<std::string> hosts = absl::StrSplit(value, ',');
      for (const std::string& host : hosts) {
        if (host.starts_with('/')) {
          paths.emplace_back("host", host);
        } else if (host.starts_with('@')) {
          return absl::PermissionDeniedError("names an abstract Unix socket as its host");
        }
      }
    } else if (KeywordsWithFiles().contains(keyword)) {
      if (keyword == "sslkey" && value.find(':') != std::string::npos) {
        return absl::PermissionDeniedError(
            "names its sslkey as an OpenSSL engine's (a colon), which loads code");
      }
      paths.emplace_back(keyword, value);
    } else {
      return absl::PermissionDeniedError(
          absl::StrCat("names \"", keyword, "\", which a worker's --data-root cannot confine"));
    }
  }
  return paths;
}

}  // namespace lockstep::db
