// A worker's share of one input in a partitioned load (docs/design.md §4.4). Private to the load
// library.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/bsp/graph_input.h"
#include "text/share_reader.h"

namespace lockstep::load::partitioned {

// A worker's share of one input: the lines starting in its byte range of a file (or of a
// directory's files), or its rows of a table (GraphTextSource).
class ShareText {
 public:
  absl::Status Open(const bsp::GraphSource& source, const std::string& path, bool vertices,
                    bool weights, uint32_t rank, uint32_t size, bool directories) {
    if (!source.text) return file_.Open(path, rank, size, directories);
    auto share = source.text->OpenShare(vertices, weights, rank, size);
    if (!share.ok()) return share.status();
    rows_ = *std::move(share);
    return absl::OkStatus();
  }
  absl::Status Adopt(std::unique_ptr<bsp::GraphTextShare> rows) {
    rows_ = std::move(rows);
    return absl::OkStatus();
  }
  bool done() const { return rows_ ? rows_->done() : file_.done(); }
  absl::StatusOr<std::string> Next(uint64_t max_bytes) {
    return rows_ ? rows_->Next(max_bytes) : file_.Next(max_bytes);
  }
  // Only a file's share has these.
  bool directory() const { return !rows_ && file_.directory(); }
  std::vector<std::string> paths() const { return file_.paths(); }
  const std::vector<std::pair<uint32_t, uint64_t>>& lines() const { return file_.lines(); }

 private:
  text::ShareReader file_;
  std::unique_ptr<bsp::GraphTextShare> rows_;
};

}  // namespace lockstep::load::partitioned
