// model "{{name}}": a linear classifier over the flattened image, with
// dropout on its input while training. Replace the layers and forward() with
// your network.
//
// The interface and its contract: orchestrate/model.h (forward() maps float
// images [N, C, H, W] to logits [N, num_classes] and traces for serving with
// LibTorch's tracer; forward_train() returns exactly the auxiliary logits
// declared in ModelMeta). ModelMeta (orchestrate/registry.h) names the
// classifier head, which transfer learning leaves out. orchestrate's
// ModelConformance test (tests/conformance) checks it.
#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include <memory>
#include <utility>

#include "orchestrate/model.h"
#include "orchestrate/model_presets.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

class {{Name}} final : public orchestrate::Model {
 public:
  // `input` is what the data gives after preprocessing: channels, height,
  // width and the number of classes.
  {{Name}}(const orchestrate::ModelInput& input, double dropout) : dropout_(dropout) {
    classifier_ = register_module(
        "classifier", torch::nn::Linear(input.channels * input.height * input.width, input.num_classes));
  }

  at::Tensor forward(const at::Tensor& images) override {
    // is_training(): dropout only in train mode, so evaluation, export and
    // prediction see the whole input.
    const auto features = at::dropout(images.flatten(1), dropout_, is_training());
    return classifier_->forward(features);
  }

 private:
  double dropout_;
  torch::nn::Linear classifier_{nullptr};
};

void register_components(orchestrate::Registry& registry) {
  // Every key a recipe may set, with its default, documentation and range;
  // the host validates the [model] table against it before anything runs.
  orchestrate::ParamSchema schema{
      orchestrate::real_param("dropout", 0.0, "fraction of input pixels zeroed at random while training")
          .at_least(0)
          .less_than(1),
  };
  registry.models().add(
      "{{name}}", "linear classifier over the flattened image", std::move(schema),
      [](const orchestrate::Params& params, const orchestrate::ModelInput& input) {
        return std::make_shared<{{Name}}>(input, params.real("dropout"));
      },
      // The head's parameters (shaped by num_classes), the input size its
      // published weights expect (0: any), auxiliary logits with their loss
      // weights (none), and how images are normalized (not at all).
      orchestrate::ModelMeta{"classifier.*", 0, {}, orchestrate::no_preprocessing()});
}

}  // namespace

ORCHESTRATE_PLUGIN("{{name}}", "0.1.0", register_components)
