#include "orchestrate/registry.h"

#include <algorithm>

#include "orchestrate/duplicate_component.h"

namespace orchestrate {

const char* to_string(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::dataset: return "dataset";
    case ComponentKind::model: return "model";
    case ComponentKind::optimizer: return "optimizer";
    case ComponentKind::optimizer_wrapper: return "optimizer_wrapper";
    case ComponentKind::lr_schedule: return "lr_schedule";
    case ComponentKind::gradient_compression: return "gradient_compression";
    case ComponentKind::hook: return "hook";
    case ComponentKind::preprocessing: return "preprocessing";
  }
  return "?";
}

std::vector<ComponentKind> all_component_kinds() {
  return {ComponentKind::dataset, ComponentKind::preprocessing, ComponentKind::model, ComponentKind::optimizer, ComponentKind::optimizer_wrapper,
          ComponentKind::lr_schedule, ComponentKind::gradient_compression, ComponentKind::hook};
}

namespace {
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "(none)" : out;
}

// "an optimizer", "a model".
std::string with_article(ComponentKind kind) {
  const std::string name = to_string(kind);
  return (std::string_view("aeiou").find(name[0]) != std::string_view::npos ? "an " : "a ") + name;
}
}  // namespace

void throw_unknown_component(ComponentKind kind, const std::string& name, const std::vector<std::string>& known,
                             const std::vector<RefusedPlugin>& refused) {
  std::string message = std::string("unknown ") + to_string(kind) + " '" + name + "'";
  const std::string best = closest_match(name, known);
  if (!best.empty()) message += "; did you mean '" + best + "'?";
  message += " (known: " + join(known) + ")";
  // Not a typo of a known one: most often a plugin of the user's own that was not on the path.
  if (best.empty() && refused.empty())
    message += "; a plugin of your own: give the folder of its liborchestrate_*.so with --plugin-path";
  // Which file would have had it cannot be known, so every refused one is named.
  for (std::size_t i = 0; i < refused.size(); ++i)
    message += (i == 0 ? "; it may be in a plugin file that could not be loaded: " : "; also: ") + refused[i].message;
  throw PluginError(message);
}

void throw_duplicate_component(const ComponentInfo& existing, const std::string& plugin) {
  throw DuplicateComponentError(existing.kind, existing.name, existing.plugin, plugin);
}

Registry::Registry()
    : datasets_(ComponentKind::dataset, &loading_),
      models_(ComponentKind::model, &loading_),
      optimizers_(ComponentKind::optimizer, &loading_),
      optimizer_wrappers_(ComponentKind::optimizer_wrapper, &loading_),
      lr_schedules_(ComponentKind::lr_schedule, &loading_),
      gradient_compressors_(ComponentKind::gradient_compression, &loading_),
      hooks_(ComponentKind::hook, &loading_),
      preprocessing_(ComponentKind::preprocessing, &loading_) {}

Registry::~Registry() = default;

std::vector<const ComponentInfo*> Registry::components(ComponentKind kind) const {
  switch (kind) {
    case ComponentKind::dataset: return datasets_.infos();
    case ComponentKind::model: return models_.infos();
    case ComponentKind::optimizer: return optimizers_.infos();
    case ComponentKind::optimizer_wrapper: return optimizer_wrappers_.infos();
    case ComponentKind::lr_schedule: return lr_schedules_.infos();
    case ComponentKind::gradient_compression: return gradient_compressors_.infos();
    case ComponentKind::hook: return hooks_.infos();
    case ComponentKind::preprocessing: return preprocessing_.infos();
  }
  return {};
}

void Registry::add_clash(ComponentKind kind, const std::string& name, std::string message) {
  clashes_.emplace(std::pair{kind, name}, std::move(message));
}

const ComponentInfo& Registry::component(ComponentKind kind, const std::string& name) const {
  if (const auto clash = clashes_.find({kind, name}); clash != clashes_.end()) throw PluginError(clash->second);
  std::vector<std::string> known;
  for (const auto* info : components(kind)) {
    if (info->name == name) return *info;
    known.push_back(info->name);
  }
  // The name may be right and the kind wrong (LARS is an optimizer_wrapper):
  // then that is the answer, unless this kind has a near name ([model]
  // plugin = "resnet" means resnet_v1, though "resnet" is a preprocessing).
  for (const ComponentKind other : all_component_kinds()) {
    if (other == kind) continue;
    for (const auto* info : components(other)) {
      if (info->name != name) continue;
      const std::string describe = "(orchestrate describe " + std::string(to_string(other)) + " " + name + ")";
      if (closest_match(name, known).empty())
        throw PluginError(std::string("unknown ") + to_string(kind) + " '" + name + "': '" + name + "' is " +
                          with_article(other) + ", not " + with_article(kind) + " " + describe);
      try {
        throw_unknown_component(kind, name, known, loading_.refused);
      } catch (const PluginError& e) {
        throw PluginError(std::string(e.what()) + "; '" + name + "' is " + with_article(other) + " " + describe);
      }
    }
  }
  throw_unknown_component(kind, name, known, loading_.refused);
}

void Registry::begin_plugin(const LoadedPlugin& plugin, std::shared_ptr<void> library) {
  if (library) libraries_.push_back(std::move(library));
  plugins_.push_back(plugin);
  loading_.current_plugin = plugin.name;
}

void Registry::end_plugin() { loading_.current_plugin.clear(); }

}  // namespace orchestrate
