// The partitioned binary form (part_files.h): a graph written with K parts and read back by 1, 2
// and 4 workers (threads over an in-process Exchange, through LoadPartition as a job calls it)
// must give each worker exactly the PartitionInput LoadPartition gives for the text, and the whole
// graph exactly what LoadGraph gives; a damaged directory is refused, naming the file.
#include "lockstep/load/partitioned_form.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lockstep/bsp/checksum.h"
#include "lockstep/bsp/graph_input.h"
#include "lockstep/bsp/topology.h"
#include "lockstep/load/source.h"
#include "util/temp_dir.h"
#include "util/thread_exchange.h"

namespace lockstep::load {
namespace {

using bsp::Crc32c;
using bsp::Exchange;
using bsp::GraphInput;
using bsp::GraphSource;
using bsp::PartVertices;
using bsp::ReadFile;
using bsp::WeightUse;

using ::testing::HasSubstr;

struct Loaded {
  absl::Status status;
  PartitionInput part;
};

// LoadPartition of `source` on n threads joined by one in-process Exchange.
std::vector<Loaded> LoadOnWorkers(const GraphSource& source, WeightUse weights, uint32_t n,
                                  bool in_edges) {
  std::vector<Loaded> out(n);
  auto group = std::make_shared<test::ThreadExchangeGroup>(n);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      test::ThreadExchange exchange(group, r);
      auto part = LoadPartition(source, weights, exchange, in_edges,
                                {.round_bytes = 97, .packed_edges = false});
      if (part.ok()) {
        out[r].part = std::move(*part);
      } else {
        out[r].status = part.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

void ExpectSameInput(const GraphInput& got, const GraphInput& want, const std::string& where) {
  EXPECT_EQ(got.external_ids, want.external_ids) << where;
  EXPECT_EQ(got.src, want.src) << where;
  EXPECT_EQ(got.dst, want.dst) << where;
  EXPECT_EQ(got.weights, want.weights) << where;
  EXPECT_EQ(got.directed, want.directed) << where;
  EXPECT_EQ(got.symmetric, want.symmetric) << where;
  EXPECT_EQ(got.num_reverse, want.num_reverse) << where;
  EXPECT_EQ(got.properties, want.properties) << where;
}

// Every global index's name, asked of the worker whose slice holds it.
std::vector<std::string> AllNames(const std::vector<Loaded>& workers, uint64_t n) {
  std::vector<std::string> names(n);
  for (uint64_t g = 0; g < n; ++g) {
    const uint32_t holder = workers[0].part.names.HolderOf(g);
    if (holder >= workers.size()) return {};
    workers[holder].part.names.Append(g, names[g]);
  }
  return names;
}

// LoadWholeRows of `dir` against Topology::Build of the text's whole input (one part): the same
// vertices, names, rows and weights, with in-edges or not.
void ExpectRowsLikeBuild(const GraphSource& source, const std::string& dir, WeightUse weights,
                         const std::string& where) {
  auto text = LoadGraph(source, weights);
  ASSERT_TRUE(text.ok()) << text.status();
  auto split = partition::Range::Whole(1);
  ASSERT_TRUE(split.ok());
  for (bool in_edges : {false, true}) {
    const std::string at = where + " in_edges=" + std::to_string(in_edges);
    std::vector<uint32_t> out_map, in_map;
    auto want = bsp::Topology::Build(*text, *split, 0, in_edges, &out_map, &in_map);
    ASSERT_TRUE(want.ok()) << at << want.status();
    auto rows = LoadWholeRows({.path = dir}, weights, [&](bool) { return in_edges; });
    ASSERT_TRUE(rows.ok()) << at << rows.status();
    const std::vector<double> out_w = rows->out_weights, in_w = rows->in_weights;
    EXPECT_EQ(rows->properties, text->properties) << at;
    auto got = bsp::Topology::FromRows(std::move(rows->rows));
    ASSERT_TRUE(got.ok()) << at << got.status();
    ASSERT_EQ(got->num_local(), want->num_local()) << at;
    EXPECT_EQ(got->symmetric(), want->symmetric()) << at;
    EXPECT_EQ(got->has_in_edges(), want->has_in_edges()) << at;
    for (uint32_t v = 0; v < want->num_local(); ++v) {
      ASSERT_EQ(got->external_id(v), want->external_id(v)) << at;
      ASSERT_EQ(got->id(v), want->id(v)) << at;
      ASSERT_EQ(got->Find(want->id(v)), v) << at;
    }
    auto same = [&](std::span<const uint32_t> a, std::span<const uint32_t> b) {
      return std::vector<uint32_t>(a.begin(), a.end()) == std::vector<uint32_t>(b.begin(), b.end());
    };
    EXPECT_TRUE(same(got->all_out_slots(), want->all_out_slots())) << at;
    if (in_edges) {
      EXPECT_TRUE(same(got->all_in_slots(), want->all_in_slots())) << at;
    }
    for (uint32_t v = 0; v < want->num_local(); ++v) {
      ASSERT_EQ(got->out_begin(v), want->out_begin(v)) << at;
      if (in_edges) {
        ASSERT_EQ(got->in_begin(v), want->in_begin(v)) << at;
      }
    }
    auto weights_of = [&](const std::vector<uint32_t>& map) {
      std::vector<double> w;
      if (text->weights.empty()) return w;
      for (uint32_t e : map) w.push_back(text->weights[e]);
      return w;
    };
    EXPECT_EQ(out_w, weights_of(out_map)) << at;
    EXPECT_EQ(in_w, in_edges ? weights_of(in_map) : std::vector<double>{}) << at;
  }
}

// Checks every reading of the partitioned graph in `dir` against the text's: the whole graph and
// each worker's part at 1, 2 and 4 workers, with and without in-edges, weights or not.
void ExpectReadsLikeText(const GraphSource& source, const std::string& dir,
                         const std::string& what) {
  auto text = LoadGraph(source, WeightUse::kNonNegative);
  ASSERT_TRUE(text.ok()) << text.status();
  ASSERT_TRUE(IsPartitionedForm(dir));
  const GraphSource binary{.path = dir};
  for (WeightUse weights : {WeightUse::kNonNegative, WeightUse::kIgnore}) {
    const std::string w = weights == WeightUse::kIgnore ? " ignore-weights" : " weights";
    auto whole = LoadGraph(binary, weights);
    ASSERT_TRUE(whole.ok()) << whole.status();
    auto whole_text = LoadGraph(source, weights);
    ASSERT_TRUE(whole_text.ok());
    ExpectSameInput(*whole, *whole_text, "whole " + what + w);
    ExpectRowsLikeBuild(source, dir, weights, "rows " + what + w);
    for (uint32_t n : {1u, 2u, 4u}) {
      for (bool in_edges : {false, true}) {
        const std::string where =
            what + " P=" + std::to_string(n) + " in_edges=" + std::to_string(in_edges) + w;
        auto want = LoadOnWorkers(source, weights, n, in_edges);
        auto got = LoadOnWorkers(binary, weights, n, in_edges);
        for (uint32_t r = 0; r < n; ++r) {
          const std::string at = where + " worker " + std::to_string(r);
          ASSERT_TRUE(want[r].status.ok()) << at << want[r].status;
          ASSERT_TRUE(got[r].status.ok()) << at << got[r].status;
          ExpectSameInput(got[r].part.input, want[r].part.input, at);
          const PartVertices& a = got[r].part.vertices;
          const PartVertices& b = want[r].part.vertices;
          EXPECT_EQ(a.uuids, b.uuids) << at;
          EXPECT_EQ(a.global, b.global) << at;
          EXPECT_EQ(a.owned_names, b.owned_names) << at;
          EXPECT_EQ(a.num_global, b.num_global) << at;
          EXPECT_EQ(got[r].part.stats.edges_received, want[r].part.stats.edges_received) << at;
        }
        EXPECT_EQ(AllNames(got, text->num_vertices()), text->external_ids) << where;
      }
    }
  }
}

// Writes `source`'s graph with 1 and 3 parts in one process, and with 1, 2 and 3 workers
// (threads over an in-process Exchange, WritePartitionedFormDistributed), and checks every reading
// against the text's.
void ExpectSameAsText(const GraphSource& source, const std::string& dir) {
  auto text = LoadGraph(source, WeightUse::kNonNegative);
  ASSERT_TRUE(text.ok()) << text.status();
  for (uint32_t parts : {1u, 3u}) {
    PartitionedFormOptions options;
    options.shards = parts;
    options.format = IsGraphalytics(source) ? "graphalytics" : "edgelist";
    ASSERT_TRUE(WritePartitionedForm(*text, dir, options).ok());
    ExpectReadsLikeText(source, dir, "K=" + std::to_string(parts));
  }
  for (uint32_t writers : {1u, 2u, 3u}) {
    std::vector<absl::Status> status(writers);
    auto group = std::make_shared<test::ThreadExchangeGroup>(writers);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < writers; ++r) {
      threads.emplace_back([&, r] {
        test::ThreadExchange exchange(group, r);
        status[r] = WritePartitionedFormDistributed(source, exchange, dir);
      });
    }
    for (auto& t : threads) t.join();
    for (const absl::Status& st : status) ASSERT_TRUE(st.ok()) << st;
    ExpectReadsLikeText(source, dir, std::to_string(writers) + " writers");
  }
  auto facts = ReadPartitionedFormFacts(dir);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->format, IsGraphalytics(source) ? "graphalytics" : "edgelist");
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class PartFilesTest : public ::testing::Test {
 protected:
  // A random directed graph with weights, self-loops, repeated edges and mixed IDs.
  std::string RandomGraph(uint64_t seed, bool weights) {
    std::mt19937_64 rng(seed);
    auto name = [](uint64_t v) -> std::string {
      switch (v % 4) {
        case 0:
          return std::to_string(v * 3);
        case 1:
          return "n" + std::to_string(v);
        case 2:
          return std::to_string(18446744073709551615ull - v);
        default:
          return "3f1c2a58-9d4e-4b7a-8c35-" + std::to_string(100000000000ull + v);
      }
    };
    std::string text;
    for (int e = 0; e < 400; ++e) {
      const uint64_t s = rng() % 90;
      const uint64_t d = rng() % 6 == 0 ? s : rng() % 90;
      text += name(s) + " " + name(d);
      if (weights) text += " " + std::to_string(rng() % 9) + (rng() % 2 ? ".5" : "");
      text += "\n";
      if (rng() % 20 == 0) text += name(s) + " " + name(d) + (weights ? " 1" : "") + "\n";
    }
    return dir_.Write("g.el", text);
  }
  std::string Graphalytics(const std::string& v, const std::string& e, bool directed) {
    dir_.Write("g.v", v);
    dir_.Write("g.e", e);
    return dir_.Write("g.properties", std::string("graph.g.vertex-file = g.v\n") +
                                          "graph.g.edge-file = g.e\ngraph.g.directed = " +
                                          (directed ? "true" : "false") +
                                          "\ngraph.g.pr.damping-factor = 0.85\n");
  }
  std::string Out() const { return dir_.File("parts"); }

  test::TempDir dir_{"lockstep-parts"};
};

TEST_F(PartFilesTest, DirectedWeightedEqualsText) {
  ExpectSameAsText({.path = RandomGraph(1, true)}, Out());
}

TEST_F(PartFilesTest, UndirectedEqualsText) {
  ExpectSameAsText({.path = RandomGraph(2, false), .undirected = true}, Out());
  ExpectSameAsText({.path = RandomGraph(3, true), .undirected = true}, Out());
}

TEST_F(PartFilesTest, GraphalyticsWithIsolatedVerticesAndTextIds) {
  std::string v;
  for (int i = 0; i < 80; ++i) v += (i % 3 ? "x" : "") + std::to_string(i) + "\n";
  std::mt19937_64 rng(9);
  std::string e;
  for (int i = 0; i < 200; ++i) {
    auto pick = [&] {
      const int x = static_cast<int>(rng() % 60);  // 60..79 are isolated
      return (x % 3 ? "x" : "") + std::to_string(x);
    };
    e += pick() + " " + pick() + " " + std::to_string(rng() % 5) + "\n";
  }
  ExpectSameAsText({.path = Graphalytics(v, e, true)}, Out());
  ExpectSameAsText({.path = Graphalytics(v, e, false)}, Out());
  auto facts = ReadPartitionedFormFacts(Out());
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->format, "graphalytics");
  EXPECT_EQ(facts->properties.at("pr.damping-factor"), "0.85");
}

TEST_F(PartFilesTest, SevenFilesReadByThreeAndFiveWorkers) {
  const GraphSource source{.path = RandomGraph(7, true)};
  auto text = LoadGraph(source, WeightUse::kNonNegative);
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(WritePartitionedForm(*text, Out(), {.shards = 7}).ok());
  for (uint32_t n : {3u, 5u}) {
    for (bool in_edges : {false, true}) {
      auto want = LoadOnWorkers(source, WeightUse::kNonNegative, n, in_edges);
      auto got = LoadOnWorkers({.path = Out()}, WeightUse::kNonNegative, n, in_edges);
      for (uint32_t r = 0; r < n; ++r) {
        const std::string at = "P=" + std::to_string(n) + " worker " + std::to_string(r);
        ASSERT_TRUE(got[r].status.ok()) << at << got[r].status;
        ExpectSameInput(got[r].part.input, want[r].part.input, at);
        EXPECT_EQ(got[r].part.vertices.uuids, want[r].part.vertices.uuids) << at;
        EXPECT_EQ(got[r].part.vertices.global, want[r].part.vertices.global) << at;
        EXPECT_EQ(got[r].part.vertices.owned_names, want[r].part.vertices.owned_names) << at;
      }
    }
  }
}

TEST_F(PartFilesTest, TinyGraphsAndMoreWorkersThanVertices) {
  for (const std::string text : {"", "1 1\n", "a b\nb a\n"}) {
    ExpectSameAsText({.path = dir_.Write("tiny.el", text)}, Out());
  }
}

class PartFilesDamageTest : public PartFilesTest {
 protected:
  void SetUp() override {
    auto g = LoadGraph({.path = RandomGraph(4, true)}, WeightUse::kNonNegative);
    ASSERT_TRUE(g.ok());
    ASSERT_TRUE(WritePartitionedForm(*g, Out(), {.shards = 3}).ok());
  }
  // The error every reading gives: the whole graph, and each of 2 workers.
  void ExpectRefused(const std::string& message) {
    auto whole = LoadGraph({.path = Out()}, WeightUse::kNonNegative);
    ASSERT_FALSE(whole.ok());
    EXPECT_THAT(std::string(whole.status().message()), HasSubstr(message));
    // Local mode reads a partitioned graph (with a manifest) row by row.
    if (IsPartitionedForm(Out())) {
      auto rows =
          LoadWholeRows({.path = Out()}, WeightUse::kNonNegative, [](bool) { return true; });
      ASSERT_FALSE(rows.ok());
      EXPECT_THAT(std::string(rows.status().message()), HasSubstr(message));
    }
    auto workers = LoadOnWorkers({.path = Out()}, WeightUse::kNonNegative, 2, false);
    for (const Loaded& w : workers) {
      ASSERT_FALSE(w.status.ok());
      EXPECT_THAT(std::string(w.status.message()), HasSubstr(message));
    }
    // The same error everywhere, even from a file only one worker reads.
    EXPECT_EQ(workers[0].status, workers[1].status);
  }
  void FlipByte(const std::string& name, uint64_t at) {
    std::fstream f(Out() + "/" + name, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(c ^ 0x10));
  }
};

TEST_F(PartFilesDamageTest, FlippedByteIsAChecksumErrorNamingTheFile) {
  FlipByte("part-00002-of-00003.lsp", 200);
  ExpectRefused("part-00002-of-00003.lsp: checksum mismatch");
}

TEST_F(PartFilesDamageTest, FlippedNameByteIsAChecksumError) {
  FlipByte("names-00000-of-00001.lsp", 100);
  // Only the worker that reads that block sees it; all report it. The whole graph's reader takes
  // the names from the data files, and checks the names file as the workers do.
  ExpectRefused("names-00000-of-00001.lsp: checksum mismatch");
}

TEST_F(PartFilesDamageTest, TruncatedOrLongerNamesFile) {
  const std::string path = Out() + "/names-00000-of-00001.lsp";
  auto bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok());
  std::filesystem::resize_file(path, bytes->size() - 1);
  ExpectRefused(absl::StrCat("names-00000-of-00001.lsp: ", bytes->size() - 1,
                             " bytes, lockstep-parts.manifest says ", bytes->size()));
  dir_.Write("parts/names-00000-of-00001.lsp", *bytes + "x");
  ExpectRefused(absl::StrCat("names-00000-of-00001.lsp: ", bytes->size() + 1,
                             " bytes, lockstep-parts.manifest says ", bytes->size()));
  dir_.Write("parts/names-00000-of-00001.lsp", *bytes);
  EXPECT_TRUE(LoadGraph({.path = Out()}, WeightUse::kNonNegative).ok());
}

TEST_F(PartFilesDamageTest, EveryFlippedByteIsRefused) {
  std::mt19937_64 rng(11);
  for (const char* name : {"part-00000-of-00003.lsp", "part-00001-of-00003.lsp",
                           "part-00002-of-00003.lsp", "names-00000-of-00001.lsp"}) {
    const uint64_t size = std::filesystem::file_size(Out() + "/" + name);
    for (int i = 0; i < 8; ++i) {
      const uint64_t at = rng() % size;
      FlipByte(name, at);
      // The whole graph reads every data file and checks the names file.
      auto whole = LoadGraph({.path = Out()}, WeightUse::kNonNegative);
      EXPECT_THAT(std::string(whole.status().message()),
                  HasSubstr(std::string(name) + ": checksum mismatch"))
          << name << " byte " << at;
      auto workers = LoadOnWorkers({.path = Out()}, WeightUse::kNonNegative, 3, true);
      for (const Loaded& w : workers) {
        EXPECT_THAT(std::string(w.status.message()),
                    HasSubstr(std::string(name) + ": checksum mismatch"))
            << name << " byte " << at;
      }
      FlipByte(name, at);  // back
    }
  }
  EXPECT_TRUE(LoadGraph({.path = Out()}, WeightUse::kNonNegative).ok());
}

TEST_F(PartFilesDamageTest, TruncatedFile) {
  std::filesystem::resize_file(Out() + "/part-00001-of-00003.lsp", 100);
  ExpectRefused("part-00001-of-00003.lsp: 100 bytes, lockstep-parts.manifest says");
}

TEST_F(PartFilesDamageTest, MissingFile) {
  std::filesystem::remove(Out() + "/part-00000-of-00003.lsp");
  ExpectRefused("part-00000-of-00003.lsp: cannot open");
}

TEST_F(PartFilesDamageTest, CorruptManifest) {
  FlipByte("lockstep-parts.manifest", 40);
  ExpectRefused("lockstep-parts.manifest: ");
}

TEST_F(PartFilesDamageTest, NewerVersionIsRefused) {
  const std::string path = Out() + "/lockstep-parts.manifest";
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  text->replace(0, text->find('\n'), "lockstep-parts 2");
  dir_.Write("parts/lockstep-parts.manifest", *text);
  ExpectRefused("format version 2; this build reads version 1");
}

TEST_F(PartFilesDamageTest, FileOfAnotherGraphIsForeign) {
  // Another graph's file, at the same name and of the same size, copied in with its checksums
  // patched into this manifest: the graph identity still refuses it.
  auto g = LoadGraph({.path = RandomGraph(4, true)}, WeightUse::kNonNegative);
  ASSERT_TRUE(g.ok());
  const std::string other = dir_.File("other");
  ASSERT_TRUE(WritePartitionedForm(*g, other, {.shards = 3}).ok());
  auto mine = ReadFile(Out() + "/lockstep-parts.manifest");
  auto theirs = ReadFile(other + "/lockstep-parts.manifest");
  ASSERT_TRUE(mine.ok() && theirs.ok());
  // Take their manifest but keep our graph line and checksum it again.
  const size_t a = mine->find("graph "), b = mine->find('\n', a);
  std::string text = *theirs;
  const size_t c = text.find("graph "), d = text.find('\n', c);
  text.replace(c, d - c, mine->substr(a, b - a));
  text.resize(text.rfind("end "));
  text += "end ";
  char hex[16];
  std::snprintf(hex, sizeof hex, "%x", Crc32c(std::string_view(text.data(), text.size() - 4)));
  text += std::string(hex) + "\n";
  for (const char* name : {"part-00000-of-00003.lsp", "part-00001-of-00003.lsp",
                           "part-00002-of-00003.lsp", "names-00000-of-00001.lsp"}) {
    std::filesystem::copy_file(other + "/" + name, Out() + "/" + name,
                               std::filesystem::copy_options::overwrite_existing);
  }
  dir_.Write("parts/lockstep-parts.manifest", text);
  ExpectRefused("belongs to another partitioned graph");
}

TEST_F(PartFilesDamageTest, WithoutManifestItIsNotAPartitionedGraph) {
  std::filesystem::remove(Out() + "/lockstep-parts.manifest");
  EXPECT_FALSE(IsPartitionedForm(Out()));
  auto facts = ReadPartitionedFormFacts(Out());
  EXPECT_EQ(facts.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(facts.status().message()), HasSubstr("not a partitioned graph"));
  // Nor is it edge-list text: its readers say what it is, not where its bytes fail to parse.
  ExpectRefused(Out() +
                ": holds the files of a graph in partitioned binary form but no "
                "lockstep-parts.manifest: the partitioned graph is incomplete");
  // Also with only what a writer makes first (the data files) or last (the manifest's temporary).
  for (const char* name : {"names-00000-of-00001.lsp", "part-00000-of-00003.lsp",
                           "part-00001-of-00003.lsp", "part-00002-of-00003.lsp"}) {
    std::filesystem::remove(Out() + "/" + name);
    dir_.Write("parts/lockstep-parts.manifest.tmp", "half a manifest");
    ExpectRefused("the partitioned graph is incomplete");
    std::filesystem::remove(Out() + "/lockstep-parts.manifest.tmp");
  }
}

TEST_F(PartFilesDamageTest, RewriteReplacesAndRefusesForeignDirectories) {
  auto g = LoadGraph({.path = RandomGraph(5, false), .undirected = true}, WeightUse::kIgnore);
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(WritePartitionedForm(*g, Out(), {.shards = 2}).ok());
  EXPECT_FALSE(std::filesystem::exists(Out() + "/part-00002-of-00003.lsp"));
  auto again = LoadGraph({.path = Out()}, WeightUse::kIgnore);
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectSameInput(*again, *g, "rewritten");
  // What an interrupted writer leaves (files, no manifest) is not a partitioned graph, and a new
  // `partition` may write over it.
  std::filesystem::remove(Out() + "/lockstep-parts.manifest");
  dir_.Write("parts/lockstep-parts.manifest.tmp", "half a manifest");
  EXPECT_FALSE(IsPartitionedForm(Out()));
  ASSERT_TRUE(WritePartitionedForm(*g, Out(), {.shards = 1}).ok());
  EXPECT_EQ(ListDir(Out()),
            (std::vector<std::string>{"lockstep-parts.manifest", "names-00000-of-00001.lsp",
                                      "part-00000-of-00001.lsp"}));
  // A directory of other files is not overwritten.
  dir_.Write("mine.txt", "x");
  auto st = WritePartitionedForm(*g, dir_.path().string(), {});
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  // A directed partitioned graph is not read as undirected.
  ASSERT_TRUE(WritePartitionedForm(*LoadGraph({.path = RandomGraph(6, false)}, WeightUse::kIgnore),
                                   Out(), {})
                  .ok());
  auto undirected = LoadGraph({.path = Out(), .undirected = true}, WeightUse::kIgnore);
  EXPECT_THAT(std::string(undirected.status().message()), HasSubstr("directed"));
}

}  // namespace
}  // namespace lockstep::load
