#include "engine/recipe/recipe.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "limits/checked_toml.h"

#include "engine/recipe/core_settings_tables.h"
#include "engine/recipe/core_tables.h"
#include "engine/recipe/cross_table_checks.h"
#include "engine/recipe/param_conversion.h"
#include "engine/recipe/recipe_overrides.h"
#include "engine/recipe/recipe_settings.h"
#include "limits/nesting_check.h"
#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// RecipeView over a resolved recipe: what a component's recipe rule reads.
class ResolvedRecipeView final : public RecipeView {
 public:
  ResolvedRecipeView(const Recipe& recipe, const Settings& settings) : recipe_(recipe), settings_(settings) {}
  std::string plugin(const std::string& table) const override {
    const auto it = recipe_.tables.find(table);
    return it == recipe_.tables.end() ? "" : it->second.plugin;
  }
  const Params* params(const std::string& table) const override {
    const auto it = recipe_.tables.find(table);
    return it == recipe_.tables.end() || it->second.plugin.empty() ? nullptr : &it->second.component;
  }
  double base_learning_rate() const override { return settings_.optimizer.base_lr; }

 private:
  const Recipe& recipe_;
  const Settings& settings_;
};

}  // namespace

const std::vector<TableValues>& TableValues::list(const std::string& name) const {
  static const std::vector<TableValues> none;
  auto it = lists.find(name);
  return it == lists.end() ? none : it->second;
}

const TableValues& Recipe::table(const std::string& name) const {
  auto it = tables.find(name);
  if (it == tables.end()) throw std::logic_error("recipe table [" + name + "] is not in core_tables.cpp");
  return it->second;
}

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// "; give it with --set data.dir=..." for a key of a plain table ("[data]").
std::string set_hint(const std::string& label, const std::string& key) {
  if (label.size() < 3 || label.front() != '[' || label[1] == '[' || label.back() != ']') return "";
  return "; give it with --set " + label.substr(1, label.size() - 2) + "." + key + "=...";
}

