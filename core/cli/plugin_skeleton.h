// Plugin skeletons for `orchestrate new-plugin KIND NAME DIR`: a source file
// with a parameter schema and a working component of KIND, its CMake file
// and a smoke recipe, made from the templates in share/plugin_templates
// (compiled in). No LibTorch: it only writes text.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace orchestrate::cli {

// The kinds there is a template for, sorted: share/plugin_templates/<kind>/.
std::vector<std::string> plugin_skeleton_kinds();

struct SkeletonFile {
  std::string path;  // relative to the skeleton's directory
  std::string text;
};

// The files of a KIND plugin named NAME, placeholders filled in. Throws
// UsageError for an unknown kind (with the known ones and the closest) or a
// name that is not snake_case.
std::vector<SkeletonFile> plugin_skeleton(const std::string& kind, const std::string& name);

// Writes plugin_skeleton(kind, name) into `dir`, which may exist only when
// empty (a UsageError otherwise, before anything is written); returns the
// written paths in order.
std::vector<std::filesystem::path> write_plugin_skeleton(const std::string& kind, const std::string& name,
                                                         const std::filesystem::path& dir);

}  // namespace orchestrate::cli
