// The error a registry raises when a component name is added twice.
//
// The registry knows the two plugins by name; the plugin host, which knows
// their files, catches this type to name both files in what the user reads.
#pragma once

#include <string>

#include "orchestrate/error.h"
#include "orchestrate/registry.h"

namespace orchestrate {

class ORCHESTRATE_API DuplicateComponentError : public PluginError {
 public:
  DuplicateComponentError(ComponentKind kind, std::string name, std::string first_plugin, std::string second_plugin);
  ~DuplicateComponentError() override;

  ComponentKind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  const std::string& first_plugin() const { return first_plugin_; }    // registered it first
  const std::string& second_plugin() const { return second_plugin_; }  // tried again

 private:
  ComponentKind kind_;
  std::string name_;
  std::string first_plugin_;
  std::string second_plugin_;
};

}  // namespace orchestrate
