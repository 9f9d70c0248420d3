#include "crash_report/crash_handler.h"

#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "crash_report/crash_breadcrumb.h"
#include "crash_report/plugin_call.h"
#include "crash_report/signal_safe_text.h"
#include "orchestrate/input_limits.h"

namespace orchestrate {

namespace {

// What the handler reads. Filled by ordinary code under `table_mutex`, each
// entry complete before the count that makes it visible is raised; never
// shrunk or freed, since a crash may come at any time, exit included.
struct KnownPlugin {
  const char* name;
  const char* path;
};
struct CodeRange {
  std::uintptr_t begin, end;
  const KnownPlugin* plugin;
};
// Fixed arrays, not containers: the handler may run while another thread
// adds an entry, and a growing container moves what it holds.
constexpr std::size_t kMaxPlugins = 1024;
constexpr std::size_t kMaxCodeRanges = 4096;
std::mutex table_mutex;
KnownPlugin plugins[kMaxPlugins];
std::atomic<std::size_t> plugin_count{0};
CodeRange code_ranges[kMaxCodeRanges];
std::atomic<std::size_t> code_range_count{0};

struct Breadcrumb {
  char path[4096];
  std::int64_t run_id;
  int rank;
  int world_size;
};
Breadcrumb breadcrumb;
std::atomic<bool> breadcrumb_set{false};

const char* copy_forever(const std::string& text) {
  char* copy = new char[text.size() + 1];  // never freed: see above
  std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

bool same_text(const char* a, const char* b) { return std::strcmp(a, b) == 0; }  // strcmp only reads

const KnownPlugin* plugin_named(const char* name) {
  const std::size_t count = plugin_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < count; ++i)
    if (same_text(plugins[i].name, name)) return &plugins[i];
  return nullptr;
}

const KnownPlugin* plugin_at(std::uintptr_t address) {
  const std::size_t count = code_range_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < count; ++i)
    if (address >= code_ranges[i].begin && address < code_ranges[i].end) return code_ranges[i].plugin;
  return nullptr;
}

// The plugin whose code is on the crashing stack, innermost first: the
// faulting instruction, then each return address (less one, to land inside
// the call instruction).
const KnownPlugin* plugin_on_stack(std::uintptr_t faulting, bool walk_stack) {
  if (const KnownPlugin* found = plugin_at(faulting)) return found;
  if (!walk_stack) return nullptr;
  void* frames[64];
  const int depth = backtrace(frames, 64);
  for (int i = 0; i < depth; ++i)
    if (const KnownPlugin* found = plugin_at(reinterpret_cast<std::uintptr_t>(frames[i]) - 1)) return found;
  return nullptr;
}

const char* signal_name(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error: memory that cannot be read, such as a truncated mapped file)";
    case SIGFPE: return "SIGFPE (arithmetic error, such as an integer division by zero)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (aborted: abort(), a failed assert or an uncaught exception)";
    default: return "a fatal signal";
  }
}

void describe(SignalSafeText& out, int signal, std::uintptr_t faulting, bool walk_stack, int rank, int world_size) {
  if (world_size > 1) out.add("rank ").add(std::int64_t{rank}).add(" ");
  out.add("crashed with ").add(signal_name(signal));
  const KnownPlugin* code = plugin_on_stack(faulting, walk_stack);
  const PluginCallScope* own = current_plugin_call();
  PublishedCall call = own ? PublishedCall{&own->site(), own->call()} : training_thread_call();
  if (call.site && call.site->plugin.empty()) call = {};  // a site nobody named
  if (code) out.add(" in plugin '").add(code->name).add("' (").add(code->path).add(")");
  if (call.site) {
    const KnownPlugin* caller = plugin_named(call.site->plugin.c_str());
    out.add(code ? ", in " : " during ").add(call.site->component.c_str()).add(" ").add(call.call);
    if (!code || caller != code) {
      out.add(" of plugin '").add(call.site->plugin.c_str()).add("'");
      if (caller) out.add(" (").add(caller->path).add(")");
    }
  } else if (!code) {
    out.add(" outside any plugin");
  }
  if (!own && call.site) out.add(", on a thread of its own");
  const std::int64_t step = training_step();
  if (step > 0) out.add(", at step ").add(step);
  if (code || call.site)
    out.add("; the plugin has a bug: report it to its author, or leave it out of the recipe");
  else
    out.add("; a bug in orchestrate or LibTorch: please report it with the recipe and this line");
}

std::uintptr_t faulting_address(void* context) {
  const auto* state = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(state->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(state->uc_mcontext.pc);
#else
  (void)state;
  return 0;
#endif
}

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    data += written;
    size -= static_cast<std::size_t>(written);
  }
}

