// The graph loaders (graph_input.h): edge lists in their many spellings, ID kinds and their order,
// weights, undirected inputs, errors that name the file and line, and LDBC Graphalytics graphs.
#include "lockstep/bsp/graph_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lockstep/bsp/vertex_id.h"
#include "lockstep/load/graphalytics.h"
#include "lockstep/load/input_form.h"
#include "lockstep/load/source.h"
#include "tbb/global_control.h"
#include "tbb/task_arena.h"
#include "unit/bsp/test_graphs.h"
#include "util/temp_dir.h"

namespace lockstep::load {
namespace {

using bsp::ExternalIdLess;
using bsp::ForEachEdge;
using bsp::GraphInput;
using bsp::GraphSource;
using bsp::ParseIntegerId;
using bsp::ParseUuid;
using bsp::ToString;
using bsp::VertexId;
using bsp::VertexIdFromExternal;
using bsp::WeightUse;
using bsp::WithReverseEdges;

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Pair;
using ::testing::StartsWith;

// The shared Graphalytics examples, found from the source tree (CMake gives LOCKSTEP_SHARED_DIR).
constexpr char kExamples[] = LOCKSTEP_SHARED_DIR "/graphalytics/example-data-sets/graphs/";

// The directed edges of a loaded graph as (src, dst) external IDs, in the input's edge order
// (a symmetric input's reverses after its stored edges).
std::vector<std::pair<std::string, std::string>> Edges(const GraphInput& g) {
  std::vector<std::pair<std::string, std::string>> edges;
  ForEachEdge(g, [&](uint32_t s, uint32_t d, size_t) {
    edges.emplace_back(g.external_ids[s], g.external_ids[d]);
  });
  return edges;
}

class LoaderTest : public ::testing::Test {
 protected:
  absl::StatusOr<GraphInput> Load(const std::string& name, const std::string& text,
                                  WeightUse weights = WeightUse::kNonNegative,
                                  bool undirected = false) {
    return LoadGraph({.path = dir_.Write(name, text), .undirected = undirected}, weights);
  }
  GraphInput MustLoad(const std::string& text, WeightUse weights = WeightUse::kNonNegative,
                      bool undirected = false) {
    auto g = Load("graph.el", text, weights, undirected);
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? *std::move(g) : GraphInput{};
  }
  // The error of loading `text` as bad.el, which must fail with InvalidArgument.
  std::string ErrorOf(const std::string& text, WeightUse weights = WeightUse::kNonNegative) {
    auto g = Load("bad.el", text, weights);
    EXPECT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(g.status().message());
  }
  std::string PathOf(const std::string& name) const { return (dir_.path() / name).string(); }

