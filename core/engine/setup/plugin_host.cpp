#include "plugin_host.h"

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "orchestrate/duplicate_component.h"
#include "orchestrate/plugin.h"
#include "plugin_file_check.h"

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

// The host's own build identity, compared with what each plugin reports.
constexpr const char* kHostTorchVersion = ORCHESTRATE_TORCH_VERSION;
constexpr int kHostCxx11Abi = _GLIBCXX_USE_CXX11_ABI;

void check_descriptor(const PluginDescriptor& d, const std::string& path) {
  if (d.magic != kPluginMagic)
    throw PluginError(path + ": not an orchestrate plugin (bad descriptor magic); remove it from the plugin path");
  if (d.api_version != kPluginApiVersion)
    throw PluginError(path + ": plugin API version " + std::to_string(d.api_version) + ", but this orchestrate needs " +
                      std::to_string(kPluginApiVersion) + "; rebuild the plugin against orchestrate " + version());
  const std::string name = d.name ? d.name : "?";
  if (std::string(d.torch_version ? d.torch_version : "") != kHostTorchVersion)
    throw PluginError(path + ": plugin '" + name + "' was built with LibTorch " + (d.torch_version ? d.torch_version : "?") +
                      ", this orchestrate uses " + kHostTorchVersion + "; rebuild the plugin");
  if (d.cxx11_abi != kHostCxx11Abi)
    throw PluginError(path + ": plugin '" + name + "' uses _GLIBCXX_USE_CXX11_ABI=" + std::to_string(d.cxx11_abi) +
                      ", this orchestrate uses " + std::to_string(kHostCxx11Abi) + "; rebuild the plugin");
  if (!d.register_components) throw PluginError(path + ": plugin '" + name + "' has no registration function");
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

std::vector<std::string> plugin_search_path(const std::string& command_line_path) {
  std::vector<std::string> dirs = split_path_list(command_line_path);
  if (const char* env = std::getenv("ORCHESTRATE_PLUGIN_PATH")) {
    for (auto& dir : split_path_list(env)) dirs.push_back(dir);
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
};

// Throws PluginError for a file that is refused; the registry is untouched.
OpenedPlugin open_plugin(const std::string& path) {
  if (!fs::exists(path)) throw PluginError(path + ": plugin library not found");
  // dlopen maps a damaged file as it stands and crashes on it (SIGSEGV,
  // SIGBUS) before it could report anything, so the headers are checked first.
  if (const std::string problem = plugin_file_problem(fs::path(path)); !problem.empty())
    throw PluginError(path + ": cannot be loaded safely: " + problem +
                      "; rebuild the plugin or remove it from the plugin path");
  auto library = std::make_shared<boost::dll::shared_library>();
  boost::dll::fs::error_code ec;
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
  return {library, descriptor};
}

std::string library_of(const Registry& registry, const std::string& plugin) {
  for (const auto& loaded : registry.plugins())
    if (loaded.name == plugin) return loaded.library_path;
  return "?";
}

void register_plugin(Registry& registry, const std::string& path, const OpenedPlugin& opened) {
  const PluginDescriptor& d = *opened.descriptor;
  LoadedPlugin loaded{d.name, d.version ? d.version : "", path, d.torch_version, d.compiler ? d.compiler : ""};
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

std::vector<RefusedPlugin> load_plugins(Registry& registry, const std::vector<std::string>& directories) {
  std::vector<RefusedPlugin> refused;
  std::set<std::string> loaded_names;
  for (const auto& dir : directories) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_regular_file() && is_plugin_file(entry.path())) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      // A refused file keeps its name: a later directory's copy of the
      // plugin is not silently used in place of the one the user put first.
      if (!loaded_names.insert(plugin_name_of(file.string())).second) continue;
      OpenedPlugin opened;
      try {
        opened = open_plugin(file.string());
      } catch (const PluginError& e) {
        refused.push_back({file.string(), e.what()});
        continue;
      }
      register_plugin(registry, file.string(), opened);
    }
  }
  set_refused_plugins(refused);
  return refused;
}

}  // namespace orchestrate