void leave_breadcrumb(int signal, const char* message) {
  if (!breadcrumb_set.load(std::memory_order_acquire)) return;
  CrashBreadcrumb crumb;  // holds an empty std::string: constructing one does not allocate
  crumb.run_id = breadcrumb.run_id;
  crumb.rank = breadcrumb.rank;
  crumb.pid = ::getpid();
  crumb.signal = signal;
  static char text[limits::kMaxCrashBreadcrumbBytes];
  const std::size_t size = format_crash_breadcrumb(crumb, message, text, sizeof text);
  const int fd = ::open(breadcrumb.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  write_all(fd, text, size);
  ::fsync(fd);
  ::close(fd);
}

void on_fatal_signal(int signal, siginfo_t*, void* context) {
  const int saved_errno = errno;
  static std::atomic<bool> reporting{false};
  if (reporting.exchange(true)) {
    for (;;) ::pause();  // another thread is reporting its crash and will end the process
  }
  static char line[4096];
  SignalSafeText text(line, sizeof line);
  const bool target = breadcrumb_set.load(std::memory_order_acquire);
  describe(text, signal, faulting_address(context), true, target ? breadcrumb.rank : 0,
           target ? breadcrumb.world_size : 1);
  static char shown[4200];
  SignalSafeText out(shown, sizeof shown);
  // A progress line may be half drawn on a terminal: start on a fresh line.
  out.add(::isatty(STDERR_FILENO) ? "\norchestrate: " : "orchestrate: ").add(line).add("\n");
  write_all(STDERR_FILENO, out.data(), out.size());
  leave_breadcrumb(signal, line);
  // Die of the same signal: blocked while this handler runs, it is delivered
  // with the default action as soon as the handler returns (and a fault
  // would come again from the same instruction anyway).
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  ::sigemptyset(&fallback.sa_mask);
  ::sigaction(signal, &fallback, nullptr);
  ::raise(signal);
  errno = saved_errno;
}

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

}  // namespace

void install_crash_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    // backtrace() loads libgcc_s on its first call, which allocates: done
    // here, so the handler's call only walks the stack.
    void* warm[2];
    backtrace(warm, 2);
    // Its own stack, so a stack overflow (the commonest SIGSEGV of deep
    // recursion) can still be reported; on the thread that installs it.
    constexpr std::size_t kStackBytes = 256 * 1024;
    void* memory = ::mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory != MAP_FAILED) {
      stack_t stack{};
      stack.ss_sp = memory;
      stack.ss_size = kStackBytes;
      ::sigaltstack(&stack, nullptr);
    }
    struct sigaction action {};
    action.sa_sigaction = on_fatal_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    ::sigemptyset(&action.sa_mask);
    for (const int signal : kFatalSignals) ::sigaction(signal, &action, nullptr);
  });
}

namespace {

struct RangeSearch {
  struct stat file;
  const KnownPlugin* plugin;
  bool found = false;
};

int add_ranges_of(dl_phdr_info* info, std::size_t, void* data) {
  auto& search = *static_cast<RangeSearch*>(data);
  struct stat object {};
  if (!info->dlpi_name || !*info->dlpi_name || ::stat(info->dlpi_name, &object) != 0) return 0;
  if (object.st_dev != search.file.st_dev || object.st_ino != search.file.st_ino) return 0;
  search.found = true;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X)) continue;
    const std::size_t count = code_range_count.load(std::memory_order_relaxed);
    if (count == kMaxCodeRanges) return 1;
    code_ranges[count] = {info->dlpi_addr + segment.p_vaddr, info->dlpi_addr + segment.p_vaddr + segment.p_memsz,
                          search.plugin};
    code_range_count.store(count + 1, std::memory_order_release);
  }
  return 1;
}

}  // namespace

void note_plugin_code(const std::string& plugin, const std::string& library_path) {
  const std::lock_guard lock(table_mutex);
  const std::size_t count = plugin_count.load(std::memory_order_relaxed);
  if (count == kMaxPlugins) return;
  plugins[count] = {copy_forever(plugin), copy_forever(library_path)};
  plugin_count.store(count + 1, std::memory_order_release);
  RangeSearch search{};
  search.plugin = &plugins[count];
  if (::stat(library_path.c_str(), &search.file) != 0) return;
  dl_iterate_phdr(add_ranges_of, &search);
}

CrashBreadcrumbTarget::CrashBreadcrumbTarget(const std::string& store_path, std::int64_t run_id, int rank,
                                             int world_size) {
  const std::string path = crash_breadcrumb_path(store_path, run_id, rank);
  breadcrumb_set.store(false, std::memory_order_release);
  if (path.size() >= sizeof breadcrumb.path) return;  // cannot be written; the line is still printed
  std::memcpy(breadcrumb.path, path.c_str(), path.size() + 1);
  breadcrumb.run_id = run_id;
  breadcrumb.rank = rank;
  breadcrumb.world_size = world_size;
  breadcrumb_set.store(true, std::memory_order_release);
}

CrashBreadcrumbTarget::~CrashBreadcrumbTarget() { breadcrumb_set.store(false, std::memory_order_release); }

std::string crash_description(int signal, std::uintptr_t code_address) {
  char line[4096];
  SignalSafeText text(line, sizeof line);
  const bool target = breadcrumb_set.load(std::memory_order_acquire);
  describe(text, signal, code_address, false, target ? breadcrumb.rank : 0, target ? breadcrumb.world_size : 1);
  return text.data();
}

}  // namespace orchestrate
