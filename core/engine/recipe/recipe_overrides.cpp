#include "engine/recipe/recipe_overrides.h"

#include <charconv>
#include <optional>

#include "limits/nesting_check.h"
#include "orchestrate/error.h"
#include "orchestrate/input_limits.h"

namespace orchestrate {

std::vector<Override> parse_overrides(const std::vector<std::string>& arguments) {
  std::vector<Override> out;
  for (const auto& argument : arguments) {
    const auto eq = argument.find('=');
    Override o;
    o.text = argument;
    if (eq != std::string::npos) {
      const std::string path = argument.substr(0, eq);
      std::size_t start = 0;
      while (true) {
        const auto dot = path.find('.', start);
        o.path.push_back(path.substr(start, dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
      }
      o.value = argument.substr(eq + 1);
    }
    bool empty_segment = false;
    for (const auto& segment : o.path) empty_segment = empty_segment || segment.empty();
    if (eq == std::string::npos || o.path.size() < 2 || empty_segment)
      throw UsageError("--set " + argument +
                       ": expected table.key=value, e.g. --set optimizer.lr=0.01 or --set optimizer.wrappers.0.eta=0.002");
    // The same depth limit as a recipe file's, before any table is made.
    if (o.path.size() > static_cast<std::size_t>(limits::kMaxNesting))
      throw UsageError("--set " + o.path.front() + "." + o.path[1] + "...: the key has " +
                       std::to_string(o.path.size()) + " parts, more than the " + std::to_string(limits::kMaxNesting) +
                       " levels a recipe may nest; name a key as table.key");
    try {
      check_toml_text("value = " + o.value, "--set " + o.path.front() + "." + o.path[1]);
    } catch (const RecipeError& e) {
      throw UsageError(e.what());
    }
    out.push_back(std::move(o));
  }
  return out;
}

namespace {

// The override's value as a TOML node: TOML text if it parses ("0.5",
// "[1, 2]", "true", "\"a b\""), a comma list as an array ("1,2.5"), and
// otherwise the text itself as a string, so `--set data.dir=/data` needs no quotes.
const toml::node& parse_value(const std::string& text, toml::table& holder) {
  const bool is_list = text.find(',') != std::string::npos;
  for (const std::string& candidate : {text, "[" + text + "]"}) {
    if (candidate.front() == '[' && candidate != text && !is_list) break;
    try {
      holder = parse_toml("value = " + candidate, "--set");
      return *holder.get("value");
    } catch (const toml::parse_error&) {
      // not TOML: try the next reading
    }
  }
  holder.insert_or_assign("value", text);
  return *holder.get("value");
}

// Calls visit on node and every node inside it (depth is bounded by the
// nesting limit checked before parsing).
template <class Visit>
void for_each_node(toml::node& node, const Visit& visit) {
  visit(node);
  if (auto* table = node.as_table())
    for (auto& [key, child] : *table) for_each_node(child, visit);
  else if (auto* array = node.as_array())
    for (auto& child : *array) for_each_node(child, visit);
}

std::optional<std::size_t> as_index(const std::string& segment) {
  std::size_t index = 0;
  auto [end, ec] = std::from_chars(segment.data(), segment.data() + segment.size(), index);
  if (ec != std::errc() || end != segment.data() + segment.size()) return std::nullopt;
  return index;
}

}  // namespace

toml::table* table_at_path(toml::table& root, const std::vector<std::string>& path, std::size_t length) {
  toml::node* node = &root;
  for (std::size_t i = 0; node && i < length; ++i) {
    if (auto* table = node->as_table()) {
      node = table->get(path[i]);
    } else if (auto* array = node->as_array()) {
      const auto index = as_index(path[i]);
      node = index && *index < array->size() ? array->get(*index) : nullptr;
    } else {
      return nullptr;
    }
  }
  return node ? node->as_table() : nullptr;
}

void apply_overrides(toml::table& root, const std::vector<Override>& overrides, OverrideOrigins& origins,
                     std::vector<std::string>& problems) {
  for (const auto& o : overrides) {
    toml::table* table = &root;
    std::string walked;
    bool ok = true;
    for (std::size_t i = 0; ok && i + 1 < o.path.size(); ++i) {
      const std::string& segment = o.path[i];
      walked += (walked.empty() ? "" : ".") + segment;
      toml::node* child = table->get(segment);
      // hooks.0.plugin=... where the recipe has no [[hooks]]: a new array of tables.
      if (!child && i + 2 < o.path.size() && as_index(o.path[i + 1]) == std::optional<std::size_t>(0)) {
        table->insert_or_assign(segment, toml::array{});
        child = table->get(segment);
      }
      if (!child) {
        table->insert_or_assign(segment, toml::table{});
        table = table->get(segment)->as_table();
        origins[table] = &o;
        continue;
      }
      if (auto* next = child->as_table()) {
        table = next;
        continue;
      }
      auto* array = child->as_array();
      if (!array) {
        problems.push_back("--set " + o.text + ": '" + walked + "' is not a table, so it has no key '" +
                           o.path[i + 1] + "'");
        ok = false;
        break;
      }
      const auto index = as_index(o.path[i + 1]);
      if (!index || *index > array->size() || (*index < array->size() && !(*array)[*index].is_table())) {
        problems.push_back("--set " + o.text + ": '" + walked + "' is a list of " + std::to_string(array->size()) +
                           " tables; address one by number, 0.." + std::to_string(array->size()) +
                           " (the last appends a new entry)");
        ok = false;
        break;
      }
      if (*index == array->size()) {
        array->push_back(toml::table{});
        origins[array->back().as_table()] = &o;
      }
      table = (*array)[*index].as_table();
      walked += "." + o.path[++i];
      if (i + 1 >= o.path.size()) {
        problems.push_back("--set " + o.text + ": name a key inside '" + walked + "', e.g. " + walked + ".plugin=...");
        ok = false;
      }
    }
    if (!ok) continue;
    const std::string& key = o.path.back();
    // Every node an override writes is blamed on it, and none it replaces
    // stays in the map: a freed node's address may be reused by a later
    // node, which would then be blamed on the wrong --set.
    if (toml::node* old = table->get(key)) for_each_node(*old, [&](toml::node& n) { origins.erase(&n); });
    toml::table holder;
    table->insert_or_assign(key, parse_value(o.value, holder));
    for_each_node(*table->get(key), [&](toml::node& n) { origins[&n] = &o; });
  }
}

}  // namespace orchestrate