  test::TempDir dir_;
};

TEST_F(LoaderTest, SpacesTabsCommentsBlankLinesCrlfAndNoFinalNewline) {
  const GraphInput g = MustLoad(
      "# a comment\n"
      "% another comment\n"
      "\n"
      "1 2\n"
      "2\t3\r\n"
      "  3 \t 1  \n"
      "\t \r\n"
      "   # an indented comment\n"
      "4 1");
  EXPECT_THAT(g.external_ids, ElementsAre("1", "2", "3", "4"));
  EXPECT_THAT(g.src, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(g.dst, ElementsAre(1, 2, 0, 0));
  EXPECT_TRUE(g.weights.empty());
  EXPECT_TRUE(g.directed);
  EXPECT_TRUE(g.properties.empty());
}

TEST_F(LoaderTest, EmptyFile) {
  const GraphInput g = MustLoad("# nothing here\n\n");
  EXPECT_EQ(g.num_vertices(), 0u);
  EXPECT_EQ(g.num_edges(), 0u);
}

TEST_F(LoaderTest, StringIds) {
  const GraphInput g = MustLoad("carol bob\nbob alice\r\nalice carol");
  EXPECT_THAT(g.external_ids, ElementsAre("alice", "bob", "carol"));
  EXPECT_THAT(Edges(g),
              ElementsAre(Pair("carol", "bob"), Pair("bob", "alice"), Pair("alice", "carol")));
}

TEST_F(LoaderTest, UuidIdsAreUsedAsTheyAre) {
  const std::string a = "123e4567-e89b-42d3-a456-426614174000";
  const std::string b = "00000000-0000-0000-0000-000000000001";
  const GraphInput g = MustLoad(a + " " + b + "\n");
  EXPECT_THAT(g.external_ids, ElementsAre(b, a));
  VertexId parsed;
  ASSERT_TRUE(ParseUuid(a, parsed));
  EXPECT_EQ(VertexIdFromExternal(a), parsed);
  EXPECT_EQ(ToString(VertexIdFromExternal(a)), a);
  EXPECT_EQ(ToString(VertexIdFromExternal(b)), b);
  EXPECT_EQ(VertexIdFromExternal(b).data[15], 1);
  // Upper case is the same UUID; anything else is hashed.
  EXPECT_EQ(VertexIdFromExternal("123E4567-E89B-42D3-A456-426614174000"), parsed);
  EXPECT_NE(ToString(VertexIdFromExternal("123e4567e89b42d3a456426614174000")),
            "123e4567-e89b-42d3-a456-426614174000");
}

TEST_F(LoaderTest, SixtyFourBitIds) {
  const GraphInput g = MustLoad(
      "18446744073709551615 0\n"
      "18446744073709551614 18446744073709551615\n"
      "18446744073709551616 0\n");  // 2^64 is not an integer ID, so it is text
  EXPECT_THAT(g.external_ids, ElementsAre("0", "18446744073709551614", "18446744073709551615",
                                          "18446744073709551616"));
  EXPECT_THAT(Edges(g), ElementsAre(Pair("18446744073709551615", "0"),
                                    Pair("18446744073709551614", "18446744073709551615"),
                                    Pair("18446744073709551616", "0")));
}

TEST_F(LoaderTest, SixtyFourBitIdsAllIntegers) {
  const GraphInput g = MustLoad("18446744073709551615 3\n3 9223372036854775808\n");
  EXPECT_THAT(g.external_ids, ElementsAre("3", "9223372036854775808", "18446744073709551615"));
  EXPECT_THAT(g.src, ElementsAre(2, 0));
  EXPECT_THAT(g.dst, ElementsAre(0, 1));
}

// IDs are parsed into 32 bits while they fit: 2^32-1 still does, 2^32 sends the file to 64 bits.
TEST_F(LoaderTest, IdsAroundTwoToTheThirtyTwo) {
  const GraphInput narrow = MustLoad("4294967295 1\n1 0\n");
  EXPECT_THAT(narrow.external_ids, ElementsAre("0", "1", "4294967295"));
  EXPECT_THAT(Edges(narrow), ElementsAre(Pair("4294967295", "1"), Pair("1", "0")));
  const GraphInput wide = MustLoad("1 0\n4294967296 1\n4294967295 4294967296\n");
  EXPECT_THAT(wide.external_ids, ElementsAre("0", "1", "4294967295", "4294967296"));
  EXPECT_THAT(Edges(wide), ElementsAre(Pair("1", "0"), Pair("4294967296", "1"),
                                       Pair("4294967295", "4294967296")));
}

// Lines the one-pass integer path does not take (blanks first, tabs and CRs, a weight that is
// not a short integer, a trailing blank) mean what they always meant.
TEST_F(LoaderTest, IntegerLinesOfEveryShape) {
  const GraphInput g =
      MustLoad("1 2 3\n \t2\t3 1.5\r\n3 1 007 \n1 3\t1234567890123456789\n2 1 4 \r\n",
               WeightUse::kNonNegative);
  EXPECT_THAT(Edges(g), ElementsAre(Pair("1", "2"), Pair("2", "3"), Pair("3", "1"), Pair("1", "3"),
                                    Pair("2", "1")));
  EXPECT_THAT(g.weights, ElementsAre(3, 1.5, 7, 1234567890123456789.0, 4));
}

TEST_F(LoaderTest, MixedIdsOrderIntegersFirstNumerically) {
  const GraphInput g = MustLoad("b 10\n2 a\n007 1\n-5 10\n");
  // "007" and "-5" are not canonical unsigned integers, so they are text.
  EXPECT_THAT(g.external_ids, ElementsAre("1", "2", "10", "-5", "007", "a", "b"));
  EXPECT_THAT(Edges(g),
              ElementsAre(Pair("b", "10"), Pair("2", "a"), Pair("007", "1"), Pair("-5", "10")));
  EXPECT_TRUE(ExternalIdLess("2", "10"));
  EXPECT_TRUE(ExternalIdLess("99999", "0a"));
  EXPECT_FALSE(ExternalIdLess("a", "1"));
  EXPECT_FALSE(ExternalIdLess("1", "1"));
  uint64_t v;
  EXPECT_TRUE(ParseIntegerId("0", v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseIntegerId("18446744073709551615", v));
  EXPECT_EQ(v, UINT64_MAX);
  for (const char* text : {"", "01", "+1", "-1", "1x", "18446744073709551616", " 1"}) {
    EXPECT_FALSE(ParseIntegerId(text, v)) << text;
  }
}

TEST_F(LoaderTest, Weights) {
  const std::string text = "1 2 0.5\n2 3 1e3\n3 1 0\n1 1 7\n";
  const GraphInput g = MustLoad(text);
  EXPECT_THAT(g.weights, ElementsAre(0.5, 1000.0, 0.0, 7.0));
  EXPECT_THAT(MustLoad(text, WeightUse::kIgnore).weights, IsEmpty());
}

TEST_F(LoaderTest, UndirectedAddsReversesAndSelfLoopsOnce) {
  const GraphInput g = MustLoad("1 2 0.5\n2 2 1\n3 1 2\n1 2 4\n", WeightUse::kNonNegative, true);
  EXPECT_FALSE(g.directed);
  // Each edge is stored once and stands for both directions.
  EXPECT_TRUE(g.symmetric);
  EXPECT_EQ(g.num_stored_edges(), 4u);
  EXPECT_EQ(g.num_edges(), 7u);
  EXPECT_THAT(g.weights, ElementsAre(0.5, 1, 2, 4));
  EXPECT_THAT(Edges(g), ElementsAre(Pair("1", "2"), Pair("2", "2"), Pair("3", "1"), Pair("1", "2"),
                                    Pair("2", "1"), Pair("1", "3"), Pair("2", "1")));
  const GraphInput stored = WithReverseEdges(g);
  EXPECT_FALSE(stored.symmetric);
  EXPECT_EQ(Edges(stored), Edges(g));
  EXPECT_THAT(stored.weights, ElementsAre(0.5, 1, 2, 4, 0.5, 2, 4));
}

TEST_F(LoaderTest, ParallelEdgesAndSelfLoopsKept) {
  const GraphInput g = MustLoad("1 2\n1 2\n1 1\n2 1\n1 1\n");
  EXPECT_THAT(Edges(g), ElementsAre(Pair("1", "2"), Pair("1", "2"), Pair("1", "1"), Pair("2", "1"),
                                    Pair("1", "1")));
}

TEST_F(LoaderTest, WrongFieldCountNamesFileAndLine) {
  const std::string head = "# header\n1 2\n\n2 3\n% note\n3 4\n";  // lines 1..6
  EXPECT_THAT(ErrorOf(head + "5\n6 7\n"),
              AllOf(StartsWith(PathOf("bad.el") + ":7: "), HasSubstr("found 1 field")));
  EXPECT_THAT(ErrorOf(head + "5 6 7 8\n"),
              AllOf(StartsWith(PathOf("bad.el") + ":7: "), HasSubstr("found 4 fields")));
  // The same in text mode, and without a final newline.
  EXPECT_THAT(ErrorOf("a b\nc d\nlonely"), StartsWith(PathOf("bad.el") + ":3: "));
  // Counts hold with CRLF line ends.
  EXPECT_THAT(ErrorOf("1 2\r\n\r\n1 2 3 4\r\n"), StartsWith(PathOf("bad.el") + ":3: "));
}

TEST_F(LoaderTest, BadWeightNamesFileAndLine) {
  for (const char* weight : {"abc", "1.5x", "nan", "--1", "0x10"}) {
    EXPECT_THAT(ErrorOf(std::string("1 2 0.5\n\n# c\n2 3 ") + weight + "\n"),
                AllOf(StartsWith(PathOf("bad.el") + ":4: "),
                      HasSubstr("invalid weight '" + std::string(weight) + "'")))
        << weight;
  }
}

TEST_F(LoaderTest, MissingWeightNamesFileAndLine) {
  const std::string text = "# weights\n1 2 0.5\n2 3 1\n\n3 4\n4 1 2\n";
  EXPECT_THAT(ErrorOf(text), AllOf(StartsWith(PathOf("bad.el") + ":5: "),
                                   HasSubstr("missing weight"), HasSubstr("line 2")));
  // The first edge without a weight comes first as well.
  EXPECT_THAT(ErrorOf("1 2\n2 3 1\n"), StartsWith(PathOf("bad.el") + ":1: "));
  // An app that ignores weights does not mind.
  auto g = Load("mixed.el", text, WeightUse::kIgnore);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->num_edges(), 4u);
  EXPECT_TRUE(g->weights.empty());
}

TEST_F(LoaderTest, NegativeWeightNamesFileAndLine) {
  EXPECT_THAT(ErrorOf("1 2 0.5\n% c\n2 3 0\n3 4 -1.5\n4 1 2\n"),
              AllOf(StartsWith(PathOf("bad.el") + ":4: "), HasSubstr("negative weight -1.5")));
  EXPECT_THAT(ErrorOf("1 2 inf\n"),
              AllOf(StartsWith(PathOf("bad.el") + ":1: "), HasSubstr("infinite weight")));
  auto g = Load("neg.el", "1 2 -1\n", WeightUse::kIgnore);
  ASSERT_TRUE(g.ok()) << g.status();
}

// An error quotes a bad token short and clean: one line, valid UTF-8, a few dozen bytes of it.
TEST_F(LoaderTest, BadTokensAreQuotedShortAndEscaped) {
  const std::string huge(1 << 20, 'x');
  const std::string error = ErrorOf("1 2 0.5\n2 3 " + huge + "\n");
  EXPECT_THAT(error, AllOf(StartsWith(PathOf("bad.el") + ":2: invalid weight 'xxxx"),
                           HasSubstr("... (1048576 bytes)")));
  EXPECT_LT(error.size(), PathOf("bad.el").size() + 120) << error.substr(0, 200);
  // Bytes that are not UTF-8, and control bytes, are escaped.
  EXPECT_EQ(ErrorOf("1 2 0.5\n2 3 \xff\xfe\x01\x1b[2J\n"),
            PathOf("bad.el") + ":2: invalid weight '\\xff\\xfe\\x01\\x1b[2J'");
  EXPECT_THAT(ErrorOf("1 2 -" + huge.substr(0, 100) + "1\n"), Not(HasSubstr(huge.substr(0, 60))));
}

// A file large enough to be cut into several chunks: line numbers must count across chunks.
TEST_F(LoaderTest, ErrorLinesCountAcrossChunks) {
  tbb::task_arena arena(4);
  constexpr int kLines = 120000;  // about 3.5 MB
  std::string body;
  for (int i = 0; i < kLines; ++i) {
    body += std::to_string(1000000 + i) + " " + std::to_string(2000000 + i % 777) + " 0.25\n";
    if (i % 1000 == 0) body += "# comment\n";
  }
  const int last = kLines + kLines / 1000;  // lines in body
  arena.execute([&] {
    auto g = Load("big.el", body);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(g->num_edges(), static_cast<size_t>(kLines));
    EXPECT_EQ(g->num_vertices(), static_cast<size_t>(kLines + 777));
    EXPECT_THAT(ErrorOf(body + "1 2 -3\n"),
                AllOf(StartsWith(PathOf("bad.el") + ":" + std::to_string(last + 1) + ": "),
                      HasSubstr("negative")));
    EXPECT_THAT(ErrorOf(body + "\n1 2\n"),
                AllOf(StartsWith(PathOf("bad.el") + ":" + std::to_string(last + 2) + ": "),
                      HasSubstr("missing weight")));
    EXPECT_THAT(ErrorOf(body + "x\n"),
                AllOf(StartsWith(PathOf("bad.el") + ":" + std::to_string(last + 1) + ": "),
                      HasSubstr("found 1 field")));
  });
}

TEST_F(LoaderTest, MissingFileNamesThePath) {
  const std::string path = PathOf("no-such-dir/graph.el");
  auto g = LoadGraph({.path = path}, WeightUse::kIgnore);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr(path));
  // A directory without input files is an error naming it.
  auto from_dir = LoadGraph({.path = dir_.path().string()}, WeightUse::kIgnore);
  EXPECT_FALSE(from_dir.ok());
  EXPECT_THAT(std::string(from_dir.status().message()), HasSubstr(dir_.path().string()));
  auto props = ReadGraphalyticsProperties(PathOf("missing.properties"));
  EXPECT_THAT(std::string(props.status().message()), HasSubstr(PathOf("missing.properties")));
}

// The load's memory estimate (for out-of-memory messages) counts every file of a directory.
TEST_F(LoaderTest, LoadEstimateCountsADirectorysFiles) {
  const std::string file = dir_.Write("one.el", std::string(100, '\n'));
  EXPECT_EQ(EstimateLoadBytes({.path = file}), 300u);
  std::filesystem::create_directories(dir_ / "d");
  dir_.Write("d/a", std::string(100, '\n'));
  dir_.Write("d/b", std::string(50, '\n'));
  dir_.Write("d/.c", std::string(1000, '\n'));  // not read
  EXPECT_EQ(EstimateLoadBytes({.path = dir_.File("d")}), 450u);
}

TEST_F(LoaderTest, UnknownFormat) {
  auto g = LoadGraph({.path = dir_.Write("g.el", "1 2\n"), .format = "csv"}, WeightUse::kIgnore);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("csv"));
}

// --- Graphalytics --------------------------------------------------------------------------------

TEST(GraphalyticsTest, ExampleDirected) {
  const GraphSource source{.path = std::string(kExamples) + "example-directed.properties"};
  EXPECT_TRUE(IsGraphalytics(source));
  auto g = LoadGraph(source, WeightUse::kNonNegative);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->directed);
  EXPECT_THAT(g->external_ids, ElementsAre("1", "2", "3", "4", "5", "6", "7", "8", "9", "10"));
  ASSERT_EQ(g->num_edges(), 17u);
  ASSERT_EQ(g->weights.size(), 17u);
  EXPECT_EQ(Edges(*g)[0], std::make_pair(std::string("1"), std::string("3")));
  EXPECT_EQ(g->weights[0], 0.5);
  EXPECT_EQ(Edges(*g)[16], std::make_pair(std::string("9"), std::string("4")));
  EXPECT_EQ(g->weights[16], 0.69);
  EXPECT_EQ(g->properties.at("pr.damping-factor"), "0.85");
  EXPECT_EQ(g->properties.at("meta.edges"), "17");
}

