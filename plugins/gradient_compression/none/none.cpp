// The default [gradient_compression]: nothing is compressed. Its factory
// returns no compressor, which tells the host to average gradients with the
// dense, bucketed all-reduce (core/distributed/gradient_reducer.h).
#include <memory>

#include "orchestrate/gradient_compression.h"
#include "orchestrate/plugin.h"

namespace {

void register_components(orchestrate::Registry& registry) {
  registry.gradient_compressors().add(
      "none", "no compression: every rank's whole gradient is averaged by a bucketed all-reduce", {},
      [](const orchestrate::Params&, const orchestrate::CompressionContext&) {
        return std::unique_ptr<orchestrate::GradientCompressor>();
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("none_compression", "1.0.0", register_components)
