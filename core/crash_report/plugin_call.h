// Which plugin code a thread is running, kept where a fatal signal's handler
// can read it (crash_handler.h). The host brackets every call into a plugin
// with a PluginCallScope; the handler names the innermost one. Entering and
// leaving a scope are two thread-local stores, cheap enough for every
// example the data pipeline reads.
#pragma once

#include <cstdint>
#include <string>

namespace orchestrate {

// One component of a run, named once when it is built; the scopes point at
// it, so it must outlive every call made through it.
struct PluginCallSite {
  std::string plugin;     // the plugin's name ("sgdr_restarts")
  std::string component;  // its kind and name ("lr_schedule 'sgdr'")
};

class PluginCallScope {
 public:
  // `call` names the method ("after_update"); a string literal.
  PluginCallScope(const PluginCallSite& site, const char* call) noexcept;
  ~PluginCallScope();
  PluginCallScope(const PluginCallScope&) = delete;
  PluginCallScope& operator=(const PluginCallScope&) = delete;

  const PluginCallSite& site() const noexcept { return site_; }
  const char* call() const noexcept { return call_; }

 private:
  const PluginCallSite& site_;
  const char* call_;
  const PluginCallScope* outer_;
};

// The innermost scope of this thread, or null.
const PluginCallScope* current_plugin_call() noexcept;

// The thread that runs the training step. A fault on a thread with no scope
// of its own (an intra-op worker running a plugin model's kernel) is
// attributed to the call this thread is in.
// Read from another thread, the training thread's scope may already be gone,
// so what is published is the long-lived site and the call's literal.
void mark_training_thread() noexcept;
struct PublishedCall {
  const PluginCallSite* site = nullptr;  // null: not in a plugin call
  const char* call = nullptr;
};
PublishedCall training_thread_call() noexcept;
bool on_training_thread() noexcept;

// The 1-based number of the update being computed (0: none yet), for the
// crash line.
void note_training_step(std::int64_t step) noexcept;
std::int64_t training_step() noexcept;

}  // namespace orchestrate
