// The build a plugin was made by, read from the ELF note ORCHESTRATE_PLUGIN
// embeds (orchestrate/plugin.h), before the library is loaded. The
// descriptor says the same, but reading it needs dlopen, and dlopen of a
// plugin built with the other C++ ABI fails first, on an undefined symbol
// ("_ZN3c10..."), which says nothing about why; the note can be compared
// with the host's build and both named.
//
// Run plugin_file_problem (plugin_file_check.h) first: this reads the
// section headers and note data of a file that check has accepted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace orchestrate {

struct PluginBuild {
  std::uint32_t api_version = 0;
  std::uint32_t cxx11_abi = 0;  // _GLIBCXX_USE_CXX11_ABI
  std::string torch_version;
  std::string compiler;
};

// The note's contents, or nullopt when the file has none (a plugin built
// before the note existed, or no plugin at all) or it is malformed.
std::optional<PluginBuild> plugin_build_note(const std::filesystem::path& path);
std::optional<PluginBuild> plugin_build_note(const std::uint8_t* bytes, std::size_t size);

}  // namespace orchestrate
