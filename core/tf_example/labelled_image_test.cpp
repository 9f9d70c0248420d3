#include "labelled_image.h"

#include <gtest/gtest.h>

#include <string>

#include "example.pb.h"

namespace orchestrate::tfrecord {
namespace {

std::string cause_of(const std::string& payload, const ExampleKeys& keys = {}) {
  try {
    parse_labelled_image(payload, keys);
  } catch (const ExampleError& error) {
    return error.what();
  }
  return "";
}

TEST(LabelledImage, RoundTripsThroughAnExampleWithFastNNsKeys) {
  const LabelledImage image{std::string("\x89PNG\0\1", 6), "png", 7};
  const std::string payload = serialize_labelled_image(image, {});
  tensorflow::Example example;
  ASSERT_TRUE(example.ParseFromString(payload));
  const auto& features = example.features().feature();
  EXPECT_EQ(features.at("image/encoded").bytes_list().value(0), image.encoded);
  EXPECT_EQ(features.at("image/format").bytes_list().value(0), "png");
  EXPECT_EQ(features.at("image/class/label").int64_list().value(0), 7);

  const auto back = parse_labelled_image(payload, {});
  EXPECT_EQ(back.encoded, image.encoded);
  EXPECT_EQ(back.format, "png");
  EXPECT_EQ(back.label, 7);
}

TEST(LabelledImage, KeysAreConfigurableAndTheFormatIsOptional) {
  const ExampleKeys keys{"jpeg", "fmt", "class"};
  const auto payload = serialize_labelled_image({"bytes", "", -3}, keys);
  const auto back = parse_labelled_image(payload, keys);
  EXPECT_EQ(back.encoded, "bytes");
  EXPECT_EQ(back.format, "");
  EXPECT_EQ(back.label, -3);
  EXPECT_EQ(cause_of(payload), "the Example has no feature 'image/encoded'");
}

TEST(LabelledImage, WrongKindsAndCountsAreNamed) {
  tensorflow::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  features["image/encoded"].mutable_bytes_list()->add_value("a");
  features["image/class/label"].mutable_float_list()->add_value(1.0f);
  EXPECT_EQ(cause_of(example.SerializeAsString()), "feature 'image/class/label' is a float_list, not an int64_list");

  features["image/class/label"].mutable_int64_list()->add_value(1);
  features["image/class/label"].mutable_int64_list()->add_value(2);
  EXPECT_EQ(cause_of(example.SerializeAsString()), "feature 'image/class/label' holds 2 values where one is expected");

  features["image/encoded"].mutable_int64_list()->add_value(5);
  EXPECT_EQ(cause_of(example.SerializeAsString()), "feature 'image/encoded' is an int64_list, not a bytes_list");

  features["image/encoded"].Clear();
  EXPECT_EQ(cause_of(example.SerializeAsString()), "feature 'image/encoded' is empty, not a bytes_list");
}

TEST(LabelledImage, BytesThatAreNoProtobufAreNamed) {
  EXPECT_EQ(cause_of("\xff\xff\xff\xff"), "not a tf.train.Example (the protobuf does not parse)");
  EXPECT_EQ(cause_of(""), "the Example has no feature 'image/encoded'");  // an empty message parses
}

}  // namespace
}  // namespace orchestrate::tfrecord
