#include "engine/setup/plugin_host.h"

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <map>
#include <set>

#include "crash_report/crash_handler.h"
#include "crash_report/plugin_call.h"
#include "orchestrate/duplicate_component.h"
#include "orchestrate/error.h"
#include "orchestrate/plugin.h"
#include "plugin_file/plugin_build_note.h"
#include "plugin_file/plugin_file_check.h"

namespace orchestrate {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool is_plugin_file(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.rfind("liborchestrate_", 0) == 0 && path.extension() == ".so";
}

// The host's own build, compared with what each plugin says of its own.
PluginBuild host_build() {
  return {kPluginApiVersion, _GLIBCXX_USE_CXX11_ABI, ORCHESTRATE_TORCH_VERSION, ORCHESTRATE_COMPILER_ID};
}

std::string describe_build(const PluginBuild& build) {
  return "plugin API " + std::to_string(build.api_version) + ", LibTorch " + build.torch_version +
         ", _GLIBCXX_USE_CXX11_ABI=" + std::to_string(build.cxx11_abi) + ", " + build.compiler;
}

// Throws PluginError when `plugin` was built unlike this orchestrate, naming
// what differs and both builds whole. Read from the ELF note before dlopen
// and again from the descriptor after it (a plugin too old to have the note).
void check_build(const PluginBuild& plugin, const std::string& path) {
  const PluginBuild host = host_build();
  std::string differs;
  if (plugin.api_version != host.api_version)
    differs = "plugin API version " + std::to_string(plugin.api_version) + ", but this orchestrate needs " +
              std::to_string(host.api_version);
  else if (plugin.torch_version != host.torch_version)
    differs = "built with LibTorch " + plugin.torch_version + ", but this orchestrate uses " + host.torch_version;
  else if (plugin.cxx11_abi != host.cxx11_abi)
    differs = "built with _GLIBCXX_USE_CXX11_ABI=" + std::to_string(plugin.cxx11_abi) +
              ", but this orchestrate uses _GLIBCXX_USE_CXX11_ABI=" + std::to_string(host.cxx11_abi);
  else
    return;
  throw PluginError(path + ": " + differs + "; rebuild the plugin against orchestrate " + version() +
                    " (the plugin: " + describe_build(plugin) + "; this orchestrate: " + describe_build(host) + ")");
}

void check_descriptor(const PluginDescriptor& d, const std::string& path) {
  if (d.magic != kPluginMagic)
    throw PluginError(path + ": not an orchestrate plugin (bad descriptor magic); remove it from the plugin path");
  check_build({d.api_version, static_cast<std::uint32_t>(d.cxx11_abi), d.torch_version ? d.torch_version : "?",
               d.compiler ? d.compiler : "?"},
              path);
  if (!d.register_components)
    throw PluginError(path + ": plugin '" + std::string(d.name ? d.name : "?") + "' has no registration function");
}

// Names a recipe writes: components and their keys are stable snake_case.
bool snake_case(const std::string& name) {
  if (name.empty() || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

// What a plugin registers, checked before the run could use it: a default
// outside its own range or choices would otherwise reach the component (a
// hook's every_n = 0 divided by zero, exit 136), while the same value set by
// hand is refused. The first problem, or "".
std::string registration_problem(const Registry& registered) {
  std::vector<const ComponentInfo*> infos;
  const auto add = [&](const std::vector<const ComponentInfo*>& some) { infos.insert(infos.end(), some.begin(), some.end()); };
  add(registered.datasets().infos());
  add(registered.preprocessing().infos());
  add(registered.models().infos());
  add(registered.optimizers().infos());
  add(registered.optimizer_wrappers().infos());
  add(registered.lr_schedules().infos());
  add(registered.hooks().infos());
  add(registered.gradient_compressors().infos());
  for (const ComponentInfo* info : infos) {
    const std::string component = std::string(to_string(info->kind)) + " '" + info->name + "'";
    if (!snake_case(info->name))
      return "registers " + component + ", a name that is not snake_case (a-z, 0-9, _; a letter first); rename it";
    if (info->kind == ComponentKind::optimizer && !info->schema.find(ParamRole::learning_rate))
      return "registers " + component + " with no key of role learning_rate (the base lr the schedule scales); "
             "add .with_role(ParamRole::learning_rate) to its real lr key";
    for (const auto& spec : info->schema.specs()) {
      const std::string key = component + " key '" + spec.name + "'";
      if (!snake_case(spec.name)) return "registers " + key + ", a key that is not snake_case; rename it";
      if (!role_fits(spec.role, spec.type))
        return "registers " + key + " of type " + to_string(spec.type) + " with the role " + to_string(spec.role) +
               ", which needs another type; fix the type or the role";
      if (spec.role != ParamRole::none && info->schema.find(spec.role) != &spec)
        return "registers " + key + " with the role " + to_string(spec.role) + ", which '" +
               info->schema.find(spec.role)->name + "' already has; one key per role";
      if (!spec.default_value) continue;
      if (type_of(*spec.default_value) != spec.type)
        return "registers " + key + " of type " + to_string(spec.type) + " with a default of type " +
               to_string(type_of(*spec.default_value)) + "; fix the default";
      if (const std::string why = spec.check(*spec.default_value); !why.empty())
        return "registers " + key + " with the default " + to_display(*spec.default_value) + ", which breaks its own rule (" +
               why + "); fix the default or the rule";
    }
  }
  return "";
}

std::string plugin_name_of(const std::string& path) {
  std::string stem = fs::path(path).stem().string();
  return stem.substr(std::string("liborchestrate_").size());
}

}  // namespace

std::string default_plugin_dir() {
  const fs::path engine_dir = boost::dll::program_location().parent_path().string();
  return (engine_dir / ORCHESTRATE_PLUGINS_FROM_ENGINE).lexically_normal().string();
}

namespace {

// An entry the user gave that is no directory would otherwise be skipped in
// silence, and the error that follows ("unknown hook") would not say why.
// Stored paths are absolute, so a run's plugin list means the same files
// whatever directory it is read from.
std::string checked_directory(const std::string& dir, const std::string& given_by) {
  std::error_code error;
  if (!fs::is_directory(dir, error))
    throw UsageError(given_by + " entry '" + dir + "' is not a directory" +
                     (fs::exists(dir, error) ? "" : " (it does not exist)") +
                     "; give the directory that holds the liborchestrate_*.so plugin files");
  return fs::absolute(dir, error).lexically_normal().string();
}

}  // namespace

std::vector<std::string> plugin_search_path(const std::string& command_line_path) {
  std::vector<std::string> dirs;
  for (const auto& dir : split_path_list(command_line_path)) dirs.push_back(checked_directory(dir, "--plugin-path"));
  if (const char* env = std::getenv("ORCHESTRATE_PLUGIN_PATH")) {
    for (auto& dir : split_path_list(env)) dirs.push_back(checked_directory(dir, "$ORCHESTRATE_PLUGIN_PATH"));
  }
  dirs.push_back(default_plugin_dir());
  return dirs;
}

namespace {

// A library loaded and its descriptor checked; nothing in it has run but
// its static constructors.
struct OpenedPlugin {
  std::shared_ptr<boost::dll::shared_library> library;
  const PluginDescriptor* descriptor = nullptr;
  std::vector<const ComponentInfo*> components;  // what it registers (in `scratch`)
  std::shared_ptr<Registry> scratch;
};

// Throws PluginError for a file that is refused; the registry is untouched.
OpenedPlugin open_plugin(const std::string& path) {
  if (!fs::exists(path)) throw PluginError(path + ": plugin library not found");
  // dlopen maps a damaged file as it stands and crashes on it (SIGSEGV,
  // SIGBUS) before it could report anything, so the headers are checked first.
  if (const std::string problem = plugin_file_problem(fs::path(path)); !problem.empty())
    throw PluginError(path + ": cannot be loaded safely: " + problem +
                      "; rebuild the plugin or remove it from the plugin path");
  // Before dlopen: a plugin built for another C++ ABI fails there on an
  // undefined symbol, which would not say why.
  if (const auto build = plugin_build_note(fs::path(path))) check_build(*build, path);
  auto library = std::make_shared<boost::dll::shared_library>();
  boost::dll::fs::error_code ec;
  // Its static constructors run in dlopen: a crash there names the file.
  const PluginCallSite loading{plugin_name_of(path), "plugin file " + path};
  std::optional<PluginCallScope> in_plugin(std::in_place, loading, "loading");
  // RTLD_NOW: an unresolved symbol is reported here, not as a crash mid-run.
  library->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    const char* why = dlerror();  // Boost keeps only an error code; the loader's text says which symbol or file
    throw PluginError(path + ": cannot load plugin: " + (why ? why : ec.message()));
  }
  if (!library->has(kPluginEntryPoint))
    throw PluginError(path + ": not an orchestrate plugin (no " + kPluginEntryPoint +
                      " entry point); remove it from the plugin path or rebuild it with ORCHESTRATE_PLUGIN()");
  auto entry = library->get<const PluginDescriptor*()>(kPluginEntryPoint);
  const PluginDescriptor* descriptor = entry();
  if (!descriptor) throw PluginError(path + ": plugin returned no descriptor");
  check_descriptor(*descriptor, path);
  in_plugin.emplace(loading, "register_components");
  // Registration only adds components, so it runs once into a scratch
  // registry to check what it adds; a plugin with a problem is refused
  // whole, before anything of it reaches the real registry.
  auto scratch = std::make_shared<Registry>();
  scratch->begin_plugin({descriptor->name, "", path, "", ""}, library);
  try {
    descriptor->register_components(*scratch);
  } catch (const std::exception& e) {
    scratch->end_plugin();
    throw PluginError(path + ": plugin '" + descriptor->name + "' failed to register: " + exception_reason(e));
  }
  scratch->end_plugin();
  if (const std::string problem = registration_problem(*scratch); !problem.empty())
    throw PluginError(path + ": plugin '" + descriptor->name + "' " + problem);
  OpenedPlugin opened{library, descriptor, {}, scratch};
  for (const ComponentKind kind : all_component_kinds())
    for (const ComponentInfo* info : scratch->components(kind)) opened.components.push_back(info);
  return opened;
}

std::optional<std::string> loaded_library(const Registry& registry, const std::string& plugin) {
  for (const auto& loaded : registry.plugins())
    if (loaded.name == plugin) return loaded.library_path;
  return std::nullopt;
}

std::string library_of(const Registry& registry, const std::string& plugin) {
  return loaded_library(registry, plugin).value_or("?");
}

void register_plugin(Registry& registry, const std::string& path, const OpenedPlugin& opened) {
  const PluginDescriptor& d = *opened.descriptor;
  // One file per plugin name: the run record finds a component's library by
  // its plugin's name, and would name the wrong file.
  if (const auto first = loaded_library(registry, d.name))
    throw PluginError(path + ": plugin name '" + d.name + "' is already taken by " + *first +
                      "; rename one of them (ORCHESTRATE_PLUGIN's first argument) if both are wanted");
  LoadedPlugin loaded{d.name, d.version ? d.version : "", path, d.torch_version, d.compiler ? d.compiler : ""};
  note_plugin_code(loaded.name, path);  // loaded for good: a fault in its code names it
  registry.begin_plugin(loaded, opened.library);
  try {
    d.register_components(registry);
  } catch (const DuplicateComponentError& e) {
    registry.end_plugin();
    // The registry names the plugins; the files say which copies to look at.
    throw PluginError(std::string(to_string(e.kind())) + " '" + e.name() + "' is registered twice: by plugin '" +
                      e.first_plugin() + "' (" + library_of(registry, e.first_plugin()) + ") and by plugin '" +
                      e.second_plugin() + "' (" + path + "); remove one of them from the plugin path");
  } catch (const Error&) {
    registry.end_plugin();
    throw;
  } catch (const std::exception& e) {
    registry.end_plugin();
    throw PluginError(path + ": plugin '" + loaded.name + "' failed to register: " + e.what());
  }
  registry.end_plugin();
}

}  // namespace

void load_plugin_library(Registry& registry, const std::string& path) {
  register_plugin(registry, path, open_plugin(path));
}

namespace {

// The components of `opened` that `registry` already has, each marked as a
// clash there; the refusal line, or "" when there is none.
std::string component_clash(Registry& registry, const std::string& path, const OpenedPlugin& opened) {
  std::string message;
  for (const ComponentInfo* info : opened.components) {
    for (const ComponentInfo* existing : registry.components(info->kind)) {
      if (existing->name != info->name) continue;
      const std::string clash = std::string(to_string(info->kind)) + " '" + info->name +
                                "' is registered twice: by plugin '" + existing->plugin + "' (" +
                                library_of(registry, existing->plugin) + ") and by plugin '" + opened.descriptor->name +
                                "' (" + path + ")";
      registry.add_clash(info->kind, info->name,
                         clash + "; remove one of them from the plugin path (" + path + " is not loaded)");
      if (message.empty())
        message = path + ": " + clash + "; this file is not loaded, and a command that uses " +
                  to_string(info->kind) + " '" + info->name + "' stops; remove one of them from the plugin path";
    }
  }
  return message;
}

}  // namespace

std::string ShadowedPlugin::message() const {
  return hidden + " is not loaded: " + used + " has the same plugin name and comes first in the plugin path" +
         " (directories in order, files by name)" + "; rename one of them if both are wanted";
}

PluginScan scan_plugins(Registry& registry, const std::vector<std::string>& directories) {
  PluginScan scan;
  std::map<std::string, std::string> first_file;  // plugin name -> the file that took it
  std::set<std::string> refused_names;            // their refusal already says what happened
  std::set<std::string> scanned;  // a directory named twice (the default one in $ORCHESTRATE_PLUGIN_PATH) once
  for (const auto& dir : directories) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    if (!scanned.insert(fs::weakly_canonical(dir, ec).string()).second) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_regular_file() && is_plugin_file(entry.path())) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      // A refused file keeps its name: a later directory's copy of the
      // plugin is not silently used in place of the one the user put first.
      const auto [taken, first] = first_file.emplace(plugin_name_of(file.string()), file.string());
      if (!first) {
        if (!refused_names.count(taken->first)) scan.shadowed.push_back({taken->second, file.string()});
        continue;
      }
      OpenedPlugin opened;
      try {
        opened = open_plugin(file.string());
      } catch (const PluginError& e) {
        scan.refused.push_back({file.string(), e.what()});
        refused_names.insert(taken->first);
        continue;
      }
      // The name its descriptor gives, which the file name need not match:
      // the first file to take it keeps it (and is what runs record).
      if (const auto first = loaded_library(registry, opened.descriptor->name)) {
        scan.shadowed.push_back({*first, file.string()});
        continue;  // `opened` goes, and the library is unloaded
      }
      // A component name an earlier file registered: this file is refused
      // whole, and the name stops what uses it (Registry::add_clash); the
      // rest of the plugin path loads.
      if (const std::string clash = component_clash(registry, file.string(), opened); !clash.empty()) {
        scan.refused.push_back({file.string(), clash});
        continue;
      }
      register_plugin(registry, file.string(), opened);
    }
  }
  registry.set_refused(scan.refused);
  return scan;
}

std::vector<RefusedPlugin> load_plugins(Registry& registry, const std::vector<std::string>& directories) {
  return scan_plugins(registry, directories).refused;
}

}  // namespace orchestrate
