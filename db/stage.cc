#include "lockstep/db/stage.h"

#include <unistd.h>

#include <condition_variable>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "connection.h"
#include "lockstep/bsp/text.h"
#include "sink.h"
#include "spdlog/spdlog.h"

namespace lockstep::db {
namespace {

constexpr char kStagePrefix[] = "lockstep_stage_";

// Made by whoever needs it first; the advisory lock keeps two masters from racing to create it
// (CREATE TABLE IF NOT EXISTS is not safe against a concurrent one). A lease's row names the
// run of the server it was last renewed on (its start time).
absl::Status MakeLeaseTable(PGconn* c) {
  return Exec(c,
              "SELECT pg_advisory_xact_lock(7813766102151734384); CREATE TABLE IF NOT EXISTS "
              "lockstep_leases (stage text PRIMARY KEY, holder text NOT NULL, renewed_at "
              "timestamptz NOT NULL, server_start timestamptz NOT NULL)",
              "creating table lockstep_leases")
      .status();
}

// The condition a dead lease meets ($1: seconds without renewal), by the server's clock. A lease
// last renewed before the server restarted counts from the server's start: no master could renew
// it while the server was down.
constexpr char kDead[] =
    "left(stage, 15) = 'lockstep_stage_' AND clock_timestamp() - CASE WHEN server_start = "
    "pg_postmaster_start_time() THEN renewed_at ELSE greatest(renewed_at, "
    "pg_postmaster_start_time()) END > make_interval(secs => $1)";

// This process, for messages, and a nonce: the holder that renews a lease and publishes its table.
std::string NewHolder() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::random_device random;
  return absl::StrCat(host, " pid ", ::getpid(), " ", absl::Hex(random(), absl::kZeroPad8),
                      absl::Hex(random(), absl::kZeroPad8));
}

void Rollback(PGconn* c) { (void)Exec(c, "ROLLBACK", "rolling back"); }

// Drops the staging table `stage` and its lease if the lease is still dead now that its row is
// locked (a renewal in between, or another job dropping it, leaves it). A DROP that waits for a
// lock (a worker of the dead job still copying) gives up after 2 s: the next job tries again.
absl::StatusOr<bool> DropIfDead(PGconn* c, const std::string& stage, const std::string& seconds) {
  if (auto r = Exec(c, "BEGIN; SET LOCAL lock_timeout = '2s'", "dropping a dead staging table");
      !r.ok()) {
    return r.status();
  }
  auto dead =
      Exec(c,
           absl::StrCat("SELECT holder, renewed_at FROM lockstep_leases WHERE stage = $2 AND ",
                        kDead, " FOR UPDATE SKIP LOCKED"),
           "reading a staging table's lease", PGRES_TUPLES_OK, {seconds, stage});
  if (!dead.ok() || Pq().PQntuples(dead->get()) == 0) {
    Rollback(c);
    return dead.ok() ? absl::StatusOr<bool>(false) : dead.status();
  }
  const std::string what = absl::StrCat("dropping staging table ", stage);
  absl::Status st =
      Exec(c, absl::StrCat("DROP TABLE IF EXISTS ", Identifier(c, stage)), what).status();
  if (st.ok()) {
    st = Exec(c, "DELETE FROM lockstep_leases WHERE stage = $1", what, PGRES_COMMAND_OK, {stage})
             .status();
  }
  if (st.ok()) st = Exec(c, "COMMIT", what).status();
  if (!st.ok()) {
    Rollback(c);
    return st;
  }
  spdlog::info(
      "dropped staging table {}, left by a job that is gone (its lease, held by {}, was "
      "last renewed at {})",
      bsp::SanitizeForLog(stage, 100), bsp::SanitizeForLog(Pq().PQgetvalue(dead->get(), 0, 0), 200),
      Pq().PQgetvalue(dead->get(), 0, 1));
  return true;
}

// Drops the staging table `stage` and its lease, whoever holds it.
absl::Status DropOne(const std::string& uri, const std::string& stage) {
  auto conn = Connect(uri);
  if (!conn.ok()) return conn.status();
  PGconn* c = conn->get();
  if (auto st = MakeLeaseTable(c); !st.ok()) return st;
  // On failure the connection closes with the transaction open, which rolls it back.
  for (const std::string& sql :
       {std::string("BEGIN"), absl::StrCat("DROP TABLE IF EXISTS ", Identifier(c, stage))}) {
    if (auto r = Exec(c, sql, "dropping a staging table"); !r.ok()) return r.status();
  }
  if (auto r = Exec(c, "DELETE FROM lockstep_leases WHERE stage = $1", "dropping a staging table",
                    PGRES_COMMAND_OK, {stage});
      !r.ok()) {
    return r.status();
  }
  return Exec(c, "COMMIT", "dropping a staging table").status();
}

}  // namespace

