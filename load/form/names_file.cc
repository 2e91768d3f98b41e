#include "form/names_file.h"

#include <atomic>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "form/checked_file.h"
#include "lockstep/bsp/graph_input.h"
#include "tbb/parallel_for.h"

namespace lockstep::load::form {

absl::Status ReadNames(const Manifest& m, uint32_t k, uint64_t from, uint64_t to,
                       std::vector<uint64_t>& ints, std::vector<std::string>& texts) {
  CheckedFile names(m, m.names[k]);
  if (auto st = names.Open(); !st.ok()) return st;
  auto h = names.Header(kKindNames, k);
  if (!h.ok()) return h.status();
  Buffer obuf, nbuf;
  const char* ob = nullptr;
  const char* nb = nullptr;
  if (auto st = names.Read(sizeof(FileHeader) + 8 * from, 8 * (to - from + 1), obuf, ob);
      !st.ok()) {
    return st;
  }
  std::vector<uint64_t> offsets(to - from + 1);
  std::memcpy(offsets.data(), ob, 8 * offsets.size());
  for (size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1] || offsets[i] > h->name_bytes) {
      return absl::DataLossError(absl::StrCat(names.path(), ": bad name table"));
    }
  }
  if (auto st = names.Read(sizeof(FileHeader) + 8 * (h->num_vertices + 1) + offsets.front(),
                           offsets.back() - offsets.front(), nbuf, nb);
      !st.ok()) {
    return st;
  }
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    const std::string_view name(nb + (offsets[i] - offsets.front()), offsets[i + 1] - offsets[i]);
    uint64_t value;
    if (texts.empty() && bsp::ParseIntegerId(name, value)) {
      ints.push_back(value);
    } else {
      texts.emplace_back(name);
    }
  }
  return absl::OkStatus();
}

absl::Status CheckNamesFile(const Manifest& m, uint32_t k,
                            absl::FunctionRef<std::string_view(uint64_t)> name_of) {
  CheckedFile file(m, m.names[k]);
  if (auto st = file.Open(); !st.ok()) return st;
  auto h = file.Header(kKindNames, k);
  if (!h.ok()) return h.status();
  Buffer buf;
  const char* at = nullptr;
  if (auto st = file.Read(0, m.names[k].size, buf, at, true); !st.ok()) return st;
  const uint64_t n = h->num_vertices, first = m.names[k].first_global;
  const auto* o = reinterpret_cast<const uint64_t*>(at + sizeof(FileHeader));
  const char* bytes = at + sizeof(FileHeader) + 8 * (n + 1);
  if (o[0] != 0 || o[n] != h->name_bytes) {
    return absl::DataLossError(absl::StrCat(file.path(), ": bad name table"));
  }
  std::atomic<uint64_t> bad{UINT64_MAX};
  tbb::parallel_for(uint64_t{0}, n, [&](uint64_t i) {
    if (o[i + 1] < o[i] || o[i + 1] > h->name_bytes ||
        std::string_view(bytes + o[i], o[i + 1] - o[i]) != name_of(first + i)) {
      uint64_t seen = bad.load();
      while (i < seen && !bad.compare_exchange_weak(seen, i)) {
      }
    }
  });
  if (bad.load() != UINT64_MAX) {
    return absl::DataLossError(absl::StrCat(file.path(), ": the name of vertex ",
                                            first + bad.load(),
                                            " is not the one the data files give"));
  }
  return absl::OkStatus();
}

}  // namespace lockstep::load::form