bool is_list(ParamType type) {
  return type == ParamType::integer_list || type == ParamType::real_list || type == ParamType::string_list;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& known) {
  std::string best = closest_match(name, known);
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

// Reads one recipe, collecting every problem instead of stopping at the first.
class RecipeReader {
 public:
  // `problems`: those found already (applying the overrides), reported first.
  RecipeReader(std::string path, toml::table& root, const OverrideOrigins& origins, const Registry& registry,
               std::vector<std::string> problems)
      : path_(std::move(path)), root_(root), origins_(origins), registry_(registry), problems_(std::move(problems)) {}

  void check_top_level() {
    const auto* version = root_.get("schema_version");
    if (!version) {
      problem(path_ + ":1:1: missing schema_version; add `schema_version = " + std::to_string(kRecipeSchemaVersion) +
              "` at the top");
    } else if (auto v = version->value_exact<std::int64_t>(); !v || *v != kRecipeSchemaVersion) {
      problem(at(*version) + "schema_version must be " + std::to_string(kRecipeSchemaVersion) + " for orchestrate " +
              orchestrate::version());
    }
    for (const auto& [key, node] : root_) {
      const std::string name(key.str());
      if (name == "schema_version" || name == kSweepTable) continue;  // [sweep]: `orchestrate sweep` reads it
      if (!find_table(name)) {
        problem(at(node, key.source()) + "unknown table [" + name + "]" + did_you_mean(name, table_names()) +
                " (known: " + join(table_names()) + ")");
      } else if (!find_table(name)->is_array && !node.is_table()) {
        problem(at(node) + "'" + name + "' must be a table ([" + name + "]), got " + toml_type_name(node));
      }
    }
  }

  TableValues table(const TableSpec& spec) {
    if (spec.is_array) {
      TableValues entries;
      entries.lists[spec.name] = resolve_list(spec, &root_, "");
      return entries;
    }
    const std::size_t before = problems_.size();
    TableValues values = resolve(spec, root_[spec.name].as_table(), spec.name, "[" + spec.name + "]");
    // The recipe's word on its data ([data] expects) goes with every problem there.
    if (values.core.has("expects") && !values.core.string("expects").empty())
      for (std::size_t i = before; i < problems_.size(); ++i)
        problems_[i] += " (this recipe expects " + values.core.string("expects") + ")";
    return values;
  }

  // The rules a gradient compressor declares about the rest of the recipe.
  // Only judged on a recipe whose tables are otherwise fine.
  // The checks across tables, on the typed settings, each problem at the
  // place of the table it names. Only once every table is valid: they read
  // the components' rules from the registry.
  void check_across_tables(const Settings& settings) {
    if (!problems_.empty()) return;
    for (const auto& check : cross_table_checks())
      for (const auto& why : check.problems(settings, registry_))
        problem(at_table(root_[check.table].as_table()) + why);
  }

  // The components' own rules over the rest of the recipe (RecipeRule),
  // each problem at its component's table; only once all else is valid.
  void check_recipe_rules(const Recipe& recipe, const Settings& settings) {
    if (!problems_.empty()) return;
    const ResolvedRecipeView view(recipe, settings);
    for (const auto& spec : recipe_tables()) {
      const auto values = recipe.tables.find(spec.name);
      if (values == recipe.tables.end()) continue;
      const toml::node* node = root_.get(spec.name);
      if (spec.is_array) {
        const auto* array = node ? node->as_array() : nullptr;
        const auto& entries = values->second.list(spec.name);
        for (std::size_t i = 0; i < entries.size(); ++i)
          apply_recipe_rules(*spec.kind, entries[i], array && i < array->size() ? at((*array)[i]) : path_ + ": ",
                             "[[" + spec.name + "]] entry " + std::to_string(i), view);
        continue;
      }
      if (spec.kind)
        apply_recipe_rules(*spec.kind, values->second, at_table(node ? node->as_table() : nullptr),
                           "[" + spec.name + "]", view);
      for (const auto& list : spec.lists) {
        if (!list.kind) continue;
        const toml::node* list_node = node && node->as_table() ? node->as_table()->get(list.name) : nullptr;
        const auto* array = list_node ? list_node->as_array() : nullptr;
        const auto& entries = values->second.list(list.name);
        for (std::size_t i = 0; i < entries.size(); ++i)
          apply_recipe_rules(*list.kind, entries[i], array && i < array->size() ? at((*array)[i]) : path_ + ": ",
                             "[[" + spec.name + "." + list.name + "]] entry " + std::to_string(i), view);
      }
    }
  }

  void throw_if_problems() const {
    if (problems_.empty()) return;
    std::string message;
    for (const auto& p : problems_) message += (message.empty() ? "" : "\n") + p;
    throw RecipeError(message);
  }

 private:
  // Where a node is: its file:line:column, or the --set that wrote it.
  std::string at(const toml::node& node, const toml::source_region& region) const {
    if (auto it = origins_.find(&node); it != origins_.end()) return "--set " + it->second->text + ": ";
    if (!region.begin) return path_ + ": ";
    return path_ + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column) + ": ";
  }
  std::string at(const toml::node& node) const { return at(node, node.source()); }
  std::string at_table(const toml::table* node) const { return node ? at(*node) : path_ + ": "; }

  void problem(std::string text) { problems_.push_back(std::move(text)); }

  void apply_recipe_rules(ComponentKind kind, const TableValues& values, const std::string& where,
                          const std::string& label, const RecipeView& view) {
    if (values.plugin.empty()) return;
    for (const auto& rule : registry_.component(kind, values.plugin).schema.recipe_rules()) {
      std::string why;
      try {
        why = rule(values.component, view);
      } catch (const std::exception& e) {  // a plugin bug: said, not a crash of the reader
        why = "its recipe rule failed: " + exception_reason(e);
      }
      if (!why.empty()) problem(where + label + " " + values.plugin + ": " + why);
    }
  }

  // The component a table names, or "" (a problem is recorded when required).
  std::string plugin_of(const TableSpec& spec, const toml::table* node, const std::string& label) {
    const toml::node* plugin = node ? node->get("plugin") : nullptr;
    if (plugin) {
      if (auto name = plugin->value_exact<std::string>()) {
        try {
          registry_.component(*spec.kind, *name);
          return *name;
        } catch (const PluginError& e) {
          // With plugin files refused, the component may be in one of them
          // (e.what() names them): a plugin failure, not a typo in the recipe.
          if (!registry_.refused().empty()) throw PluginError(at(*plugin) + label + " plugin: " + e.what());
          problem(at(*plugin) + label + " plugin: " + e.what());
          return "";
        }
      }
      problem(at(*plugin) + label + " plugin must be a string naming a " + to_string(*spec.kind));
      return "";
    }
    if (!spec.default_plugin.empty()) return spec.default_plugin;
    std::vector<std::string> known;
    for (const auto* info : registry_.components(*spec.kind)) known.push_back(info->name);
    problem(at_table(node) + label + " needs plugin = \"<" + to_string(*spec.kind) + ">\" (known: " + join(known) +
            ")");
    return "";
  }

  TableValues resolve(const TableSpec& spec, const toml::table* node, const std::string& table_path,
                      const std::string& label) {
    TableValues values;
    const ComponentInfo* component = nullptr;
    if (spec.kind) {
      values.plugin = plugin_of(spec, node, label);
      if (!values.plugin.empty()) component = &registry_.component(*spec.kind, values.plugin);
    }
    std::vector<std::string> known = spec.schema.names();
    if (component)
      for (const auto& name : component->schema.names()) known.push_back(name);
    for (const auto& list : spec.lists) known.push_back(list.name);
    // Without its component the table's keys cannot be judged; the plugin problem is reported.
    if (node && !(spec.kind && values.plugin.empty())) {
      // A TOML table iterates in key order (k0, k1, k10, k100, ...); the
      // unknown keys are reported in the order of the file, --set ones first.
      std::vector<std::pair<std::pair<toml::source_index, toml::source_index>, std::string>> unknown;
      for (const auto& [key, value] : *node) {
        const std::string name(key.str());
        if ((spec.kind && name == "plugin") || spec.schema.find(name) || (component && component->schema.find(name)))
          continue;
        bool is_list = false;
        for (const auto& list : spec.lists) is_list = is_list || list.name == name;
        if (is_list) continue;
        const std::string owner = component ? " for " + std::string(to_string(*spec.kind)) + " '" + values.plugin + "'" : "";
        const auto& where = key.source().begin;
        unknown.push_back({{where.line, where.column},
                           at(value, key.source()) + label + " unknown key '" + name + "'" + owner +
                               did_you_mean(name, known) + " (known: " + (known.empty() ? "none" : join(known)) + ")"});
      }
      std::stable_sort(unknown.begin(), unknown.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [position, text] : unknown) problem(std::move(text));
    }
    const std::size_t before = problems_.size();
    values.core = resolve_keys(spec.schema, node, label, label);
    if (component)
      values.component = resolve_keys(component->schema, node, label,
                                      std::string(to_string(*spec.kind)) + " '" + values.plugin + "'");
    if (problems_.size() == before) {  // cross-key rules only see values that passed their own checks
      for (const auto& why : spec.schema.broken_rules(values.core)) problem(at_table(node) + label + " " + why);
      if (component)
        for (const auto& why : component->schema.broken_rules(values.component))
          problem(at_table(node) + label + " " + values.plugin + ": " + why);
    }
    for (const auto& list : spec.lists) values.lists[list.name] = resolve_list(list, node, table_path);
    return values;
  }

  std::vector<TableValues> resolve_list(const TableSpec& spec, const toml::table* parent, const std::string& parent_path) {
    std::vector<TableValues> out;
    const toml::node* node = parent ? parent->get(spec.name) : nullptr;
    if (!node) return out;
    const std::string path = parent_path.empty() ? spec.name : parent_path + "." + spec.name;
    const auto* array = node->as_array();
    if (!array) {
      problem(at(*node) + "'" + path + "' must be an array of tables ([[" + path + "]]), got " + toml_type_name(*node));
      return out;
    }
    for (std::size_t i = 0; i < array->size(); ++i) {
      const auto* entry = (*array)[i].as_table();
      const std::string label = "[[" + path + "]] entry " + std::to_string(i) + "";
      if (!entry) {
        problem(at((*array)[i]) + label + " must be a table, got " + toml_type_name((*array)[i]));
        continue;
      }
      out.push_back(resolve(spec, entry, path + "." + std::to_string(i), label));
    }
    if (spec.entries_rule && out.size() == array->size())
      for (const auto& [index, why] : spec.entries_rule(out, registry_))
        problem(at((*array)[index]) + "[[" + path + "]] entry " + std::to_string(index) + ": " + why);
    return out;
  }

  Params resolve_keys(const ParamSchema& schema, const toml::table* node, const std::string& label,
                      const std::string& owner) {
    Params params;
    std::vector<std::string> missing;
    for (const auto& spec : schema.specs()) {
      const toml::node* value_node = node ? node->get(spec.name) : nullptr;
      if (!value_node) {
        if (spec.default_value) {
          if (const std::string why = spec.path_problem(*spec.default_value); !why.empty())
            problem(at_table(node) + label + " " + spec.name + " (its default): " + why + ": " + spec.doc +
                    set_hint(label, spec.name));
          params.set(spec.name, *spec.default_value);
        } else {
          missing.push_back(spec.name);
        }
        continue;
      }
      std::string why;
      auto value = value_from_toml(spec, *value_node, why);
      // An override's bare text is what the user meant where a string is declared (--set run.name=123).
      if (!value && spec.type == ParamType::string)
        if (auto it = origins_.find(value_node); it != origins_.end()) {
          value = ParamValue(it->second->value);
          why.clear();
        }
      if (!value && value_node->is_string())
        if (auto it = origins_.find(value_node); it != origins_.end()) {  // say what was typed
          const std::string& typed = it->second->value;
          const bool quoted = typed.starts_with('"') || typed.starts_with('\'');  // a sweep's TOML text
          why = why.substr(0, why.rfind("got ")) + (quoted ? "got the string " + typed : "got '" + typed + "'");
        }
      // A list key given one value on the command line: the brackets it needs, quoted for the shell.
      if (!value && !value_node->is_array() && is_list(spec.type))
        if (auto it = origins_.find(value_node); it != origins_.end()) {
          const Override& typed = *it->second;
          const std::string key = typed.text.substr(0, typed.text.find('='));
          const bool bare_word = spec.type == ParamType::string_list && !typed.value.starts_with('"');
          why += "; a list takes brackets: --set '" + key + "=[" + (bare_word ? "\"" + typed.value + "\"" : typed.value) +
                 "]'";
        }
      if (value && why.empty()) why = spec.check(*value);
      if (!why.empty()) {
        problem(at(*value_node) + label + " " + spec.name + ": " + why);
        continue;
      }
      // Data that is not there: here, with the key's place, before a run is
      // recorded, whatever the dataset (one had exited 1 with no place).
      if (const std::string missing_data = spec.path_problem(*value); !missing_data.empty()) {
        problem(at(*value_node) + label + " " + spec.name + ": " + missing_data + ": " + spec.doc +
                set_hint(label, spec.name));
        continue;
      }
      params.set(spec.name, *value);
    }
    if (!missing.empty())
      problem(at_table(node) + label + " missing required key" + (missing.size() > 1 ? "s " : " ") + join(missing) +
              " for " + owner);
    return params;
  }

  std::string path_;
  toml::table& root_;
  const OverrideOrigins& origins_;
  const Registry& registry_;
  std::vector<std::string> problems_;
};

