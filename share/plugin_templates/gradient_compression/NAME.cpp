// gradient_compression "{{name}}": sends every gradient whole, so the host's
// exchange averages them as a dense all-reduce would. Replace compress()
// with your choice of what to send (a top-k, a quantisation), and keep what
// you do not send in state_dict() so a resumed run continues exactly.
//
// The interface and its contract: orchestrate/gradient_compression.h (one
// message per parameter in context order; float32 one-dimensional values on
// the parameter's device; indices, when defined, distinct int64 or int32
// positions; the same number of values on every rank). A factory that returns
// no compressor asks for the dense all-reduce instead. Registration-time
// declarations are orchestrate::CompressionRules in orchestrate/registry.h.
// orchestrate's CompressionConformance test (tests/conformance) checks it.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "orchestrate/gradient_compression.h"
#include "orchestrate/optimizer.h"
#include "orchestrate/params.h"
#include "orchestrate/plugin.h"
#include "orchestrate/registry.h"

namespace {

class {{Name}} final : public orchestrate::GradientCompressor {
 public:
  {{Name}}(const orchestrate::CompressionContext& context, std::int64_t log_every) : log_every_(log_every) {
    for (const auto& group : context.groups)
      for (const auto& parameter : group.parameters) parameters_.push_back(parameter.tensor);
  }

  std::vector<orchestrate::CompressedGradient> compress(const orchestrate::CompressionStep& step) override {
    at::NoGradGuard no_grad;
    std::vector<orchestrate::CompressedGradient> messages;
    std::vector<at::Tensor> norms;
    for (const auto& parameter : parameters_) {
      // Undefined indices: the values are the whole flattened gradient.
      messages.push_back({at::Tensor(), parameter.grad().flatten().to(at::kFloat)});
      norms.push_back(at::linalg_vector_norm(messages.back().values));
    }
    // A metric stays a tensor on the device; the host reads it at log points.
    if (log_every_ > 0 && step.update % log_every_ == 0 && !norms.empty())
      step.metrics["train/{{name}}_sent_norm"] = at::linalg_vector_norm(at::stack(norms));
    return messages;
  }
  // Sends everything, so keeps no residuals: state_dict() stays the default (none).

 private:
  std::int64_t log_every_;
  std::vector<at::Tensor> parameters_;  // in context order: groups, then parameters within a group
};

void register_components(orchestrate::Registry& registry) {
  // Every key a recipe may set, with its default, documentation and range;
  // the host validates the [gradient_compression] table against it.
  orchestrate::ParamSchema schema{
      orchestrate::int_param("log_every", 0,
                             "every N updates, record the L2 norm of what this rank sends as train/{{name}}_sent_norm; "
                             "0: never")
          .at_least(0),
  };
  registry.gradient_compressors().add(
      "{{name}}", "no compression: every gradient is sent whole", std::move(schema),
      [](const orchestrate::Params& params, const orchestrate::CompressionContext& context) {
        return std::make_unique<{{Name}}>(context, params.integer("log_every"));
      },
      orchestrate::CompressionRules{});
}

}  // namespace

ORCHESTRATE_PLUGIN("{{name}}", "0.1.0", register_components)
