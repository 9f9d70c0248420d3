#include "labelled_image.h"

#include <climits>

#include "example.pb.h"

namespace orchestrate::tfrecord {

namespace {

const char* kind_name(const tensorflow::Feature& feature) {
  switch (feature.kind_case()) {
    case tensorflow::Feature::kBytesList: return "a bytes_list";
    case tensorflow::Feature::kFloatList: return "a float_list";
    case tensorflow::Feature::kInt64List: return "an int64_list";
    case tensorflow::Feature::KIND_NOT_SET: break;
  }
  return "empty";
}

const tensorflow::Feature* find(const tensorflow::Example& example, const std::string& key) {
  const auto& features = example.features().feature();
  const auto found = features.find(key);
  return found == features.end() ? nullptr : &found->second;
}

const tensorflow::Feature& require(const tensorflow::Example& example, const std::string& key) {
  const auto* feature = find(example, key);
  if (!feature) throw ExampleError("the Example has no feature '" + key + "'");
  return *feature;
}

void expect_one_value(const std::string& key, int count) {
  if (count != 1)
    throw ExampleError("feature '" + key + "' holds " + std::to_string(count) + " values where one is expected");
}

const std::string& single_bytes(const std::string& key, const tensorflow::Feature& feature) {
  if (!feature.has_bytes_list())
    throw ExampleError("feature '" + key + "' is " + kind_name(feature) + ", not a bytes_list");
  expect_one_value(key, feature.bytes_list().value_size());
  return feature.bytes_list().value(0);
}

std::int64_t single_int64(const std::string& key, const tensorflow::Feature& feature) {
  if (!feature.has_int64_list())
    throw ExampleError("feature '" + key + "' is " + kind_name(feature) + ", not an int64_list");
  expect_one_value(key, feature.int64_list().value_size());
  return feature.int64_list().value(0);
}

}  // namespace

LabelledImage parse_labelled_image(std::string_view payload, const ExampleKeys& keys) {
  tensorflow::Example example;
  if (payload.size() > static_cast<std::size_t>(INT_MAX))
    throw ExampleError("a record of " + std::to_string(payload.size()) + " bytes is too large for a tf.train.Example");
  if (!example.ParseFromArray(payload.data(), static_cast<int>(payload.size())))
    throw ExampleError("not a tf.train.Example (the protobuf does not parse)");
  LabelledImage image;
  image.encoded = single_bytes(keys.image, require(example, keys.image));
  if (const auto* format = find(example, keys.format)) image.format = single_bytes(keys.format, *format);
  image.label = single_int64(keys.label, require(example, keys.label));
  return image;
}

std::string serialize_labelled_image(const LabelledImage& image, const ExampleKeys& keys) {
  tensorflow::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  features[keys.image].mutable_bytes_list()->add_value(image.encoded);
  if (!image.format.empty()) features[keys.format].mutable_bytes_list()->add_value(image.format);
  features[keys.label].mutable_int64_list()->add_value(image.label);
  return example.SerializeAsString();
}

}  // namespace orchestrate::tfrecord
