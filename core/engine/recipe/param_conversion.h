// Turning recipe text into typed parameter values, checked against a spec.
#pragma once

#include <optional>
#include <string>

#include "limits/checked_toml.h"

#include "orchestrate/params.h"

namespace orchestrate {

// The value of `node` as the spec's type, or nullopt with `why` set. An
// integer is accepted where a float is declared; nothing else is coerced.
std::optional<ParamValue> value_from_toml(const ParamSpec& spec, const toml::node& node, std::string& why);

// How a TOML node's type reads in an error message ("string", "integer", ...).
std::string toml_type_name(const toml::node& node);

}  // namespace orchestrate