TEST(GraphalyticsTest, ExampleUndirectedDoublesEdges) {
  auto loaded = LoadGraph({.path = std::string(kExamples) + "example-undirected.properties"},
                          WeightUse::kNonNegative);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->directed);
  EXPECT_TRUE(loaded->symmetric);
  EXPECT_EQ(loaded->num_stored_edges(), 12u);
  const GraphInput expanded = WithReverseEdges(*loaded);
  const GraphInput* g = &expanded;
  EXPECT_EQ(g->num_vertices(), 9u);
  EXPECT_EQ(g->external_ids.front(), "2");
  EXPECT_EQ(g->external_ids.back(), "10");
  ASSERT_EQ(g->num_edges(), 24u);  // 12 edges, no self-loops
  ASSERT_EQ(g->weights.size(), 24u);
  std::multiset<std::pair<std::pair<std::string, std::string>, double>> edges;
  for (size_t e = 0; e < g->num_edges(); ++e) {
    edges.insert({Edges(*g)[e], g->weights[e]});
  }
  for (size_t e = 0; e < 12; ++e) {
    const auto [s, d] = Edges(*g)[e];
    EXPECT_EQ(edges.count({{d, s}, g->weights[e]}), 1u) << s << " " << d;
  }
  // Without weights asked for, none are kept.
  auto unweighted = LoadGraph({.path = std::string(kExamples) + "example-undirected.properties"},
                              WeightUse::kIgnore);
  ASSERT_TRUE(unweighted.ok());
  EXPECT_TRUE(unweighted->weights.empty());
}

