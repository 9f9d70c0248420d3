#include "orchestrate/duplicate_component.h"

namespace orchestrate {

DuplicateComponentError::DuplicateComponentError(ComponentKind kind, std::string name, std::string first_plugin,
                                                 std::string second_plugin)
    : PluginError(std::string(to_string(kind)) + " '" + name + "' is registered twice: by plugin '" + first_plugin +
                  "' and by plugin '" + second_plugin + "'; remove one of them from the plugin path"),
      kind_(kind),
      name_(std::move(name)),
      first_plugin_(std::move(first_plugin)),
      second_plugin_(std::move(second_plugin)) {}

// Out of line: one typeinfo, in the SDK, so the host catches what a plugin's registration threw.
DuplicateComponentError::~DuplicateComponentError() = default;

}  // namespace orchestrate
