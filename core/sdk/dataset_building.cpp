// build_dataset (dataset.h): one dataset built through the registry by
// another, its parameters checked as the host checks a recipe table, so a
// wrapper cannot hand its inner dataset what a recipe could not.
#include <cstdint>
#include <variant>

#include "orchestrate/dataset.h"
#include "orchestrate/error.h"
#include "orchestrate/params.h"
#include "orchestrate/registry.h"

namespace orchestrate {

std::unique_ptr<Dataset> build_dataset(const DatasetContext& context, const std::string& name, const Params& given) {
  if (context.registry == nullptr)
    throw Error("dataset '" + name + "' cannot be built here: this DatasetContext has no registry (the host gives one)");
  const auto& entry = context.registry->datasets().get(name);  // unknown: names the known ones
  const ParamSchema& schema = entry.info.schema;
  Params params;
  for (const auto& spec : schema.specs())
    if (spec.default_value) params.set(spec.name, *spec.default_value);
  for (const auto& [key, given_value] : given.values()) {
    const ParamSpec* spec = schema.find(key);
    if (!spec) throw Error("dataset '" + name + "': unknown key '" + key + "'");
    // As in a recipe, an integer serves where a float is declared.
    ParamValue value = given_value;
    if (spec->type == ParamType::real && type_of(value) == ParamType::integer)
      value = static_cast<double>(std::get<std::int64_t>(value));
    if (type_of(value) != spec->type)
      throw Error("dataset '" + name + "': '" + key + "' must be " + to_string(spec->type) + ", got " +
                  to_string(type_of(value)));
    if (const std::string problem = spec->check(value); !problem.empty())
      throw Error("dataset '" + name + "': '" + key + "' " + problem);
    params.set(key, value);
  }
  for (const auto& spec : schema.specs())
    if (!params.has(spec.name)) throw Error("dataset '" + name + "': missing required key '" + spec.name + "'");
  for (const auto& problem : schema.broken_rules(params)) throw Error("dataset '" + name + "': " + problem);
  return entry.create(params, context);
}

}  // namespace orchestrate