TEST(GraphalyticsTest, ReadPropertiesStripsGraphPrefix) {
  auto props = ReadGraphalyticsProperties(std::string(kExamples) + "example-directed.properties");
  ASSERT_TRUE(props.ok()) << props.status();
  EXPECT_EQ(props->at("vertex-file"), "example-directed.v");
  EXPECT_EQ(props->at("edge-file"), "example-directed.e");
  EXPECT_EQ(props->at("directed"), "true");
  EXPECT_EQ(props->at("bfs.source-vertex"), "1");
  EXPECT_EQ(props->at("sssp.weight-property"), "weight");
  EXPECT_EQ(props->at("algorithms"), "bfs, cdlp, lcc, pr, sssp, wcc");
  for (const auto& [key, value] : *props) EXPECT_FALSE(key.starts_with("graph.")) << key;
  EXPECT_EQ(props->size(), 14u);
}

class GraphalyticsFilesTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& v, const std::string& e, bool directed,
                    const std::string& name = "mini") {
    dir_.Write(name + ".v", v);
    dir_.Write(name + ".e", e);
    return dir_.Write(name + ".properties",
                      "# a small graph\n"
                      "graph." +
                          name + ".vertex-file = " + name +
                          ".v\n"
                          "graph." +
                          name + ".edge-file = " + name +
                          ".e\n"
                          "graph." +
                          name + ".directed = " + (directed ? "true" : "false") +
                          "\n"
                          "graph." +
                          name + ".cdlp.max-iterations : 5\n");
  }
  std::string PathOf(const std::string& name) const { return (dir_.path() / name).string(); }

  test::TempDir dir_;
};