// The lease on one staging table: a thread renews its row every kStageRenewEvery on a connection
// of its own, reconnecting after a failure, until stopped or until it finds the row gone (lost).
class StageLease {
 public:
  StageLease(std::string uri, std::string stage, std::string holder, Conn conn)
      : uri_(std::move(uri)),
        stage_(std::move(stage)),
        holder_(std::move(holder)),
        conn_(std::move(conn)) {
    renewer_ = std::thread([this] { RenewUntilStopped(); });
  }
  ~StageLease() { Stop(); }
  StageLease(const StageLease&) = delete;
  StageLease& operator=(const StageLease&) = delete;

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    stop_.notify_all();
    if (renewer_.joinable()) renewer_.join();
  }
  const std::string& stage() const { return stage_; }
  const std::string& holder() const { return holder_; }

 private:
  void RenewUntilStopped() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_.wait_for(lock, kStageRenewEvery, [this] { return stopping_; })) {
      lock.unlock();
      const bool kept = RenewOnce();
      lock.lock();
      if (!kept) return;
    }
  }
  // False once the row is gone: another job judged the lease dead (this master could not reach
  // the server for longer than kStageDeadAfter) and dropped the table.
  bool RenewOnce() {
    if (conn_ == nullptr) {
      auto conn = Connect(uri_);
      if (!conn.ok()) return true;  // tried again at the next renewal
      conn_ = *std::move(conn);
    }
    auto r = Exec(conn_.get(),
                  "UPDATE lockstep_leases SET renewed_at = clock_timestamp(), server_start = "
                  "pg_postmaster_start_time() WHERE stage = $1 AND "
                  "holder = $2 RETURNING 1",
                  "renewing a staging table's lease", PGRES_TUPLES_OK, {stage_, holder_});
    if (!r.ok()) {
      spdlog::debug("{} (staging table {})", std::string(r.status().message()), stage_);
      conn_.reset();  // a server that restarted: a new connection next time
      return true;
    }
    if (Pq().PQntuples(r->get()) > 0) return true;
    spdlog::warn("the lease on staging table {} was lost: another job judged it dead", stage_);
    return false;
  }

  const std::string uri_, stage_, holder_;
  Conn conn_;  // the renewer's
  std::mutex mu_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread renewer_;
};

Stages::Stages() = default;
Stages::~Stages() = default;

absl::Status Stages::Create(const SinkOptions& options, const std::string& stage) {
  if (auto dropped = DropDeadStages(options.uri); !dropped.ok()) {
    spdlog::warn("staging tables of jobs that are gone are left: {}",
                 std::string(dropped.status().message()));
  }
  auto conn = Connect(options.uri);
  if (!conn.ok()) return conn.status();
  PGconn* c = conn->get();
  if (auto st = MakeLeaseTable(c); !st.ok()) return st;
  // The lease and the table in one transaction: no other job ever sees one without the other.
  std::string holder = NewHolder();
  if (auto r = Exec(c, "BEGIN", absl::StrCat("creating staging table ", stage)); !r.ok()) {
    return r.status();
  }
  if (auto r =
          Exec(c,
               "INSERT INTO lockstep_leases (stage, holder, renewed_at, server_start) VALUES "
               "($1, $2, clock_timestamp(), pg_postmaster_start_time())",
               absl::StrCat("leasing staging table ", stage), PGRES_COMMAND_OK, {stage, holder});
      !r.ok()) {
    return r.status();
  }
  if (auto st = MakeStage(c, options, stage); !st.ok()) return st;
  if (auto r = Exec(c, "COMMIT", absl::StrCat("creating staging table ", stage)); !r.ok()) {
    return r.status();
  }
  auto lease =
      std::make_unique<StageLease>(options.uri, stage, std::move(holder), *std::move(conn));
  std::lock_guard<std::mutex> lock(mu_);
  leases_[stage] = std::move(lease);
  return absl::OkStatus();
}

std::unique_ptr<StageLease> Stages::Take(const std::string& stage) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = leases_.find(stage);
  if (it == leases_.end()) return nullptr;
  std::unique_ptr<StageLease> lease = std::move(it->second);
  leases_.erase(it);
  return lease;
}

