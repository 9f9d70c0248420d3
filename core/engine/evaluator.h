// Accuracy and loss of a model on a whole dataset split.
#pragma once

#include <c10/core/Device.h>

#include "batch_pipeline.h"
#include "orchestrate/dataset.h"
#include "orchestrate/model.h"

namespace orchestrate {

struct EvalResult {
  double top1 = 0;    // fraction of examples whose best class is right
  double top5 = -1;   // fraction with the right class among the best five; -1 when fewer than 5 classes
  double loss = 0;    // mean cross-entropy
  std::int64_t examples = 0;
};

EvalResult evaluate(Model& model, const Dataset& dataset, std::int64_t batch_size, const c10::Device& device,
                    const PipelineOptions& pipeline);

}  // namespace orchestrate
