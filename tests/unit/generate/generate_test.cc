#include "lockstep/generate/generate.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "util/temp_dir.h"

namespace lockstep::generate {
namespace {

namespace fs = std::filesystem;

GenerateOptions Options(std::string kind, int scale, int degree, uint64_t seed = 27491095) {
  GenerateOptions options;
  options.kind = std::move(kind);
  options.scale = scale;
  options.degree = degree;
  options.seed = seed;
  return options;
}

std::vector<GeneratedEdge> EdgesOrDie(const GenerateOptions& options) {
  absl::StatusOr<std::vector<GeneratedEdge>> edges = GenerateEdges(options);
  EXPECT_TRUE(edges.ok()) << edges.status();
  return edges.ok() ? *std::move(edges) : std::vector<GeneratedEdge>{};
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The text Generate must write for these edges, built the slow, obvious way.
std::string ExpectedText(const std::vector<GeneratedEdge>& edges, bool weights) {
  std::ostringstream text;
  for (const GeneratedEdge& e : edges) {
    text << e.u << ' ' << e.v;
    if (weights) text << ' ' << e.w;
    text << '\n';
  }
  return text.str();
}

std::vector<uint32_t> Degrees(const std::vector<GeneratedEdge>& edges, int scale) {
  std::vector<uint32_t> degree(size_t{1} << scale);
  for (const GeneratedEdge& e : edges) {
    ++degree[e.u];
    ++degree[e.v];
  }
  return degree;
}

// Any file name in dir that looks like one of Generate's temporary files.
std::vector<std::string> TempFiles(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) names.push_back(name);
  }
  return names;
}

class GenerateFileTest : public testing::Test {
 protected:
  test::TempDir temp_{"generate_test"};
  const fs::path& dir_ = temp_.path();
};

class GenerateKindTest : public testing::TestWithParam<const char*> {};

INSTANTIATE_TEST_SUITE_P(Kinds, GenerateKindTest, testing::Values("kronecker", "uniform"));

TEST_P(GenerateKindTest, EdgesAreCanonicalSortedDistinctAndInRange) {
  const int scale = 12;
  const std::vector<GeneratedEdge> edges = EdgesOrDie(Options(GetParam(), scale, 8));
  ASSERT_FALSE(edges.empty());
  for (size_t i = 0; i < edges.size(); ++i) {
    const GeneratedEdge& e = edges[i];
    ASSERT_LT(e.u, e.v) << "edge " << i;  // Canonical, hence no self-loops.
    ASSERT_LT(e.v, uint32_t{1} << scale) << "edge " << i;
    ASSERT_EQ(e.w, 0u) << "edge " << i;
    if (i > 0) {
      // Strictly increasing (u, v): sorted and without duplicates.
      const GeneratedEdge& p = edges[i - 1];
      ASSERT_TRUE(p.u < e.u || (p.u == e.u && p.v < e.v)) << "edge " << i;
    }
  }
}

TEST_P(GenerateKindTest, DeterministicForASeedAndDifferentForAnother) {
  const std::vector<GeneratedEdge> first = EdgesOrDie(Options(GetParam(), 10, 8, 1));
  EXPECT_EQ(first, EdgesOrDie(Options(GetParam(), 10, 8, 1)));
  EXPECT_NE(first, EdgesOrDie(Options(GetParam(), 10, 8, 2)));
}

TEST_P(GenerateKindTest, WeightsAreInRangeAndDoNotChangeTheEdges) {
  GenerateOptions options = Options(GetParam(), 12, 8);
  const std::vector<GeneratedEdge> plain = EdgesOrDie(options);
  options.weights = true;
  const std::vector<GeneratedEdge> weighted = EdgesOrDie(options);
  ASSERT_EQ(plain.size(), weighted.size());
  uint32_t min_weight = 255;
  uint32_t max_weight = 1;
  for (size_t i = 0; i < weighted.size(); ++i) {
    ASSERT_EQ(plain[i].u, weighted[i].u);
    ASSERT_EQ(plain[i].v, weighted[i].v);
    ASSERT_GE(weighted[i].w, 1u);
    ASSERT_LE(weighted[i].w, 255u);
    min_weight = std::min(min_weight, weighted[i].w);
    max_weight = std::max(max_weight, weighted[i].w);
  }
  // ~30k draws from 255 values: both ends of the range must show up.
  EXPECT_EQ(min_weight, 1u);
  EXPECT_EQ(max_weight, 255u);
}

// Per edge, what a relabelling cannot change: its ends' degrees (smaller first) and its weight.
std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> EdgeShapes(
    const std::vector<GeneratedEdge>& edges, int scale) {
  const std::vector<uint32_t> degree = Degrees(edges, scale);
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> shapes;
  for (const GeneratedEdge& e : edges) {
    shapes.emplace_back(std::min(degree[e.u], degree[e.v]), std::max(degree[e.u], degree[e.v]),
                        e.w);
  }
  std::sort(shapes.begin(), shapes.end());
  return shapes;
}

// --permute is the same weighted graph under other labels: as many edges, the same degree of each
// edge's ends and the same weight on it, but most vertices carry another ID.
TEST_P(GenerateKindTest, PermuteRelabelsTheSameWeightedGraph) {
  const int scale = 12;
  GenerateOptions options = Options(GetParam(), scale, 8);
  options.weights = true;
  const std::vector<GeneratedEdge> plain = EdgesOrDie(options);
  options.permute = true;
  const std::vector<GeneratedEdge> permuted = EdgesOrDie(options);
  ASSERT_EQ(permuted.size(), plain.size());
  EXPECT_EQ(EdgeShapes(permuted, scale), EdgeShapes(plain, scale));
  std::vector<uint32_t> plain_degree = Degrees(plain, scale);
  std::vector<uint32_t> permuted_degree = Degrees(permuted, scale);
  size_t moved = 0;
  for (size_t x = 0; x < plain_degree.size(); ++x) moved += plain_degree[x] != permuted_degree[x];
  EXPECT_GT(moved, plain_degree.size() / 2) << "the IDs barely moved";
  std::sort(plain_degree.begin(), plain_degree.end());
  std::sort(permuted_degree.begin(), permuted_degree.end());
  EXPECT_EQ(permuted_degree, plain_degree);
  for (size_t i = 0; i < permuted.size(); ++i) {
    const GeneratedEdge& e = permuted[i];
    ASSERT_LT(e.u, e.v) << "edge " << i;
    if (i > 0) {
      const GeneratedEdge& p = permuted[i - 1];
      ASSERT_TRUE(p.u < e.u || (p.u == e.u && p.v < e.v)) << "edge " << i;
    }
  }
}

TEST_P(GenerateKindTest, PermuteIsDeterministicForASeedAndDifferentForAnother) {
  GenerateOptions options = Options(GetParam(), 10, 8, 1);
  options.permute = true;
  const std::vector<GeneratedEdge> first = EdgesOrDie(options);
  EXPECT_EQ(first, EdgesOrDie(options));
  options.seed = 2;
  EXPECT_NE(first, EdgesOrDie(options));
}

TEST(GenerateTest, UniformKeepsAlmostEveryGeneratedEdge) {
  // 8192 edges among 1024 vertices: self-loops and repeats are rare (about 1% together).
  const std::vector<GeneratedEdge> edges = EdgesOrDie(Options("uniform", 10, 8));
  EXPECT_GE(edges.size(), 8192 * 95 / 100);
  EXPECT_LE(edges.size(), 8192u);
  const std::vector<uint32_t> degree = Degrees(edges, 10);
  EXPECT_LT(*std::max_element(degree.begin(), degree.end()), 50u);  // Average 16, no hubs.
}

TEST(GenerateTest, KroneckerIsSkewed) {
  // R-MAT repeats edges among its hubs, so fewer survive, and the hubs stand out.
  const std::vector<GeneratedEdge> edges = EdgesOrDie(Options("kronecker", 12, 16));
  const size_t generated = size_t{16} << 12;
  EXPECT_GE(edges.size(), generated / 2);
  EXPECT_LT(edges.size(), generated * 95 / 100);
  const std::vector<uint32_t> degree = Degrees(edges, 12);
  const double average =
      2.0 * static_cast<double>(edges.size()) / static_cast<double>(degree.size());
  EXPECT_GT(*std::max_element(degree.begin(), degree.end()), 10 * average);
  // The relabelling moves the biggest hub off vertex 0, where R-MAT puts it.
  EXPECT_NE(std::max_element(degree.begin(), degree.end()) - degree.begin(), 0);
}

TEST(GenerateTest, DegreeOneAtScaleOne) {
  // Two vertices, two generated edges: only {0, 1} can survive.
  for (const char* kind : {"kronecker", "uniform"}) {
    for (const GeneratedEdge& e : EdgesOrDie(Options(kind, 1, 1))) {
      EXPECT_EQ(e.u, 0u);
      EXPECT_EQ(e.v, 1u);
    }
  }
}

TEST(GenerateTest, BadOptionsNameTheFlag) {
  struct Case {
    GenerateOptions options;
    std::string message;
  };
  const std::vector<Case> cases = {
      {Options("uniform", 0, 16), "--scale must be between 1 and 30, got 0"},
      {Options("uniform", 31, 16), "--scale must be between 1 and 30, got 31"},
      {Options("kronecker", 10, 0), "--degree must be at least 1, got 0"},
      {Options("kronecker", 10, -3), "--degree must be at least 1, got -3"},
      {Options("rmat", 10, 16), "\"kronecker\" or \"uniform\", got \"rmat\""},
      {Options("", 10, 16), "\"kronecker\" or \"uniform\", got \"\""},
  };
  for (const Case& c : cases) {
    const absl::StatusOr<std::vector<GeneratedEdge>> edges = GenerateEdges(c.options);
    ASSERT_FALSE(edges.ok()) << c.message;
    EXPECT_EQ(edges.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(edges.status().message().find(c.message), std::string::npos) << edges.status();
    GenerateOptions with_out = c.options;
    with_out.out = "/nonexistent/never-written";
    const absl::Status status = Generate(with_out);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(c.message), std::string::npos) << status;
  }
  const absl::Status no_out = Generate(Options("uniform", 4, 4));
  EXPECT_EQ(no_out.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(no_out.message().find("--out"), std::string::npos) << no_out;
}

TEST_F(GenerateFileTest, WritesTheGeneratedEdgesAsText) {
  for (const bool permute : {false, true}) {
    for (const bool weights : {false, true}) {
      GenerateOptions options = Options("kronecker", 10, 8);
      options.weights = weights;
      options.permute = permute;
      options.out = (dir_ / "graph.el").string();
      ASSERT_TRUE(Generate(options).ok());
      EXPECT_EQ(ReadFile(options.out), ExpectedText(EdgesOrDie(options), weights))
          << "permute " << permute << ", weights " << weights;
      EXPECT_TRUE(TempFiles(dir_).empty());
    }
  }
}

TEST_F(GenerateFileTest, MatchesGoldenOutput) {
  // Pins the streams, the R-MAT descent, the relabelling and the weight hash: the same options
  // must give the same file on every platform and in every release. A deliberate change to the
  // generator updates these lines (and says so in the change log).
  const std::pair<const char*, const char*> cases[] = {
      {"kronecker",
       "1 2 234\n1 7 21\n1 9 206\n1 12 210\n1 15 99\n2 7 248\n2 8 168\n2 15 14\n3 7 130\n"
       "3 11 163\n4 7 34\n7 8 103\n7 9 163\n7 12 139\n7 13 82\n7 14 179\n8 12 83\n12 15 211\n"},
      {"uniform",
       "0 1 49\n0 6 162\n0 10 161\n0 14 22\n1 2 234\n1 3 206\n1 4 135\n1 5 246\n1 9 206\n"
       "1 10 147\n1 15 99\n2 13 135\n3 8 189\n3 10 181\n4 6 57\n4 13 115\n5 7 95\n5 10 145\n"
       "5 11 250\n6 9 192\n6 12 175\n8 10 9\n8 12 83\n9 13 157\n9 14 168\n12 15 211\n"},
  };
  for (const auto& [kind, expected] : cases) {
    GenerateOptions options = Options(kind, 4, 2);
    options.weights = true;
    options.out = (dir_ / kind).string();
    ASSERT_TRUE(Generate(options).ok());
    EXPECT_EQ(ReadFile(options.out), expected) << kind;
  }
}

TEST_F(GenerateFileTest, ByteIdenticalAtAnyThreadCount) {
  // 2^20 generated edges: four seed blocks and many output chunks, so threads do interleave.
  for (const char* kind : {"kronecker", "uniform"}) {
    std::vector<std::string> texts;
    std::vector<std::vector<GeneratedEdge>> edge_lists;
    for (const int threads : {1, 2, 4}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      GenerateOptions options = Options(kind, 16, 16);
      options.weights = true;
      options.out = (dir_ / ("graph_" + std::to_string(threads))).string();
      ASSERT_TRUE(Generate(options).ok());
      texts.push_back(ReadFile(options.out));
      edge_lists.push_back(EdgesOrDie(options));
    }
    ASSERT_FALSE(texts[0].empty());
    for (size_t i = 1; i < texts.size(); ++i) {
      EXPECT_TRUE(texts[i] == texts[0]) << kind << " differs at thread setting " << i;
      EXPECT_TRUE(edge_lists[i] == edge_lists[0]) << kind << " differs at thread setting " << i;
    }
  }
}

TEST_F(GenerateFileTest, ReplacesAnExistingFile) {
  const fs::path out = dir_ / "graph.el";
  std::ofstream(out) << "old contents that are longer than nothing\n";
  GenerateOptions options = Options("uniform", 3, 1);
  options.out = out.string();
  ASSERT_TRUE(Generate(options).ok());
  EXPECT_EQ(ReadFile(out), ExpectedText(EdgesOrDie(options), false));
  EXPECT_TRUE(TempFiles(dir_).empty());
}

TEST_F(GenerateFileTest, InvalidOptionsLeaveAnExistingFileAlone) {
  const fs::path out = dir_ / "graph.el";
  std::ofstream(out) << "old\n";
  GenerateOptions options = Options("uniform", 0, 1);
  options.out = out.string();
  EXPECT_FALSE(Generate(options).ok());
  EXPECT_EQ(ReadFile(out), "old\n");
  EXPECT_TRUE(TempFiles(dir_).empty());
}

TEST_F(GenerateFileTest, MissingDirectoryFailsWithoutLeavingAnything) {
  GenerateOptions options = Options("uniform", 8, 4);
  options.out = (dir_ / "missing" / "graph.el").string();
  const absl::Status status = Generate(options);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_NE(status.message().find(options.out), std::string::npos) << status;
  EXPECT_FALSE(fs::exists(dir_ / "missing"));
  EXPECT_TRUE(TempFiles(dir_).empty());
}

TEST_F(GenerateFileTest, FailedRenameRemovesTheTempFile) {
  // A non-empty directory at the output path: the temporary file is written in full, then the
  // rename over the directory fails, which exercises cleanup after the file exists.
  const fs::path out = dir_ / "graph.el";
  fs::create_directories(out / "child");
  GenerateOptions options = Options("kronecker", 8, 4);
  options.out = out.string();
  const absl::Status status = Generate(options);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("rename"), std::string::npos) << status;
  EXPECT_TRUE(fs::is_directory(out / "child"));
  EXPECT_TRUE(TempFiles(dir_).empty());
}

}  // namespace
}  // namespace lockstep::generate
