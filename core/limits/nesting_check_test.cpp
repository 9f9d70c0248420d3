// The nesting pre-scan: deep recipes and JSON are refused with their place;
// everything a real recipe holds passes, however its strings look.
#include <gtest/gtest.h>

#include <string>

#include "limits/nesting_check.h"
#include "orchestrate/error.h"
#include "orchestrate/input_limits.h"

namespace orchestrate {
namespace {

using limits::kMaxNesting;

std::string repeated(const std::string& piece, int times, const std::string& separator = "") {
  std::string out;
  for (int i = 0; i < times; ++i) out += (i ? separator : "") + piece;
  return out;
}

std::string toml_error(const std::string& text) {
  try {
    check_toml_text(text, "r.toml");
  } catch (const RecipeError& e) {
    return e.what();
  }
  return "";
}

TEST(TomlNesting, AShippedStyleRecipePasses) {
  const std::string recipe = R"(schema_version = 1
# a comment with [[brackets]] and a.b.c.d dots
[run]
name = "a.b.c [not a table]"
lr = 0.05
started = 1979-05-27 07:32:00Z
[optimizer]
plugin = "lars"
wrappers = [{plugin = "batch_gradients", num_batches = 2}, {plugin = "clip", max_norm = 1.0}]
text = """
[a.b.c.d.e.f.g]
"quoted" \""" still inside
"""
literal = '''{{{{{{{{'''
[[hooks]]
plugin = "x"
nested = [[1, 2], [3, [4, 5]]]
"dotted.quoted".key = 1
)";
  EXPECT_EQ(toml_error(recipe), "");
}

TEST(TomlNesting, DeepDottedKeysAreRefusedWithTheirLine) {
  const std::string error = toml_error("[run]\nx = 1\n" + repeated("a", 100000, ".") + " = 1\n");
  EXPECT_NE(error.find("r.toml:3:"), std::string::npos) << error;
  EXPECT_NE(error.find("nested deeper than " + std::to_string(kMaxNesting) + " levels"), std::string::npos) << error;
}

TEST(TomlNesting, DeepTableHeadersAndInlineValuesAreRefused) {
  EXPECT_NE(toml_error("[" + repeated("t", 100000, ".") + "]\nx = 1\n").find("r.toml:1:"), std::string::npos);
  EXPECT_NE(toml_error("x = " + repeated("[", 300) + repeated("]", 300) + "\n").find("r.toml:1:"), std::string::npos);
  EXPECT_NE(toml_error("x = " + repeated("{a = ", 300) + "1" + repeated("}", 300) + "\n").find("r.toml:1:"),
            std::string::npos);
  // Depth adds up across a header, a dotted key and a value.
  const std::string half = repeated("k", kMaxNesting / 2, ".");
  EXPECT_NE(toml_error("[" + half + "]\n" + half + " = [[1]]\n").find("r.toml:2:"), std::string::npos);
  EXPECT_EQ(toml_error("[" + repeated("k", kMaxNesting / 2 - 2, ".") + "]\n" + half + " = [[1]]\n"), "");
}

// Found by fuzzing: toml++ 3.3 asserts (and in a release build assumes)
// that a table header holds no NUL.
TEST(TomlNesting, ControlCharactersAreRefusedWithTheirPlace) {
  const std::string error = toml_error(std::string("[run]\nx = 1\n[\0\0r]\n", 18));
  EXPECT_NE(error.find("r.toml:3:2: control character U+0000 is not allowed in TOML"), std::string::npos) << error;
  EXPECT_NE(toml_error("x = \"a\x1b[0m\"\n").find("U+001B"), std::string::npos);
  EXPECT_EQ(toml_error("x = \"tab\there\"\r\n"), "");
}

TEST(TomlNesting, AHeaderWithoutANameIsRefused) {
  EXPECT_NE(toml_error("[run]\n[\neval]\n").find("r.toml:2:2: TOML syntax error: a table header needs a name"),
            std::string::npos);
  EXPECT_NE(toml_error("[[ ]]\n").find("r.toml:1:4:"), std::string::npos);
  EXPECT_EQ(toml_error("[ \"quoted\" ]\n[[ 'lit'.x ]]\n"), "");
}

TEST(TomlNesting, NonAsciiOutsideStringsAndCommentsIsRefused) {
  EXPECT_EQ(toml_error("# caf\xc3\xa9\nname = \"caf\xc3\xa9\"  # \xef\xbb\x9f\nx = '\xe2\x82\xac'\n"), "");
  EXPECT_NE(toml_error("x = 1\n\xef\xbb\x9f = 2\n").find("r.toml:2:1: TOML syntax error: a non-ASCII character"),
            std::string::npos);
}

TEST(TomlNesting, AnArrayValueThatCannotStartAValueIsRefused) {
  EXPECT_NE(toml_error("x = [}\n").find("r.toml:1:6: TOML syntax error: expected a value in the array, found '}'"),
            std::string::npos);
  EXPECT_NE(toml_error("x = [1,\n  ,2]\n").find("r.toml:2:3:"), std::string::npos);
}

// Found by fuzzing: toml++ 3.3 classifies the character after a backslash in
// a multi-line string through an "unreachable" branch for U+00A1..U+049D.
TEST(TomlNesting, NonAsciiRightAfterAMultiLineBackslashIsRefused) {
  EXPECT_NE(toml_error("t = \"\"\"a\\\xc3\xa9\"\"\"\n").find("r.toml:1:10: TOML syntax error: a non-ASCII character right after"),
            std::string::npos);
  EXPECT_NE(toml_error("t = \"\"\"a\\  \n  \xc3\xa9\"\"\"\n").find("right after a backslash"), std::string::npos);
  EXPECT_EQ(toml_error("t = \"\"\"caf\xc3\xa9 \\\n  ok \\u00e9\"\"\"\n"), "");
}

TEST(TomlNesting, BrokenSyntaxIsLeftToTheParser) {
  for (const std::string text : {"[run", "x = [1, 2", "x = \"unterminated", "= 3", "x = '''open", "x = {a = }}}}]]]",
                                 "\"\"\"", "a.", "a..b = 1"})
    EXPECT_EQ(toml_error(text), "") << text;
}

std::string json_error(const std::string& text) {
  try {
    check_json_nesting(text, "model.safetensors");
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonNesting, DeepJsonIsRefusedAndStringsDoNotCount) {
  EXPECT_EQ(json_error(R"({"__metadata__": {"k": "[[[[[[{{{{\"[[["}, "w": {"shape": [1, 2]}})"), "");
  const std::string deep = "{\"__metadata__\": " + repeated("[", 100000) + repeated("]", 100000) + "}";
  const std::string error = json_error(deep);
  EXPECT_NE(error.find("model.safetensors: JSON nested deeper than " + std::to_string(kMaxNesting) +
                       " levels at byte " + std::to_string(17 + kMaxNesting - 1)),
            std::string::npos)
      << error;
  EXPECT_EQ(json_error(repeated("[", kMaxNesting) + repeated("]", kMaxNesting)), "");
}

}  // namespace
}  // namespace orchestrate
