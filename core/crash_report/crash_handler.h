// Names the plugin behind a fatal signal. A plugin is native code in the
// host's process: a null dereference in a hook used to end the run with
// "Segmentation fault" and a run recorded as lost with no reason. With the
// handler installed, SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT write one
// line to stderr naming the plugin (its name and file), the component and
// call (PluginCallScope), and the step; while a run is being trained they
// also leave its crash breadcrumb (crash_breadcrumb.h). The process then dies
// of the same signal, as it would have (exit 128+N, a core dump if enabled),
// so shells, launchers and debuggers see what they always saw.
//
// The plugin is found twice over: by the code addresses on the crashing
// stack (the first frame inside a plugin file's code: exact, even in a
// thread with no scope), and by the innermost PluginCallScope (which call).
// Everything the handler reads is prepared beforehand; it only reads memory,
// formats into fixed buffers and calls write, open, fsync and close.
#pragma once

#include <cstdint>
#include <string>

namespace orchestrate {

// Installs the handlers, once per process (later calls do nothing).
void install_crash_handler();

// A plugin file the process has loaded: a fault in its code is named after
// it. Call after dlopen (its code must be mapped).
void note_plugin_code(const std::string& plugin, const std::string& library_path);

// While one exists, a crash also writes the breadcrumb of run `run_id`
// (rank `rank` of a data-parallel job) beside the store at `store_path`.
class CrashBreadcrumbTarget {
 public:
  CrashBreadcrumbTarget(const std::string& store_path, std::int64_t run_id, int rank, int world_size);
  ~CrashBreadcrumbTarget();
  CrashBreadcrumbTarget(const CrashBreadcrumbTarget&) = delete;
  CrashBreadcrumbTarget& operator=(const CrashBreadcrumbTarget&) = delete;
};

// The line the handler would write now for `signal` with the faulting
// address `code_address` (0: unknown), without "orchestrate: " (tests).
std::string crash_description(int signal, std::uintptr_t code_address);

}  // namespace orchestrate