TEST_F(GraphalyticsFilesTest, IsolatedVerticesAndSelfLoops) {
  const std::string path = Write("1\n2\n3\n4\n99\n", "1 2\n2 2\n3 1\n", false);
  auto g = LoadGraph({.path = path}, WeightUse::kIgnore);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->external_ids, ElementsAre("1", "2", "3", "4", "99"));  // 4 and 99 are isolated
  EXPECT_THAT(Edges(*g), ElementsAre(Pair("1", "2"), Pair("2", "2"), Pair("3", "1"), Pair("2", "1"),
                                     Pair("1", "3")));
  EXPECT_EQ(g->properties.at("cdlp.max-iterations"), "5");
}

TEST_F(GraphalyticsFilesTest, StringIdsAndExplicitFormat) {
  const std::string props =
      bsp::bsptest::ReadAll(Write("x\ny\nz\n10\n", "x y\n10 z\n", true, "named"));
  // An explicit format does not need the .properties suffix to be recognised.
  const std::string path = dir_.Write("named.props", props);
  EXPECT_FALSE(IsGraphalytics({.path = path}));
  auto g = LoadGraph({.path = path, .format = "graphalytics"}, WeightUse::kIgnore);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->external_ids, ElementsAre("10", "x", "y", "z"));
  EXPECT_THAT(Edges(*g), ElementsAre(Pair("x", "y"), Pair("10", "z")));
}

