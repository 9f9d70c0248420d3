#include "crash_report/plugin_call.h"

#include <atomic>

namespace orchestrate {

namespace {

// initial-exec: this library is linked into the executable, so the slot has a
// fixed offset and reading it from a signal handler never allocates (the
// general-dynamic model may call __tls_get_addr, which can).
__attribute__((tls_model("initial-exec"))) thread_local const PluginCallScope* innermost = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local bool is_training_thread = false;

std::atomic<const PluginCallSite*> training_site{nullptr};
std::atomic<const char*> training_call_name{nullptr};

void publish(const PluginCallScope* scope) noexcept {
  training_site.store(scope ? &scope->site() : nullptr, std::memory_order_relaxed);
  training_call_name.store(scope ? scope->call() : nullptr, std::memory_order_relaxed);
}
std::atomic<std::int64_t> step{0};

}  // namespace

PluginCallScope::PluginCallScope(const PluginCallSite& site, const char* call) noexcept
    : site_(site), call_(call), outer_(innermost) {
  innermost = this;
  if (is_training_thread) publish(this);
}

PluginCallScope::~PluginCallScope() {
  innermost = outer_;
  if (is_training_thread) publish(outer_);
}

const PluginCallScope* current_plugin_call() noexcept { return innermost; }

void mark_training_thread() noexcept { is_training_thread = true; }
PublishedCall training_thread_call() noexcept {
  return {training_site.load(std::memory_order_relaxed), training_call_name.load(std::memory_order_relaxed)};
}
bool on_training_thread() noexcept { return is_training_thread; }

void note_training_step(std::int64_t value) noexcept { step.store(value, std::memory_order_relaxed); }
std::int64_t training_step() noexcept { return step.load(std::memory_order_relaxed); }

}  // namespace orchestrate
