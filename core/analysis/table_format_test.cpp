#include "analysis/table_format.h"

#include <gtest/gtest.h>

#include <cmath>

#include "orchestrate/error.h"

namespace orchestrate {
namespace {

Table small_table() {
  return {{"id", "name", "top1"}, {{"1", "resnet, \"big\"", "0.75"}, {"12", "mlp", ""}}};
}

TEST(TableFormatTest, AlignsTextWithAHeaderRule) {
  EXPECT_EQ(render(small_table(), TableFormat::table),
            "id  name           top1\n"
            "--  -------------  ----\n"
            " 1  resnet, \"big\"  0.75\n"
            "12  mlp\n");
}

TEST(TableFormatTest, WritesRfc4180Csv) {
  EXPECT_EQ(render(small_table(), TableFormat::csv),
            "id,name,top1\r\n"
            "1,\"resnet, \"\"big\"\"\",0.75\r\n"
            "12,mlp,\r\n");
}

TEST(TableFormatTest, QuotesCsvFieldsWithLineBreaks) {
  const Table table{{"message"}, {{"two\nlines"}, {"plain"}}};
  EXPECT_EQ(render(table, TableFormat::csv), "message\r\n\"two\nlines\"\r\nplain\r\n");
}

TEST(TableFormatTest, WritesJsonObjectsWithNumbersAsNumbers) {
  EXPECT_EQ(render(small_table(), TableFormat::json),
            "[\n"
            "  {\n"
            "    \"id\": 1,\n"
            "    \"name\": \"resnet, \\\"big\\\"\",\n"
            "    \"top1\": 0.75\n"
            "  },\n"
            "  {\n"
            "    \"id\": 12,\n"
            "    \"name\": \"mlp\",\n"
            "    \"top1\": null\n"
            "  }\n"
            "]\n");
}

TEST(TableFormatTest, KeepsNonFiniteAndPartlyNumericCellsAsStrings) {
  const Table table{{"a", "b", "c", "d"}, {{"nan", "inf", "12abc", "-1.5e3"}}};
  EXPECT_EQ(render(table, TableFormat::json),
            "[\n  {\n    \"a\": \"nan\",\n    \"b\": \"inf\",\n    \"c\": \"12abc\",\n    \"d\": -1500.0\n  }\n]\n");
}

TEST(TableFormatTest, AnEmptyTableStillHasHeaders) {
  const Table table{{"id", "name"}, {}};
  EXPECT_EQ(render(table, TableFormat::table), "id  name\n--  ----\n");
  EXPECT_EQ(render(table, TableFormat::csv), "id,name\r\n");
  EXPECT_EQ(render(table, TableFormat::json), "[]\n");
}

TEST(TableFormatTest, ParsesFormatNames) {
  EXPECT_EQ(parse_table_format("table"), TableFormat::table);
  EXPECT_EQ(parse_table_format("csv"), TableFormat::csv);
  EXPECT_EQ(parse_table_format("json"), TableFormat::json);
  EXPECT_EQ(parse_table_format("markdown"), TableFormat::markdown);
}

TEST(TableFormatTest, JsonKeepsTheTypeEachCellWasGiven) {
  // A run named "42" is a name, not a number; a NaN metric has no JSON number.
  const Table table{{"id", "name", "top1", "loss", "note"},
                    {{integer_cell(7), text_cell("42"), number_cell(0.8125, 4), number_cell(std::nan(""), 4), Cell()}}};
  EXPECT_EQ(render(table, TableFormat::json),
            "[\n  {\n    \"id\": 7,\n    \"name\": \"42\",\n    \"top1\": 0.8125,\n    \"loss\": null,\n"
            "    \"note\": null\n  }\n]\n");
  EXPECT_EQ(render(table, TableFormat::table),
            "id  name    top1  loss  note\n"
            "--  ----  ------  ----  ----\n"
            " 7  42    0.8125   nan\n");
}

TEST(TableFormatTest, WritesMarkdownWithNumbersRightAligned) {
  const Table table{{"name", "top1"}, {{text_cell("a|b"), number_cell(0.5, 2)}, {text_cell("two\nlines"), Cell()}}};
  EXPECT_EQ(render(table, TableFormat::markdown),
            "| name | top1 |\n"
            "| --- | ---: |\n"
            "| a\\|b | 0.50 |\n"
            "| two<br>lines |  |\n");
}

TEST(TableFormatTest, SectionsAreTitledTablesFieldObjectsAndText) {
  const std::vector<Section> sections = {
      {"run", {{"field", "value"}, {{text_cell("name"), text_cell("42")}, {text_cell("id"), integer_cell(3)}}}, true, ""},
      {"events", {{"kind"}, {{text_cell("resume")}}}, false, ""},
      {"recipe", {}, false, "[run]\nname = \"42\"\n"}};
  EXPECT_EQ(render_sections(sections, TableFormat::json),
            "{\n  \"run\": {\n    \"name\": \"42\",\n    \"id\": 3\n  },\n"
            "  \"events\": [\n    {\n      \"kind\": \"resume\"\n    }\n  ],\n"
            "  \"recipe\": \"[run]\\nname = \\\"42\\\"\\n\"\n}\n");
  EXPECT_EQ(render_sections(sections, TableFormat::markdown),
            "## run\n\n| field | value |\n| --- | --- |\n| name | 42 |\n| id | 3 |\n\n"
            "## events\n\n| kind |\n| --- |\n| resume |\n\n"
            "## recipe\n\n```\n[run]\nname = \"42\"\n```\n");
  EXPECT_THROW(render_sections(sections, TableFormat::csv), UsageError);
}

// People read rounded numbers and short times; programs (CSV, JSON) the
// stored values: every digit, ISO-8601 UTC, objects and arrays as JSON.
TEST(TableFormatTest, ProgramsGetFullPrecisionIsoTimesAndTypedValues) {
  Table table{{"loss", "started", "tags", "fixes", "default"},
              {{number_cell(0.30399999022483826, 4), time_cell("2026-11-26T11:15:38.226Z"),
                object_cell({{"team", "vision"}, {"sweep", "lr"}}), list_cell({"a", "b"}), json_cell("\"auto\"", "\"auto\"")}}};
  EXPECT_EQ(render(table, TableFormat::table),
            "  loss  started              tags                   fixes  default\n"
            "------  -------------------  ---------------------  -----  -------\n"
            "0.3040  2026-11-26 11:15:38  team=vision, sweep=lr  a; b   \"auto\"\n");
  EXPECT_EQ(render(table, TableFormat::csv),
            "loss,started,tags,fixes,default\r\n"
            "0.30399999022483826,2026-11-26T11:15:38.226Z,\"team=vision, sweep=lr\",a; b,\"\"\"auto\"\"\"\r\n");
  EXPECT_EQ(render(table, TableFormat::json),
            "[\n  {\n    \"loss\": 0.30399999022483826,\n    \"started\": \"2026-11-26T11:15:38.226Z\",\n"
            "    \"tags\": {\n      \"team\": \"vision\",\n      \"sweep\": \"lr\"\n    },\n"
            "    \"fixes\": [\n      \"a\",\n      \"b\"\n    ],\n    \"default\": \"auto\"\n  }\n]\n");
  EXPECT_EQ(render(Table{{"t"}, {{time_cell("")}}}, TableFormat::json), "[\n  {\n    \"t\": null\n  }\n]\n");
}

// A column hidden for people is still every program's; grouped columns nest
// in JSON, and a group with no columns is still there, empty.
TEST(TableFormatTest, HiddenColumnsAndJsonGroups) {
  Table table{{"id", "kind", "eval/top1", "train/loss"}, {{integer_cell(1), text_cell("train"), number_cell(0.5, 4), Cell()}}};
  table.hidden_for_people = {"kind"};
  table.json_groups.push_back({"metrics", 2, 2});
  table.json_groups.push_back({"values", 4, 0, /*as_array=*/true});
  EXPECT_EQ(render(table, TableFormat::table), "id  eval/top1  train/loss\n--  ---------  ----------\n 1     0.5000\n");
  EXPECT_EQ(render(table, TableFormat::csv), "id,kind,eval/top1,train/loss\r\n1,train,0.5,\r\n");
  EXPECT_EQ(render(table, TableFormat::json),
            "[\n  {\n    \"id\": 1,\n    \"kind\": \"train\",\n    \"metrics\": {\n      \"eval/top1\": 0.5,\n"
            "      \"train/loss\": null\n    },\n    \"values\": []\n  }\n]\n");
}

TEST(TableFormatTest, UnknownFormatIsAUsageErrorListingTheFormats) {
  try {
    parse_table_format("yaml");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& error) {
    EXPECT_EQ(error.exit_code(), ExitCode::usage);
    EXPECT_STREQ(error.what(), "unknown output format 'yaml'; use one of: table, csv, json, markdown");
  }
}

}  // namespace
}  // namespace orchestrate
