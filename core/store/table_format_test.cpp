#include "table_format.h"

#include <gtest/gtest.h>

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
}

TEST(TableFormatTest, UnknownFormatIsAUsageErrorListingTheFormats) {
  try {
    parse_table_format("yaml");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& error) {
    EXPECT_EQ(error.exit_code(), ExitCode::usage);
    EXPECT_STREQ(error.what(), "unknown output format 'yaml'; use one of: table, csv, json");
  }
}

}  // namespace
}  // namespace orchestrate
