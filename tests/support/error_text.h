// The message of the orchestrate::Error an action throws, "" when it throws
// none: for tests that check what a user reads, not only that it failed.
#pragma once

#include <functional>
#include <string>

#include "orchestrate/error.h"

namespace orchestrate::testing {

inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace orchestrate::testing
