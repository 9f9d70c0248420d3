// `orchestrate plugins` and `orchestrate describe`.
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <variant>

#include <nlohmann/json.hpp>

#include "analysis/table_format.h"
#include "cli/command.h"
#include "cli/options.h"
#include "cli/plugin_options.h"
#include "engine/recipe/core_tables.h"
#include "engine/setup/plugin_host.h"
#include "orchestrate/closest_match.h"
#include "orchestrate/error.h"

namespace orchestrate::cli {

namespace {

std::string spec_limits(const ParamSpec& spec) {
  std::string out = spec.range_text();
  for (const auto& choice : spec.choices) out += (out.empty() ? "" : " | ") + choice;
  return out;
}

// A default as JSON: typed (false, 0.1, "auto", [1, 2]), not its TOML text.
nlohmann::ordered_json json_of(const ParamValue& value) {
  return std::visit([](const auto& v) { return nlohmann::ordered_json(v); }, value);
}

Table schema_table(const ParamSchema& schema) {
  Table table{{"key", "type", "default", "required", "allowed", "resume_safe", "description"}, {}};
  table.hidden_for_people.insert("required");  // people see "(required)" as the default
  for (const auto& spec : schema.specs()) {
    const Cell default_cell = spec.default_value ? json_cell(to_display(*spec.default_value), json_of(*spec.default_value).dump())
                                                 : json_cell("(required)", "null");
    table.rows.push_back({text_cell(spec.name), text_cell(to_string(spec.type)), default_cell,
                          bool_cell(!spec.default_value), spec_limits(spec).empty() ? Cell() : text_cell(spec_limits(spec)),
                          // may change on --resume (ParamSpec::resume_safe): "yes" for people, a boolean in JSON
                          json_cell(spec.resume_safe ? "yes" : "", spec.resume_safe ? "true" : "false"),
                          text_cell(spec.doc)});
  }
  return table;
}

std::optional<ComponentKind> kind_named(const std::string& name) {
  for (auto kind : all_component_kinds())
    if (name == to_string(kind)) return kind;
  // The recipe's table for the kind, as a recipe spells it: [schedule] is an lr_schedule.
  if (const TableSpec* table = find_table(name); table && table->kind && !table->is_array) return table->kind;
  return std::nullopt;
}

std::vector<std::string> kind_words() {
  std::vector<std::string> out;
  for (auto kind : all_component_kinds()) out.push_back(to_string(kind));
  out.push_back("recipe");
  return out;
}

std::string did_you_mean(const std::string& typed, const std::vector<std::string>& known) {
  const std::string nearest = closest_match(typed, known);
  return nearest.empty() ? "" : "; did you mean '" + nearest + "'?";
}

std::string kind_names() {
  std::string out;
  for (auto kind : all_component_kinds()) out += std::string(out.empty() ? "" : ", ") + to_string(kind);
  return out + ", recipe";
}

}  // namespace

int plugins_command(const std::vector<std::string>& arguments) {
  po::options_description options("plugins options");
  add_plugin_path_option(options);
  options.add_options()("format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  po::variables_map values;
  if (!parse_options("plugins", "[options]", options, {}, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());

  Registry registry;
  const std::string plugin_path = values["plugin-path"].as<std::string>();
  const PluginScan scan = scan_plugins(registry, plugin_search_path(plugin_path));
  const auto& refused = scan.refused;
  Table table{{"kind", "component", "plugin", "version", "library", "summary"}, {}};
  for (auto kind : all_component_kinds()) {
    for (const auto* info : registry.components(kind)) {
      std::string version, library;
      for (const auto& plugin : registry.plugins())
        if (plugin.name == info->plugin) version = plugin.version, library = plugin.library_path;
      table.rows.push_back({text_cell(to_string(kind)), text_cell(info->name), text_cell(info->plugin), text_cell(version),
                            text_cell(library), text_cell(info->summary)});
    }
  }
  if (registry.plugins().empty() && refused.empty() && format == TableFormat::table) {
    std::cerr << "no plugins found; searched:";
    for (const auto& dir : plugin_search_path(plugin_path)) std::cerr << " " << dir;
    std::cerr << "\n";
    return static_cast<int>(ExitCode::plugin);
  }
  if (!registry.plugins().empty() || format != TableFormat::table) std::cout << render(table, format) << std::flush;
  // Listing the plugins is this command's whole job, so a refused file is
  // its failure: the good ones are listed above, each refused one on a line.
  for (const auto& plugin : refused) std::cerr << "orchestrate: error: plugin refused: " << plugin.message << "\n";
  // A hidden file is the user's choice of order, so it is said, not failed.
  for (const auto& shadowed : scan.shadowed) std::cerr << "orchestrate: note: " << shadowed.message() << "\n";
  return refused.empty() ? 0 : static_cast<int>(ExitCode::plugin);
}

namespace {

std::string numbers(const std::vector<double>& values) {
  std::ostringstream out;
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  return out.str();
}

void print_model_meta(const ModelMeta& meta) {
  std::cout << "logits pattern (\"@logits\" in [checkpoint] exclude): "
            << (meta.logits_pattern.empty() ? std::string("none declared") : "\"" + meta.logits_pattern + "\"")
            << "\n";
  if (meta.input_size > 0) std::cout << "input size: " << meta.input_size << "x" << meta.input_size << "\n";
  for (const auto& [name, weight] : meta.aux_logits)
    std::cout << "auxiliary logits: " << name << ", loss weight " << weight << " ([loss] aux_weight)\n";
  const auto& p = meta.preprocessing;
  if (!p.name.empty()) {
    std::cout << "preprocessing: " << p.name;
    if (!p.mean.empty()) std::cout << ", mean [" << numbers(p.mean) << "], std [" << numbers(p.std) << "]";
    if (p.resize > 0) std::cout << ", resize " << p.resize;
    std::cout << "\n";
  }
}

}  // namespace

int describe_command(const std::vector<std::string>& arguments) {
  po::options_description options("describe options");
  options.add_options()("kind", po::value<std::string>()->required(), kind_names().c_str())(
      "name", po::value<std::string>()->default_value(""),
      "component name (or recipe table for KIND recipe); none: the kind's components (or the recipe's tables)")(
      "format", po::value<std::string>()->default_value("table"), "table, csv, json or markdown");
  add_plugin_path_option(options);
  po::positional_options_description positional;
  positional.add("kind", 1).add("name", 1);
  po::variables_map values;
  if (!parse_options("describe", "KIND [NAME] [options]", options, positional, arguments, values)) return 0;
  const TableFormat format = parse_table_format(values["format"].as<std::string>());
  const std::string kind_text = values["kind"].as<std::string>();
  const std::string name = values["name"].as<std::string>();

  if (kind_text == "recipe" && name.empty()) {  // the tables, to pick one from
    Table table{{"table", "kind", "doc"}, {}};
    for (const auto& spec : recipe_tables())
      table.rows.push_back({text_cell(spec.is_array ? "[[" + spec.name + "]]" : "[" + spec.name + "]"),
                            spec.kind ? text_cell(to_string(*spec.kind)) : Cell(), text_cell(spec.doc)});
    std::cout << render(table, format);
    return 0;
  }
  if (kind_text == "recipe") {
    // "optimizer" or a list inside it, "optimizer.wrappers".
    const auto dot = name.find('.');
    const TableSpec* spec = find_table(name.substr(0, dot));
    if (spec && dot != std::string::npos) {
      const TableSpec* parent = spec;
      spec = nullptr;
      for (const auto& list : parent->lists)
        if (list.name == name.substr(dot + 1)) spec = &list;
    }
    if (!spec) {
      std::string known;
      for (const auto& table : recipe_tables()) {
        known += (known.empty() ? "" : ", ") + table.name;
        for (const auto& list : table.lists) known += ", " + table.name + "." + list.name;
      }
      std::vector<std::string> names;
      for (const auto& table : recipe_tables()) names.push_back(table.name);
      throw UsageError("describe recipe " + name + ": unknown table" + did_you_mean(name, names) + " (known: " + known +
                       ")");
    }
    if (format == TableFormat::table) {
      const bool is_list = dot != std::string::npos || spec->is_array;
      std::cout << (is_list ? "[[" : "[") << name << (is_list ? "]]: " : "]: ") << spec->doc << "\n";
      if (spec->kind)
        std::cout << "plugin = \"<" << to_string(*spec->kind) << ">\""
                  << (spec->default_plugin.empty() ? " (required)" : " (default \"" + spec->default_plugin + "\")")
                  << "; its keys: orchestrate describe " << to_string(*spec->kind) << " NAME\n";
      for (const auto& list : spec->lists)
        std::cout << "[[" << name << "." << list.name << "]]: " << list.doc << "\n";
      if (spec->every_key_resume_safe) std::cout << "every key, the component's own included, may change on --resume\n";
      std::cout << "\n";
    }
    std::cout << render(schema_table(spec->schema), format);
    return 0;
  }
  const auto kind = kind_named(kind_text);
  if (!kind)
    throw UsageError("describe: unknown kind '" + kind_text + "'" + did_you_mean(kind_text, kind_words()) +
                     " (known: " + kind_names() + ")");
  Registry registry;
  load_all_plugins(registry, values);
  if (name.empty()) {  // the kind's components, to pick a NAME from
    Table table{{"name", "plugin", "summary"}, {}};
    for (const auto* info : registry.components(*kind))
      table.rows.push_back({text_cell(info->name), text_cell(info->plugin), text_cell(info->summary)});
    std::cout << render(table, format);
    return 0;
  }
  const ComponentInfo& info = registry.component(*kind, name);
  if (format == TableFormat::table) {
    std::cout << to_string(*kind) << " " << info.name << " (plugin " << info.plugin << "): " << info.summary << "\n";
    if (*kind == ComponentKind::model) print_model_meta(registry.models().get(name).meta);
    std::cout << "\n";
  }
  std::cout << render(schema_table(info.schema), format);
  return 0;
}

}  // namespace orchestrate::cli