toml::table parse_recipe_file(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw RecipeError(path + ": recipe file not found (give the path to a .toml recipe, e.g. recipes/fashion_mnist.toml, or the "
                      "name of a shipped one: orchestrate recipes lists them)");
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw RecipeError(path + ": recipe file cannot be read (check its permissions)");
  const std::string recipe_text = text.str();
  check_toml_text(recipe_text, path);  // before toml++ builds (and recursively destroys) the tree
  try {
    return parse_toml(recipe_text, path);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw RecipeError(path + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column) +
                      ": TOML syntax error: " + std::string(e.description()));
  }
}

// What a component table of `path` (its plugin key's table) is: its kind
// and the keys the core reads there, or null for no component table.
const TableSpec* component_spec_at(const std::vector<std::string>& table_path) {
  const TableSpec* top = find_table(table_path.front());
  if (!top) return nullptr;
  if (table_path.size() == 1) return top->kind && !top->is_array ? top : nullptr;
  if (table_path.size() == 2) return top->is_array ? top : nullptr;  // hooks.0
  if (table_path.size() == 3)
    for (const auto& list : top->lists)
      if (list.name == table_path[1] && list.kind) return &list;  // optimizer.wrappers.0
  return nullptr;
}

// `--set TABLE.plugin=other` swaps a component: the keys the file gave the
// old one that the new one does not know would each be an error, so they
// are dropped, and one note names them. Keys given by --set stay (a typo
// there is still reported).
std::vector<std::string> drop_keys_of_swapped_components(toml::table& root,
                                                         const std::map<const Override*, std::string>& before,
                                                         const OverrideOrigins& origins, const Registry& registry) {
  std::vector<std::string> notes;
  for (const auto& [o, old_plugin] : before) {
    const std::vector<std::string> table_path(o->path.begin(), o->path.end() - 1);
    toml::table* table = table_at_path(root, o->path, table_path.size());
    const TableSpec* spec = component_spec_at(table_path);
    if (!table || !spec) continue;
    const auto* plugin_node = table->get("plugin");
    const auto new_plugin = plugin_node ? plugin_node->value<std::string>() : std::nullopt;
    if (!new_plugin || *new_plugin == old_plugin) continue;
    const ComponentInfo* component = nullptr;
    for (const auto* info : registry.components(*spec->kind))
      if (info->name == *new_plugin) component = info;
    if (!component) continue;  // the reader names the unknown component
    std::vector<std::string> dropped;
    for (const auto& [key, value] : *table) {
      const std::string name(key.str());
      bool is_list = false;
      for (const auto& list : spec->lists) is_list = is_list || list.name == name;
      if (name == "plugin" || is_list || spec->schema.find(name) || component->schema.find(name) ||
          origins.count(&value))
        continue;
      dropped.push_back(name);
    }
    for (const auto& name : dropped) table->erase(name);
    if (dropped.empty()) continue;
    std::string names;
    for (const auto& name : dropped) names += (names.empty() ? "" : ", ") + name;
    std::string label;
    for (const auto& segment : table_path) label += (label.empty() ? "" : ".") + segment;
    notes.push_back("--set " + o->text + ": dropped " + label + "'s " + names + " (" + old_plugin + "'s keys, which " +
                    *new_plugin + " does not take)");
  }
  return notes;
}

}  // namespace

