#include "copy.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "connection.h"

namespace lockstep::db {
namespace {

// Takes the result that ends a COPY on `c` (and any after it): OK, or why it failed.
absl::Status EndCopy(PGconn* c, const std::string& what) {
  Result end(Pq().PQgetResult(c));
  const bool ok = end != nullptr && Pq().PQresultStatus(end.get()) == PGRES_COMMAND_OK;
  std::string error =
      ok ? "" : Clean(end ? Pq().PQresultErrorMessage(end.get()) : Pq().PQerrorMessage(c));
  while (Result more{Pq().PQgetResult(c)}) {
  }
  if (!ok) return absl::UnavailableError(absl::StrCat("PostgreSQL: ", what, ": ", error));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CopiedRows> ReadCopy(PGconn* c, const std::string& what, uint64_t max_bytes,
                                    std::string buffer) {
  CopiedRows read{std::move(buffer)};
  while (!read.done && read.text.size() < max_bytes) {
    char* buf = nullptr;
    const int n = Pq().PQgetCopyData(c, &buf, 0);
    if (n > 0) {
      read.text.append(buf, static_cast<size_t>(n));
      Pq().PQfreemem(buf);
      ++read.rows;
      continue;
    }
    if (n == -2) {
      return absl::UnavailableError(
          absl::StrCat("PostgreSQL: ", what, ": ", Clean(Pq().PQerrorMessage(c))));
    }
    if (auto st = EndCopy(c, what); !st.ok()) return st;
    read.done = true;
  }
  return read;
}

absl::StatusOr<std::string> CopyOut(PGconn* c, const std::string& query, const std::string& what) {
  auto started = Exec(c, absl::StrCat("COPY (", query, ") TO STDOUT"), what, PGRES_COPY_OUT);
  if (!started.ok()) return started.status();
  auto read = ReadCopy(c, what, std::numeric_limits<uint64_t>::max());
  if (!read.ok()) return read.status();
  return std::move(read->text);
}

absl::Status CopyResults(PGconn* c, const std::string& table_sql, const std::string& results) {
  std::FILE* f = std::fopen(results.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open ", results, ": ", std::strerror(errno)));
  }
  auto started = Exec(c, absl::StrCat("COPY ", table_sql, " (id, value) FROM STDIN"),
                      "writing the results", PGRES_COPY_IN);
  if (!started.ok()) {
    std::fclose(f);
    return started.status();
  }
  std::string buf(1 << 20, '\0');
  size_t n;
  bool sent = true;
  std::string escaped;
  while (sent && (n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    // A line is "id value": neither holds a space, so every space separates the two columns.
    std::replace(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n), ' ', '\t');
    std::string_view block(buf.data(), n);
    if (block.find('\\') != std::string_view::npos) {
      // COPY's text form reads a backslash as an escape (an ID from a file may hold one).
      escaped.clear();
      for (char ch : block) {
        if (ch == '\\') escaped.push_back('\\');
        escaped.push_back(ch);
      }
      block = escaped;
    }
    sent = Pq().PQputCopyData(c, block.data(), static_cast<int>(block.size())) == 1;
  }
  const bool read_failed = std::ferror(f) != 0;
  std::fclose(f);
  const char* abort = read_failed ? "the results could not be read" : nullptr;
  if (!sent || Pq().PQputCopyEnd(c, abort) != 1) {
    return absl::UnavailableError(
        absl::StrCat("PostgreSQL: writing the results: ", Clean(Pq().PQerrorMessage(c))));
  }
  const absl::Status ended = EndCopy(c, "writing the results");
  if (read_failed) return absl::DataLossError(absl::StrCat("cannot read ", results));
  return ended;
}

}  // namespace lockstep::db
