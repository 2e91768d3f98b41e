#pragma once

// A throw-away PostgreSQL server for tests (Debian's `postgresql` package, installed by
// scripts/setup.sh): `initdb` and `pg_ctl` in a temporary directory, listening only on a Unix
// socket there, run as `nobody` when the suite runs as root (the server refuses root). Stopped
// and removed when this goes away. Nothing outside the directory is touched.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/temp_dir.h"

namespace lockstep::test {

class PostgresServer {
 public:
  PostgresServer() : dir_("lockstep-pg") {
    bin_ = FindBin();
    if (::geteuid() == 0) {
      as_ = "runuser -u nobody -- ";
      Shell("chown nobody " + dir_.path().string());
    }
    Shell(as_ + bin_ + "/initdb -D " + Data() + " -A trust -U lockstep -E UTF8 --locale=C.UTF-8" +
          " > " + dir_.File("initdb.log") + " 2>&1");
    Start();
  }
  ~PostgresServer() {
    if (running_) {
      std::system(
          (as_ + bin_ + "/pg_ctl -D " + Data() + " -m immediate -w stop > /dev/null 2>&1").c_str());
    }
  }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // The URI of database `db` as `user` (no password: trust, unless pg_hba.conf says otherwise).
  std::string Uri(const std::string& user = "lockstep", const std::string& db = "postgres") const {
    std::string host;
    for (char c : dir_.path().string()) host += c == '/' ? std::string("%2F") : std::string(1, c);
    return "postgresql://" + user + "@" + host + ":" + std::to_string(kPort) + "/" + db;
  }

  void Start() {
    Shell(as_ + bin_ + "/pg_ctl -D " + Data() + " -w -l " + dir_.File("server.log") + " -o \"-k " +
          dir_.path().string() + " -c listen_addresses='' -p " + std::to_string(kPort) +
          " -c fsync=off -c full_page_writes=off\" start > /dev/null");
    running_ = true;
  }
  // Stops the server at once, as a crash or an eviction would.
  void Stop() {
    Shell(as_ + bin_ + "/pg_ctl -D " + Data() + " -m immediate -w stop > /dev/null");
    running_ = false;
  }

  // Runs `sql` with psql (stopping at the first error, which throws) and returns what it printed:
  // unaligned, tuples only.
  std::string Sql(const std::string& sql, const std::string& user = "lockstep") const {
    const std::string file = dir_.Write("query.sql", sql);
    const std::string cmd = "psql -X -q -At -v ON_ERROR_STOP=1 '" + Uri(user) + "' -f " + file +
                            " 2> " + dir_.File("psql.err");
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) throw std::runtime_error("cannot run psql");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (::pclose(p) != 0) {
      throw std::runtime_error("psql failed on: " + sql.substr(0, 200) + ": " +
                               ReadAll(dir_.File("psql.err")));
    }
    return out;
  }

  // A file in the server's directory (readable by the server, for COPY ... FROM a file).
  std::string File(const std::string& name) const { return dir_.File(name); }
  // Writes `text` to a file the server's user can read, and returns its path.
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string path = dir_.Write(name, text);
    std::filesystem::permissions(
        path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                  std::filesystem::perms::others_read | std::filesystem::perms::group_read);
    return path;
  }
  // Adds `line` at the top of pg_hba.conf (the first matching line wins) and reloads.
  void AddHbaLine(const std::string& line) {
    const std::string hba = Data() + "/pg_hba.conf";
    const std::string old = ReadAll(hba);
    dir_.Write("data/pg_hba.conf", line + "\n" + old);
    Shell(as_ + bin_ + "/pg_ctl -D " + Data() + " reload > /dev/null");
  }

 private:
  static constexpr int kPort = 5432;  // only names the socket file in the directory

  std::string Data() const { return dir_.File("data"); }

  static std::string ReadAll(const std::string& path) {
    std::string out;
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
      std::fclose(f);
    }
    return out;
  }

  void Shell(const std::string& cmd) const {
    if (std::system(cmd.c_str()) != 0) {
      throw std::runtime_error("failed: " + cmd + "\n" + ReadAll(dir_.File("initdb.log")) +
                               ReadAll(dir_.File("server.log")));
    }
  }

  // The newest installed server's bin directory.
  static std::string FindBin() {
    std::string best;
    int best_version = -1;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string v = e.path().filename().string();
      const int version = std::atoi(v.c_str());
      if (version > best_version && std::filesystem::exists(e.path() / "bin" / "initdb")) {
        best_version = version;
        best = (e.path() / "bin").string();
      }
    }
    if (best.empty()) {
      throw std::runtime_error(
          "no PostgreSQL server under /usr/lib/postgresql (scripts/setup.sh installs it)");
    }
    return best;
  }

  TempDir dir_;
  std::string bin_;
  std::string as_;
  bool running_ = false;
};

}  // namespace lockstep::test