Recipe load_recipe(const std::string& path, const std::vector<Override>& overrides, const Registry& registry,
                   const RecipeReshape& reshape) {
  toml::table root = parse_recipe_file(path);
  // Each --set of a component's plugin, and the plugin the file had there.
  std::map<const Override*, std::string> plugin_before;
  for (const auto& o : overrides)
    if (o.path.size() >= 2 && o.path.back() == "plugin")
      if (toml::table* table = table_at_path(root, o.path, o.path.size() - 1))
        if (const auto* plugin = table->get("plugin"))
          if (const auto name = plugin->value<std::string>()) plugin_before[&o] = *name;
  OverrideOrigins origins;
  std::vector<std::string> override_problems;
  apply_overrides(root, overrides, origins, override_problems);
  std::vector<std::string> notes = drop_keys_of_swapped_components(root, plugin_before, origins, registry);
  if (reshape) reshape(root);
  RecipeReader reader(path, root, origins, registry, std::move(override_problems));
  reader.check_top_level();
  Recipe recipe;
  recipe.path = path;
  for (const auto& spec : recipe_tables()) recipe.tables[spec.name] = reader.table(spec);
  reader.throw_if_problems();
  auto settings = std::make_shared<const Settings>(read_settings(recipe, registry));
  reader.check_across_tables(*settings);
  reader.check_recipe_rules(recipe, *settings);
  reader.throw_if_problems();
  recipe.settings = std::move(settings);
  recipe.notes = std::move(notes);
  return recipe;
}

}  // namespace orchestrate
