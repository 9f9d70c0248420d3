#include "orchestrate/refused_plugins.h"

#include <mutex>

namespace orchestrate {
namespace {

std::mutex& refused_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<RefusedPlugin>& refused_list() {
  static std::vector<RefusedPlugin> list;
  return list;
}

}  // namespace

void set_refused_plugins(std::vector<RefusedPlugin> refused) {
  std::lock_guard lock(refused_mutex());
  refused_list() = std::move(refused);
}

std::vector<RefusedPlugin> refused_plugins() {
  std::lock_guard lock(refused_mutex());
  return refused_list();
}

}  // namespace orchestrate
