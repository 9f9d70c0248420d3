#include "plugin_host.h"

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "orchestrate/plugin.h"

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

void load_plugin_library(Registry& registry, const std::string& path) {
  if (!fs::exists(path)) throw PluginError(path + ": plugin library not found");
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

  LoadedPlugin loaded{descriptor->name, descriptor->version ? descriptor->version : "", path, descriptor->torch_version,
                      descriptor->compiler ? descriptor->compiler : ""};
  registry.begin_plugin(loaded, library);
  try {
    descriptor->register_components(registry);
  } catch (const Error&) {
    registry.end_plugin();
    throw;
  } catch (const std::exception& e) {
    registry.end_plugin();
    throw PluginError(path + ": plugin '" + loaded.name + "' failed to register: " + e.what());
  }
  registry.end_plugin();
}

void load_plugins(Registry& registry, const std::vector<std::string>& directories) {
  std::set<std::string> loaded_names;
  for (const auto& dir : directories) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_regular_file() && is_plugin_file(entry.path())) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      if (!loaded_names.insert(plugin_name_of(file.string())).second) continue;
      load_plugin_library(registry, file.string());
    }
  }
}

}  // namespace orchestrate
