#include "cli/plugin_skeleton.h"

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <fstream>
#include <regex>
#include <string_view>
#include <system_error>

#include "orchestrate/error.h"
#include "orchestrate/registry.h"
#include "plugin_templates.h"

namespace orchestrate::cli {

namespace {

namespace fs = std::filesystem;

// Files every kind gets (the CMake file); a kind's own directory adds the rest.
constexpr std::string_view kCommonDirectory = "common";
// A template file named NAME.cpp is written as <name>.cpp.
constexpr std::string_view kNamePlaceholderFile = "NAME";

// Lowercase words of letters and digits joined by single underscores: a
// component key, a C++ identifier and a library file name all at once.
bool is_snake_case(const std::string& name) {
  static const std::regex snake_case("[a-z][a-z0-9]*(_[a-z0-9]+)*");
  return std::regex_match(name, snake_case);
}

// my_hook -> MyHook: the component's class name.
std::string camel_case(const std::string& name) {
  std::string out;
  bool start_of_word = true;
  for (char c : name) {
    if (c == '_') {
      start_of_word = true;
      continue;
    }
    out += start_of_word ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    start_of_word = false;
  }
  return out;
}

std::string replace_all(std::string text, std::string_view from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : ", ") + word;
  return out;
}

// "hook/NAME.cpp" -> {"hook", "NAME.cpp"}.
std::pair<std::string_view, std::string_view> split_template_path(std::string_view path) {
  const auto slash = path.find('/');
  return {path.substr(0, slash), path.substr(slash + 1)};
}

void check_kind(const std::string& kind) {
  const auto kinds = plugin_skeleton_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) return;
  const auto closest = closest_match(kind, kinds);
  throw UsageError("new-plugin: unknown kind '" + kind + "'" +
                   (closest.empty() ? std::string() : " (did you mean " + closest + "?)") + "; kinds: " + join(kinds));
}

void check_name(const std::string& name, const std::string& kind) {
  if (!is_snake_case(name))
    throw UsageError("new-plugin: '" + name +
                     "' is not a snake_case name; use lowercase letters, digits and single underscores, starting "
                     "with a letter (e.g. my_" + kind + ")");
}

void check_directory(const fs::path& dir) {
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status))
    throw UsageError("new-plugin: '" + dir.string() + "' exists and is not a directory; give a new or empty directory");
  const bool empty = fs::is_empty(dir, ec);
  if (ec) throw Error("new-plugin: cannot read directory '" + dir.string() + "': " + ec.message());
  if (!empty)
    throw UsageError("new-plugin: directory '" + dir.string() +
                     "' is not empty; give a new or empty directory, so nothing of yours is overwritten");
}

}  // namespace

std::vector<std::string> plugin_skeleton_kinds() {
  std::vector<std::string> kinds;
  for (const auto& file : kPluginTemplateFiles) {
    const auto directory = std::string(split_template_path(file.path).first);
    if (directory != kCommonDirectory && std::find(kinds.begin(), kinds.end(), directory) == kinds.end())
      kinds.push_back(directory);
  }
  std::sort(kinds.begin(), kinds.end());
  return kinds;
}

std::vector<SkeletonFile> plugin_skeleton(const std::string& kind, const std::string& name) {
  check_kind(kind);
  check_name(name, kind);
  const std::string class_name = camel_case(name);
  std::vector<SkeletonFile> files;
  for (const auto& file : kPluginTemplateFiles) {
    const auto [directory, file_name] = split_template_path(file.path);
    if (directory != kind && directory != kCommonDirectory) continue;
    std::string text = replace_all(std::string(file.text), "{{name}}", name);
    text = replace_all(std::move(text), "{{Name}}", class_name);
    text = replace_all(std::move(text), "{{kind}}", kind);
    files.push_back({replace_all(std::string(file_name), kNamePlaceholderFile, name), std::move(text)});
  }
  return files;
}

std::vector<fs::path> write_plugin_skeleton(const std::string& kind, const std::string& name, const fs::path& dir) {
  const auto files = plugin_skeleton(kind, name);
  check_directory(dir);
  std::error_code ec;
  const bool made_here = !fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) throw Error("new-plugin: cannot create directory '" + dir.string() + "': " + ec.message());
  std::vector<fs::path> written;
  for (const auto& file : files) {
    const auto path = dir / file.path;
    std::ofstream out(path, std::ios::binary);
    const int open_error = out ? 0 : errno;  // the system's reason (a name too long, no permission)
    out << file.text;
    out.close();
    if (!out) {
      // All or nothing: what was written goes, so the same command can run again.
      for (const auto& done : written) fs::remove(done, ec);
      if (made_here) fs::remove(dir, ec);
      throw Error("new-plugin: cannot write '" + path.string() + "'" +
                  (open_error != 0 ? ": " + std::generic_category().message(open_error) : std::string()) +
                  "; nothing was written");
    }
    written.push_back(path);
  }
  return written;
}

}  // namespace orchestrate::cli
