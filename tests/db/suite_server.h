#pragma once

// One throw-away PostgreSQL server for all of db_test's suites (initdb and a start take seconds):
// made on first use, stopped once the binary's tests have run. Each test uses tables of its own
// names or drops what it made.
#include "util/postgres_server.h"

namespace lockstep::test {

PostgresServer& SuiteServer();

}  // namespace lockstep::test
