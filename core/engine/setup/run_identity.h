// Facts about where and with what a run happens, for its run-store row.
#pragma once

#include <c10/core/Device.h>

#include <string>

#include "engine/recipe/recipe.h"
#include "engine/recipe/settings.h"
#include "orchestrate/registry.h"
#include "store/run_records.h"

namespace orchestrate {

// The run-store row of a run of `recipe` on `device` (a training run; the
// caller sets kind and source for another kind).
RunRecord run_record_of(const Recipe& recipe, const Settings& settings, const Registry& registry,
                        const c10::Device& device);

// The git commit of the directory holding `path` ("" if it is not in a git
// work tree), with "-dirty" appended when that directory has uncommitted changes.
std::string git_revision_of(const std::string& path);
// Lower-case hex SHA-256 of a file's bytes ("" if it cannot be read), so a run
// records exactly which plugin binary produced it.
std::string sha256_of_file(const std::string& path);

}  // namespace orchestrate
