#include "bad_data_policy.h"

#include <cstdio>
#include <iostream>
#include <utility>

#include "orchestrate/error.h"

namespace orchestrate {

BadDataPolicy BadDataPolicy::from_params(const Params& params, std::string dataset, std::string item, std::string fix) {
  return {std::move(dataset), std::move(item), std::move(fix), params.string("on_corrupt") == "skip",
          params.real("max_corrupt_fraction")};
}

void apply_bad_data_policy(const BadDataPolicy& policy, const BadDataCount& count, const std::string& split) {
  if (count.bad == 0) return;
  const std::string prefix = "[data] " + policy.dataset + ": ";
  const std::string counted = std::to_string(count.bad) + " bad " + policy.item + (count.bad == 1 ? "" : "s") + " of " +
                              std::to_string(count.seen) + " in the " + split + " split";
  if (!policy.skip) throw DataError(prefix + count.first_bad + " (" + counted + "; " + policy.fix + ")");
  const double fraction = static_cast<double>(count.bad) / static_cast<double>(count.seen);
  if (fraction > policy.max_fraction) {
    char text[96];
    std::snprintf(text, sizeof text, "%.4g %% of them, more than max_corrupt_fraction = %.4g", 100 * fraction,
                  policy.max_fraction);
    throw DataError(prefix + counted + " (" + text + "); the first: " + count.first_bad);
  }
  std::cerr << prefix << "skipped " << counted << "; the first: " << count.first_bad << "\n";
}

}  // namespace orchestrate
