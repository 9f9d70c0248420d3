// Accuracy and loss of a model on a whole dataset split, through one
// pipeline whose worker threads live for the whole run.
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <map>
#include <string>

#include "engine/input/batch_pipeline.h"
#include "engine/input/device_batch_feeder.h"
#include "engine/precision/autocast_scope.h"
#include "orchestrate/dataset.h"
#include "orchestrate/model.h"

namespace orchestrate {

struct EvalResult {
  double top1 = 0;    // fraction of examples whose best class is right
  double top5 = -1;   // fraction with the right class among the best five; -1 when fewer than 5 classes
  double loss = 0;    // mean cross-entropy
  std::int64_t examples = 0;
};

// images (on the device) -> logits; the caller sets eval mode, no-grad and autocast.
using Forward = std::function<at::Tensor(const at::Tensor& images)>;
// Sums a tensor in place over the ranks of a data-parallel job.
using SumAcrossRanks = std::function<void(at::Tensor& sums)>;
// Told `batches_done` of this rank's `batches`, and the images they held, at
// the start (0) and after each batch is queued: for a progress line. It
// reads nothing from the device, so on a GPU it runs ahead of the scoring.
using BatchesScored = std::function<void(std::int64_t batches_done, std::int64_t batches, std::int64_t images)>;

class Evaluator {
 public:
  // Serves up to `rounds` evaluations of the whole split (source.dataset,
  // through source.preprocessing, its eval variant). In a data-parallel job
  // rank r of `world` scores batches r, r + world, ... of the split.
  Evaluator(SampleSource source, std::int64_t batch_size, const c10::Device& device, std::int64_t rounds,
            const PipelineOptions& options);
  // One pass over the split (this rank's batches; with `sum_across_ranks`,
  // the result is the whole split's on every rank). Logits are scored in fp32.
  EvalResult run(const Forward& forward, const SumAcrossRanks& sum_across_ranks = {},
                 const BatchesScored& scored = {});

 private:
  const SampleSource source_;
  c10::Device device_;
  BatchPipeline pipeline_;
  DeviceBatchFeeder feeder_;  // reads pipeline_
};

// One evaluation of `model` as a run evaluates it: eval mode, inference
// mode, autocast in `precision`, images in channels_last when asked. The
// model is left in eval mode.
EvalResult evaluate_model(Evaluator& evaluator, Model& model, const c10::Device& device, PrecisionMode precision,
                          bool channels_last, const SumAcrossRanks& sum_across_ranks = {},
                          const BatchesScored& scored = {});

// The run-store metrics of a result: eval/top1, eval/top5 (with >= 5 classes), eval/loss.
std::map<std::string, double> eval_metrics(const EvalResult& result);

// "top1 0.9012  top5 0.9987  loss 0.2790", for progress lines and events.
std::string format_eval(const EvalResult& result);

}  // namespace orchestrate
