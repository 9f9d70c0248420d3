// The objective's check of a model's logits: a model built for another
// class count is named with both shapes, before cross-entropy meets it.
#include "engine/train/objective.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "orchestrate/testing/error_text.h"

namespace orchestrate {
namespace {

TEST(Objective, LogitsForAnotherClassCountNameTheModelAndBothShapes) {
  EXPECT_NO_THROW(check_logits_shape(at::zeros({3, 10}), 3, 10, "my_net"));
  const std::string expected =
      "[model] my_net returned logits of shape [3, 7] for a batch of 3 images; the data set has 10 classes, so it "
      "must return [3, 10]: build the model's last layer for ModelInput::num_classes (orchestrate conformance model "
      "my_net checks it)";
  EXPECT_EQ(testing::error_of([] { check_logits_shape(at::zeros({3, 7}), 3, 10, "my_net"); }), expected);
  // More outputs than classes would train without a word; a flat output is no [batch, classes].
  EXPECT_NE(testing::error_of([] { check_logits_shape(at::zeros({3, 12}), 3, 10, "my_net"); }), "");
  EXPECT_NE(testing::error_of([] { check_logits_shape(at::zeros({30}), 3, 10, "my_net"); })
                .find("returned logits of shape [30] for a batch of 3"),
            std::string::npos);
}

}  // namespace
}  // namespace orchestrate
