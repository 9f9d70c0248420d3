#include "export/tensorboard/event_file_writer.h"

#include <gtest/gtest.h>

#include <vector>

#include "event.pb.h"
#include "orchestrate/testing/scratch_dir.h"
#include "orchestrate/tfrecord/record_framing.h"

namespace orchestrate::tensorboard {
namespace {

std::vector<Event> read_events(const std::string& path) {
  std::vector<Event> events;
  tfrecord::TfRecordScanner scanner(path);
  for (tfrecord::ScannedRecord record; scanner.next(record);) {
    EXPECT_EQ(record.damage, "") << "both CRCs match";
    events.emplace_back();
    EXPECT_TRUE(events.back().ParseFromString(record.data));
  }
  return events;
}

TEST(EventFileWriterTest, AVersionEventThenOneScalarEventEachZeroIncluded) {
  testing::ScratchDir dir;
  const std::string path = dir.file(event_file_name(1700000000.75, "node7"));
  EXPECT_EQ(path, dir.file("events.out.tfevents.1700000000.node7"));
  EventFileWriter writer(path, 1700000000.75);
  writer.add_scalar("train/loss", 5, 1700000001.5, 2.25);
  writer.add_scalar("train/reg_loss", 5, 1700000001.5, 0.0);
  writer.close();

  const auto events = read_events(path);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_DOUBLE_EQ(events[0].wall_time(), 1700000000.75);
  EXPECT_EQ(events[1].step(), 5);
  EXPECT_DOUBLE_EQ(events[1].wall_time(), 1700000001.5);
  ASSERT_EQ(events[1].summary().value_size(), 1);
  EXPECT_EQ(events[1].summary().value(0).tag(), "train/loss");
  EXPECT_FLOAT_EQ(events[1].summary().value(0).simple_value(), 2.25f);
  // TensorBoard reads a value as a scalar only if simple_value is present: 0.0 must be written.
  EXPECT_EQ(events[2].summary().value(0).value_case(), Summary::Value::kSimpleValue);
}

}  // namespace
}  // namespace orchestrate::tensorboard
