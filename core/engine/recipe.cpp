#include "recipe.h"

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "core_tables.h"
#include "orchestrate/error.h"
#include "param_conversion.h"

namespace orchestrate {

std::vector<Override> parse_overrides(const std::vector<std::string>& arguments) {
  std::vector<Override> out;
  for (const auto& argument : arguments) {
    const auto eq = argument.find('=');
    const auto dot = argument.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 || dot + 1 == eq)
      throw UsageError("--set " + argument + ": expected table.key=value, e.g. --set optimizer.lr=0.01");
    out.push_back({argument.substr(0, dot), argument.substr(dot + 1, eq - dot - 1), argument.substr(eq + 1)});
  }
  return out;
}

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& known) {
  std::string best = closest_match(name, known);
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

// Reads one recipe, collecting every problem instead of stopping at the first.
class RecipeReader {
 public:
  RecipeReader(std::string path, toml::table root, const std::vector<Override>& overrides)
      : path_(std::move(path)), root_(std::move(root)), overrides_(overrides) {}

  void check_top_level() {
    const auto* version = root_.get("schema_version");
    if (!version) {
      problem(path_ + ":1:1: missing schema_version; add `schema_version = " + std::to_string(kRecipeSchemaVersion) +
              "` at the top");
    } else if (auto v = version->value_exact<std::int64_t>(); !v || *v != kRecipeSchemaVersion) {
      problem(at(*version) + "schema_version must be " + std::to_string(kRecipeSchemaVersion) +
              " for this orchestrate (" + version_text() + ")");
    }
    for (const auto& [key, node] : root_) {
      const std::string name(key.str());
      if (name == "schema_version") continue;
      if (!is_known_table(name)) {
        problem(at(key.source()) + "unknown table [" + name + "]" + did_you_mean(name, known_tables()) +
                " (known: " + join(known_tables()) + ")");
      } else if (!node.is_table()) {
        problem(at(node) + "'" + name + "' must be a table ([" + name + "]), got " + toml_type_name(node));
      }
    }
    for (const auto& o : overrides_)
      if (!is_known_table(o.table))
        problem("--set " + o.text() + ": unknown table [" + o.table + "]" + did_you_mean(o.table, known_tables()) +
                " (known: " + join(known_tables()) + ")");
  }

  Params core_table(const std::string& table, const ParamSchema& schema) {
    return resolve(table, schema, "[" + table + "]", {});
  }

  ComponentChoice component_table(const ComponentTable& spec, const Registry& registry) {
    const std::string table = spec.table;
    ComponentChoice choice;
    std::string where = path_ + ": ";
    if (const auto* o = find_override(table, "plugin")) {
      choice.plugin = o->value;
      where = "--set " + o->text() + ": ";
    } else if (const auto* node = table_node(table) ? table_node(table)->get("plugin") : nullptr) {
      where = at(*node);
      if (auto name = node->value_exact<std::string>()) choice.plugin = *name;
      else problem(where + "[" + table + "] plugin must be a string naming a " + to_string(spec.kind));
    } else if (spec.default_plugin) {
      choice.plugin = spec.default_plugin;
    } else {
      std::vector<std::string> known;
      for (const auto* info : registry.components(spec.kind)) known.push_back(info->name);
      problem((table_node(table) ? at(*table_node(table)) : path_ + ": ") + "[" + table +
              "] needs plugin = \"<" + to_string(spec.kind) + ">\" (known: " + join(known) + ")");
    }
    if (choice.plugin.empty()) return choice;
    const ComponentInfo* info = nullptr;
    try {
      info = &registry.component(spec.kind, choice.plugin);
    } catch (const PluginError& e) {
      problem(where + "[" + table + "] plugin: " + e.what());
      return choice;
    }
    choice.params = resolve(table, info->schema, std::string(to_string(spec.kind)) + " '" + choice.plugin + "'",
                            {"plugin"});
    return choice;
  }

  void throw_if_problems() const {
    if (problems_.empty()) return;
    std::string message;
    for (const auto& p : problems_) message += (message.empty() ? "" : "\n") + p;
    throw RecipeError(message);
  }

 private:
  static bool is_known_table(const std::string& name) {
    for (const auto& t : known_tables())
      if (t == name) return true;
    return false;
  }

  static std::string version_text() { return std::string("orchestrate ") + version(); }

  std::string at(const toml::source_region& region) const {
    return path_ + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column) + ": ";
  }
  std::string at(const toml::node& node) const { return at(node.source()); }

  void problem(std::string text) { problems_.push_back(std::move(text)); }

  const toml::table* table_node(const std::string& name) const { return root_[name].as_table(); }

  const Override* find_override(const std::string& table, const std::string& key) const {
    const Override* found = nullptr;
    for (const auto& o : overrides_)
      if (o.table == table && o.key == key) found = &o;  // the last --set wins, as on most CLIs
    return found;
  }

  Params resolve(const std::string& table, const ParamSchema& schema, const std::string& owner,
                 const std::set<std::string>& reserved) {
    const toml::table* node = table_node(table);
    const std::vector<std::string> known = schema.names();
    const std::string known_text = known.empty() ? "it takes no parameters" : "known: " + join(known);
    if (node) {
      for (const auto& [key, value] : *node) {
        const std::string name(key.str());
        if (reserved.count(name) || schema.find(name)) continue;
        problem(at(key.source()) + "[" + table + "] unknown key '" + name + "' for " + owner + did_you_mean(name, known) +
                " (" + known_text + ")");
      }
    }
    for (const auto& o : overrides_) {
      if (o.table != table || reserved.count(o.key) || schema.find(o.key)) continue;
      problem("--set " + o.text() + ": unknown key '" + o.key + "' for " + owner + did_you_mean(o.key, known) + " (" +
              known_text + ")");
    }

    Params params;
    std::vector<std::string> missing;
    for (const auto& spec : schema.specs()) {
      std::optional<ParamValue> value;
      std::string why, where;
      if (const auto* o = find_override(table, spec.name)) {
        where = "--set " + o->text() + ": ";
        value = value_from_text(spec, o->value, why);
      } else if (const auto* v = node ? node->get(spec.name) : nullptr) {
        where = at(*v);
        value = value_from_toml(spec, *v, why);
      } else if (spec.default_value) {
        value = spec.default_value;
      } else {
        missing.push_back(spec.name);
        continue;
      }
      if (value && why.empty()) why = spec.check(*value);
      if (!why.empty()) {
        problem(where + "[" + table + "] " + spec.name + ": " + why);
        continue;
      }
      params.set(spec.name, *value);
    }
    if (!missing.empty())
      problem((node ? at(*node) : path_ + ": ") + "[" + table + "] missing required key" +
              (missing.size() > 1 ? "s " : " ") + join(missing) + " for " + owner);
    return params;
  }

  std::string path_;
  toml::table root_;
  const std::vector<Override>& overrides_;
  std::vector<std::string> problems_;
};

