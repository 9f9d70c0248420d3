// The dataset interface: random access to labelled images, handed out one
// example at a time as decoded uint8 pixels at their stored size. Resizing,
// cropping, augmentation and conversion to float are the preprocessing's
// (preprocessing.h), so the pixels stay uint8 until the end of the pipeline.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "orchestrate/api.h"
#include "orchestrate/decode_window.h"

namespace orchestrate {

class Params;
class Registry;

enum class DatasetSplit { train, test };
ORCHESTRATE_API const char* to_string(DatasetSplit split);

struct DatasetInfo {
  std::int64_t channels = 0;  // of every example: 1 (grey) or 3 (RGB)
  // The size every example has, or 0 when examples differ in size (an image
  // folder of photos); a preprocessing that does not resize needs it.
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t num_classes = 0;
  std::vector<std::string> class_names;  // may be empty
  // Examples are cheapest read in index order (a record stream such as
  // TFRecord files). The host may then shuffle through a buffer ([run]
  // shuffle_buffer_size) instead of a full permutation, so the reads stay
  // near the stream's position.
  bool sequential = false;
};

// What the host asks for, per example. The seed is the only randomness a
// sample's processing may use: it is derived from the run's seed, the epoch
// and the index, never from the thread or the order of calls, so the same
// request gives the same example and augmentation whatever the thread count.
struct SampleRequest {
  std::int64_t index = 0;  // in [0, size())
  std::int64_t epoch = 0;  // 0-based pass over the split (evaluation: 0)
  std::uint64_t seed = 0;  // this example's randomness in this epoch
  int rank = 0;            // of the data-parallel job asking; the host has already sharded the indices
  int world_size = 1;
  // The part of the image the preprocessing will use, chosen from the
  // stored sides (decode_window.h); empty: all of it. A dataset that decodes
  // images passes it to decode_image, which then decodes only that window,
  // at a reduced JPEG scale where the window's min_side allows, and says so
  // in Example::windowed. A dataset may ignore it: the host then cuts the
  // window out of the whole image itself.
  ChooseWindow window;
};

// Where a dataset reports what its run should record (bad items it skipped,
// while indexing or when read). Called from pipeline threads too, so it is
// thread-safe; the host records each call as a run event.
class ORCHESTRATE_API DataEventSink {
 public:
  virtual ~DataEventSink();
  // kind: a short word ("bad_data"); shown by `orchestrate show`.
  virtual void event(const std::string& kind, const std::string& message) = 0;
};

// What a dataset factory is given. Grows only at the end. Made from a split
// alone (tools, tests), it has no sink: the dataset prints to stderr only.
struct DatasetContext {
  DatasetContext(DatasetSplit split = DatasetSplit::train, DataEventSink* events = nullptr,  // NOLINT: a split is a context
                 const Registry* registry = nullptr)
      : split(split), events(events), registry(registry) {}
  DatasetSplit split;
  DataEventSink* events;  // null: no run to record into; outlives the dataset
  // The datasets a wrapper may build its inner one from (build_dataset);
  // null when the caller has none (tools, tests). Outlives the dataset.
  const Registry* registry;
};

struct Example {
  // uint8 [H, W, channels], contiguous; but a windowed colour JPEG's pixels
  // may be four bytes apart (decode_image), the layout the resize takes.
  at::Tensor pixels;
  std::int64_t label = 0;  // in [0, num_classes)
  // The pixels are SampleRequest::window's region (at any scale), not the
  // whole image: set by a dataset that passed the window to the decoder.
  bool windowed = false;
};

// Examples stacked: what the pipeline hands the training step.
struct Batch {
  at::Tensor images;  // uint8 [N, H, W, C]
  at::Tensor labels;  // int64 [N], in [0, num_classes)
};

class ORCHESTRATE_API Dataset {
 public:
  virtual ~Dataset();
  virtual DatasetInfo info() const = 0;
  virtual std::int64_t size() const = 0;
  // The example at request.index. Called from several pipeline threads at
  // once, so it must be safe to call concurrently; an index outside
  // [0, size()) throws std::out_of_range. The same index gives the same
  // example in every epoch (the host may keep it: [run] cache_mb).
  virtual Example example(const SampleRequest& request) const = 0;
  // How many examples each of the dataset's files holds, the files in index
  // order: file 0 holds indices [0, n0), file 1 [n0, n0 + n1), ... A
  // data-parallel job then gives each rank whole files (see rank_shards.h).
  // Empty (the default): the dataset has no files to shard by.
  virtual std::vector<std::int64_t> examples_per_file() const;
};

// The examples at `indices` (epoch 0, seed = index), stacked; all must have
// the same size. For tests and tools that want a dataset's raw pixels.
ORCHESTRATE_API Batch stack_examples(const Dataset& dataset, const std::vector<std::int64_t>& indices);

// Builds the dataset `name` for the same split, sink and registry as
// `context`, with `given` over its defaults: how a wrapper dataset (a subset,
// a mixture, a relabelling) builds the dataset it wraps, as the host would.
// `given` is checked like a recipe table: an unknown dataset or key, a value
// of the wrong type or outside its range, a broken rule or a missing
// required key throws Error naming it; so does a context without a registry.
ORCHESTRATE_API std::unique_ptr<Dataset> build_dataset(const DatasetContext& context, const std::string& name,
                                                       const Params& given);

}  // namespace orchestrate
