// Out-of-line virtual destructors: each interface's vtable and typeinfo live
// in the SDK library, so dynamic_cast and exceptions work across plugins.
#include "orchestrate/dataset.h"
#include "orchestrate/lr_schedule.h"
#include "orchestrate/model.h"

namespace orchestrate {

Dataset::~Dataset() = default;
Model::~Model() = default;
LrSchedule::~LrSchedule() = default;

const char* to_string(DatasetSplit split) { return split == DatasetSplit::train ? "train" : "test"; }

}  // namespace orchestrate