toml::table parse_recipe_file(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw RecipeError(path + ": recipe file not found (give the path to a .toml recipe, e.g. recipes/fashion_mnist.toml)");
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw RecipeError(path + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column) +
                      ": TOML syntax error: " + std::string(e.description()));
  }
}

void insert_params(toml::table& table, const Params& params) {
  for (const auto& [key, value] : params.values()) insert_toml_value(table, key, value);
}

}  // namespace

Recipe load_recipe(const std::string& path, const std::vector<Override>& overrides, const Registry& registry) {
  RecipeReader reader(path, parse_recipe_file(path), overrides);
  reader.check_top_level();
  Recipe recipe;
  recipe.path = path;
  recipe.run = reader.core_table("run", run_table_schema());
  recipe.eval = reader.core_table("eval", eval_table_schema());
  recipe.log = reader.core_table("log", log_table_schema());
  std::map<std::string, ComponentChoice*> slots{{"data", &recipe.data},
                                                {"model", &recipe.model},
                                                {"optimizer", &recipe.optimizer},
                                                {"schedule", &recipe.schedule}};
  for (const auto& spec : component_tables()) *slots.at(spec.table) = reader.component_table(spec, registry);
  reader.throw_if_problems();
  return recipe;
}

namespace {
// Tables in the order a person reads a recipe.
std::vector<std::pair<std::string, const Params*>> tables_of(const Recipe& r) {
  return {{"run", &r.run},       {"data", &r.data.params},         {"model", &r.model.params},
          {"optimizer", &r.optimizer.params}, {"schedule", &r.schedule.params}, {"eval", &r.eval},
          {"log", &r.log}};
}
const std::string* plugin_of(const Recipe& r, const std::string& table) {
  if (table == "data") return &r.data.plugin;
  if (table == "model") return &r.model.plugin;
  if (table == "optimizer") return &r.optimizer.plugin;
  if (table == "schedule") return &r.schedule.plugin;
  return nullptr;
}
}  // namespace

std::string Recipe::resolved_toml() const {
  // Written table by table so the output keeps the reading order above
  // (toml++ would sort the tables by name).
  std::ostringstream out;
  out << "schema_version = " << kRecipeSchemaVersion << "\n";
  for (const auto& [name, params] : tables_of(*this)) {
    toml::table table;
    if (const auto* plugin = plugin_of(*this, name)) table.insert_or_assign("plugin", *plugin);
    insert_params(table, *params);
    out << "\n[" << name << "]\n"
        << toml::toml_formatter(table, toml::toml_formatter::default_flags | toml::format_flags::relaxed_float_precision)
        << "\n";
  }
  return out.str();
}

std::vector<std::pair<std::string, std::string>> Recipe::flattened() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, params] : tables_of(*this)) {
    if (const auto* plugin = plugin_of(*this, name)) out.emplace_back(name + ".plugin", *plugin);
    for (const auto& [key, value] : params->values()) {
      std::string text = to_display(value);
      if (std::holds_alternative<std::string>(value)) text = std::get<std::string>(value);
      out.emplace_back(name + "." + key, text);
    }
  }
  return out;
}

std::string Recipe::run_name() const {
  const std::string& name = run.string("name");
  return name.empty() ? std::filesystem::path(path).stem().string() : name;
}

}  // namespace orchestrate