absl::StatusOr<Publication> Stages::Publish(const SinkOptions& options, const std::string& stage,
                                            uint64_t vertices, const JobRecord& record) {
  const std::unique_ptr<StageLease> lease = Take(stage);
  if (lease == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("staging table ", stage, " is not one this master made"));
  }
  // No renewal from here: the publishing transaction holds the lease's row, which no other job
  // can take meanwhile, and removes it as it publishes.
  lease->Stop();
  auto conn = Connect(options.uri);
  if (!conn.ok()) return conn.status();
  PGconn* c = conn->get();
  // On failure the connection closes with the transaction open, which rolls it back.
  if (auto r = Exec(c, "BEGIN", "starting to publish"); !r.ok()) return r.status();
  auto ended = Exec(c, "DELETE FROM lockstep_leases WHERE stage = $1 AND holder = $2 RETURNING 1",
                    "ending the staging table's lease", PGRES_TUPLES_OK, {stage, lease->holder()});
  if (!ended.ok()) return ended.status();
  if (Pq().PQntuples(ended->get()) == 0) {
    return absl::AbortedError(absl::StrCat(
        "PostgreSQL: staging table ", stage, " lost its lease (not renewed for ",
        kStageDeadAfter.count(), " s, another job judged its job gone and dropped it)"));
  }
  return db::Publish(c, options, stage, vertices, record);
}

void Stages::Drop(const std::string& uri, const std::string& stage) {
  Take(stage).reset();  // renewing no more
  if (auto st = DropOne(uri, stage); !st.ok()) {
    spdlog::warn(
        "staging table {} is left behind (a later job drops it once its lease is dead, "
        "{} s on): {}",
        bsp::SanitizeForLog(stage, 100), kStageDeadAfter.count(), std::string(st.message()));
  }
}

absl::Status DropStages(const std::string& uri, const std::string& prefix) {
  auto conn = Connect(uri);
  if (!conn.ok()) return conn.status();
  PGconn* c = conn->get();
  if (auto st = MakeLeaseTable(c); !st.ok()) return st;
  auto found = Exec(c,
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND "
                    "left(tablename, length($1)) = $1",
                    "looking for staging tables", PGRES_TUPLES_OK, {prefix});
  if (!found.ok()) return found.status();
  for (int i = 0; i < Pq().PQntuples(found->get()); ++i) {
    const std::string name = Pq().PQgetvalue(found->get(), i, 0);
    if (auto r = Exec(c, absl::StrCat("DROP TABLE IF EXISTS ", Identifier(c, name)),
                      "dropping a staging table");
        !r.ok()) {
      return r.status();
    }
  }
  return Exec(c, "DELETE FROM lockstep_leases WHERE left(stage, length($1)) = $1",
              "dropping staging tables' leases", PGRES_COMMAND_OK, {prefix})
      .status();
}

absl::StatusOr<std::vector<std::string>> DropDeadStages(const std::string& uri,
                                                        std::chrono::seconds dead_after) {
  auto conn = Connect(uri);
  if (!conn.ok()) return conn.status();
  PGconn* c = conn->get();
  if (auto st = MakeLeaseTable(c); !st.ok()) return st;
  // Only the tables without a row: one whose lease a publication is removing (its row locked)
  // does not hold the sweep up.
  if (auto r =
          Exec(c,
               "INSERT INTO lockstep_leases (stage, holder, renewed_at, server_start) SELECT "
               "tablename, 'nobody (found without a lease)', clock_timestamp(), "
               "pg_postmaster_start_time() FROM pg_tables WHERE schemaname = current_schema() "
               "AND left(tablename, 15) = $1 AND NOT EXISTS (SELECT 1 FROM lockstep_leases WHERE "
               "stage = tablename) ON CONFLICT (stage) DO NOTHING",
               "leasing staging tables found without a lease", PGRES_COMMAND_OK, {kStagePrefix});
      !r.ok()) {
    return r.status();
  }
  const std::string seconds = std::to_string(dead_after.count());
  auto found = Exec(c, absl::StrCat("SELECT stage FROM lockstep_leases WHERE ", kDead),
                    "looking for dead staging tables", PGRES_TUPLES_OK, {seconds});
  if (!found.ok()) return found.status();
  std::vector<std::string> dropped;
  for (int i = 0; i < Pq().PQntuples(found->get()); ++i) {
    const std::string stage = Pq().PQgetvalue(found->get(), i, 0);
    auto done = DropIfDead(c, stage, seconds);
    if (!done.ok()) {
      spdlog::warn("{}", std::string(done.status().message()));
    } else if (*done) {
      dropped.push_back(stage);
    }
  }
  return dropped;
}

}  // namespace lockstep::db
