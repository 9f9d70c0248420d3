// The breadcrumb a crashing process leaves beside its run store
// (core/crash_report/crash_breadcrumb.h), read back by every store that
// opens there: any bytes are refused with a reason or parsed, never thrown
// on; and what parses, written again as the handler would write it, parses
// to the same crumb.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "crash_report/crash_breadcrumb.h"
#include "orchestrate/input_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string problem;
  const auto crumb = orchestrate::parse_crash_breadcrumb(bytes, &problem);
  if (!crumb) {
    if (problem.empty()) __builtin_trap();  // a refusal always says why
    return 0;
  }
  static char text[orchestrate::limits::kMaxCrashBreadcrumbBytes];
  const std::size_t length = orchestrate::format_crash_breadcrumb(*crumb, crumb->message.c_str(), text, sizeof text);
  const auto again = orchestrate::parse_crash_breadcrumb(std::string_view(text, length));
  if (!again || again->run_id != crumb->run_id || again->rank != crumb->rank || again->pid != crumb->pid ||
      again->signal != crumb->signal || again->message != crumb->message)
    __builtin_trap();
  return 0;
}