TEST_F(GraphalyticsFilesTest, EdgeToUnlistedVertexNamesEdgeFileAndLine) {
  const std::string path = Write("1\n2\n3\n", "1 2\n# c\n2 3\n3 7\n", true);
  auto g = LoadGraph({.path = path}, WeightUse::kIgnore);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()),
              AllOf(StartsWith(PathOf("mini.e") + ":4: "), HasSubstr("vertex 7"),
                    HasSubstr(PathOf("mini.v"))));
  // The same with string IDs.
  const std::string named = Write("a\nb\n", "a b\nb c\n", true, "named");
  auto h = LoadGraph({.path = named}, WeightUse::kIgnore);
  EXPECT_THAT(std::string(h.status().message()),
              AllOf(StartsWith(PathOf("named.e") + ":2: "), HasSubstr("vertex c")));
}

TEST_F(GraphalyticsFilesTest, TextEndpointInIntegerGraphNamesEdgeFileAndLine) {
  const std::string path = Write("1\n2\n3\n", "1 2\n2 3\n3 x\n", true);
  auto g = LoadGraph({.path = path}, WeightUse::kIgnore);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()),
              AllOf(StartsWith(PathOf("mini.e") + ":3: "), HasSubstr("vertex x")));
}

// `directed` decides the graph's edges: anything but "true" or "false" is an error, not "directed".
TEST_F(GraphalyticsFilesTest, DirectedMustBeTrueOrFalse) {
  dir_.Write("mini.v", "1\n2\n");
  dir_.Write("mini.e", "1 2\n");
  const std::string head = "graph.mini.vertex-file = mini.v\ngraph.mini.edge-file = mini.e\n";
  for (const std::string value : {"", "maybe", "False", "TRUE", "1", "true false"}) {
    const std::string path = dir_.Write("mini.properties", head + "graph.mini.directed = " + value +
                                                               "\ngraph.mini.meta.vertices = 2\n");
    auto g = LoadGraph({.path = path}, WeightUse::kIgnore);
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << value;
    EXPECT_EQ(std::string(g.status().message()),
              path + ":3: graph.mini.directed is '" + value + "', expected true or false");
    EXPECT_FALSE(ReadGraphalyticsProperties(path).ok()) << value;
  }
  const std::string missing = dir_.Write("mini.properties", head);
  auto g = LoadGraph({.path = missing}, WeightUse::kIgnore);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()),
              AllOf(StartsWith(missing + ": "), HasSubstr("graph.mini.directed"),
                    HasSubstr("expected true or false")));
  // A bad value is quoted short and escaped.
  const std::string odd = dir_.Write(
      "mini.properties", head + "graph.mini.directed = " + std::string(500, 'y') + "\xff\n");
  EXPECT_THAT(std::string(LoadGraph({.path = odd}, WeightUse::kIgnore).status().message()),
              AllOf(HasSubstr("... (501 bytes)"), Not(HasSubstr(std::string(100, 'y')))));
}

