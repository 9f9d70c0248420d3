#include "engine/setup/run_identity.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include <torch/version.h>

#include "engine/setup/components.h"
#include "orchestrate/api.h"
#include "store/run_liveness.h"

namespace orchestrate {

RunRecord run_record_of(const Recipe& recipe, const Settings& s, const Registry& registry,
                        const c10::Device& device) {
  RunRecord r;
  r.name = s.run.name;
  r.recipe_path = recipe.path;
  r.resolved_recipe = recipe.resolved_toml();
  r.orchestrate_version = version();
  r.torch_version = TORCH_VERSION;
  r.host = this_host_name();  // as the store's liveness check compares it
  r.device = device.str();
  r.git_revision = git_revision_of(recipe.path);
  r.world_size = 1;
  r.plugins = plugins_used(s, registry);
  r.params = recipe.flattened();
  return r;
}

namespace {
// Runs a git command and returns its first line of output, "" on failure.
// (Shelling out keeps libgit2 out of the dependencies for two queries.)
std::string git_line(const std::string& dir, const std::string& args) {
  const std::string command = "git -C '" + dir + "' " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "";
  std::array<char, 256> buffer{};
  std::string out;
  if (fgets(buffer.data(), buffer.size(), pipe)) out = buffer.data();
  const int status = pclose(pipe);
  if (status != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}
}  // namespace

std::string git_revision_of(const std::string& path) {
  std::error_code ec;
  auto dir = std::filesystem::absolute(path, ec).parent_path().string();
  if (ec || dir.find('\'') != std::string::npos) return "";
  std::string revision = git_line(dir, "rev-parse HEAD");
  if (revision.empty()) return "";
  if (!git_line(dir, "status --porcelain -- .").empty()) revision += "-dirty";
  return revision;
}

std::string sha256_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) return "";
  std::array<char, 1 << 16> buffer{};
  while (in) {
    in.read(buffer.data(), buffer.size());
    if (in.gcount() > 0) EVP_DigestUpdate(context.get(), buffer.data(), static_cast<size_t>(in.gcount()));
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context.get(), digest.data(), &length) != 1) return "";
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

}  // namespace orchestrate
