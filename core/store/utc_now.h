// The current time as the store writes it: ISO-8601 UTC with milliseconds
// ("2025-01-31T12:00:00.123Z"), the text SQL's strftime gives and julianday()
// parses back, for rows and files written later than they happened.
#pragma once

#include <string>

namespace orchestrate {

std::string utc_now_iso();

}  // namespace orchestrate