TEST_F(GraphalyticsFilesTest, RepeatedVertexNamesBothLines) {
  // Integer IDs held in 32 bits (a direct table), 64 bits (a sorted array), and text IDs.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"1\n2\n# c\n3\n2\n3\n", "2"},
      {"18446744073709551615\n7\n\n18446744073709551615\n", "18446744073709551615"},
      {"4000000000\n2\n4000000000\n", "4000000000"},
      {"b\na\nc\na\n", "a"},
  };
  const std::vector<std::pair<int, int>> lines = {{5, 2}, {4, 1}, {3, 1}, {4, 2}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = Write(cases[i].first, "", true);
    auto g = LoadGraph({.path = path}, WeightUse::kIgnore);
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << cases[i].first;
    EXPECT_EQ(std::string(g.status().message()),
              PathOf("mini.v") + ":" + std::to_string(lines[i].first) + ": vertex " +
                  cases[i].second + " is listed twice (first on line " +
                  std::to_string(lines[i].second) + ")");
  }
}

TEST_F(GraphalyticsFilesTest, RepeatedVertexAcrossChunks) {
  tbb::task_arena arena(4);
  std::string v;
  for (int i = 0; i < 300000; ++i) v += std::to_string(i * 3) + "\n";  // about 2 MB
  v += "# c\n42\n";
  const std::string path = Write(v, "0 3\n", false);
  arena.execute([&] {
    auto g = LoadGraph({.path = path}, WeightUse::kIgnore);
    EXPECT_EQ(std::string(g.status().message()),
              PathOf("mini.v") + ":300002: vertex 42 is listed twice (first on line 15)");
  });
}

TEST_F(GraphalyticsFilesTest, UnlistedVertexIsQuotedEscaped) {
  const std::string path = Write("a\nb\n", "a b\nb \xc3\x28\n", true);
  auto g = LoadGraph({.path = path}, WeightUse::kIgnore);
  EXPECT_THAT(std::string(g.status().message()),
              AllOf(StartsWith(PathOf("mini.e") + ":2: "), HasSubstr("vertex \\xc3( is not")));
}

TEST_F(GraphalyticsFilesTest, TwoGraphsInOneFileIsAnError) {
  Write("1\n", "", true);
  const std::string path = dir_.Write(
      "two.properties",
      "graph.a.vertex-file = mini.v\ngraph.a.edge-file = mini.e\ngraph.a.directed = true\n"
      "graph.b.vertex-file = mini.v\ngraph.b.edge-file = mini.e\ngraph.b.directed = false\n");
  auto g = LoadGraph({.path = path}, WeightUse::kIgnore);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(g.status().message()),
      AllOf(StartsWith(path + ":4: "), HasSubstr("graph.b.vertex-file"), HasSubstr("one graph")));
}

TEST_F(GraphalyticsFilesTest, MissingVertexFileProperty) {
  const std::string path = dir_.Write("broken.properties", "graph.g.edge-file = g.e\n");
  auto g = LoadGraph({.path = path}, WeightUse::kIgnore);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), AllOf(HasSubstr(path), HasSubstr("vertex-file")));
}

}  // namespace
}  // namespace lockstep::load
