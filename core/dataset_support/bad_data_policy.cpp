#include "bad_data_policy.h"

#include <cstdio>
#include <iostream>
#include <utility>

#include "orchestrate/error.h"

namespace orchestrate {

BadDataPolicy BadDataPolicy::from_params(const Params& params, std::string dataset, std::string item, std::string fix,
                                         DataEventSink* events) {
  return {std::move(dataset), std::move(item), std::move(fix), params.string("on_corrupt") == "skip",
          params.real("max_corrupt_fraction"), events};
}

std::string BadDataPolicy::prefix() const { return "[data] " + dataset + ": "; }

std::string BadDataPolicy::counted(std::size_t bad, std::size_t seen, const std::string& split) const {
  return std::to_string(bad) + " bad " + item + (bad == 1 ? "" : "s") + " of " + std::to_string(seen) + " in the " +
         split + " split";
}

void BadDataPolicy::check_fraction(std::size_t bad, std::size_t seen, const std::string& split,
                                   const std::string& which, const std::string& latest) const {
  const double fraction = static_cast<double>(bad) / static_cast<double>(seen);
  if (fraction <= max_fraction) return;
  char text[96];
  std::snprintf(text, sizeof text, "%.4g %% of them, more than max_corrupt_fraction = %.4g", 100 * fraction,
                max_fraction);
  throw DataError(prefix() + counted(bad, seen, split) + " (" + text + "); " + which + ": " + latest);
}

void BadDataPolicy::check_byte_fraction(std::uint64_t lost, std::uint64_t total, const std::string& split,
                                        const std::string& which, const std::string& latest) const {
  if (total == 0) return;
  const double fraction = static_cast<double>(lost) / static_cast<double>(total);
  if (fraction <= max_fraction) return;
  char text[96];
  std::snprintf(text, sizeof text, "%.4g %% of them, more than max_corrupt_fraction = %.4g", 100 * fraction,
                max_fraction);
  throw DataError(prefix() + std::to_string(lost) + " of the " + std::to_string(total) + " bytes of the " + split +
                  " split are in damaged regions, whose " + item + "s cannot be counted (" + text + "); " + which + ": " + latest);
}

void BadDataPolicy::report(const std::string& message, bool also_print) const {
  // Printed too: a run without a store (a tool, a test) still says what it left out.
  if (also_print) std::cerr << prefix() << message << "\n";
  if (events) events->event("bad_data", prefix() + message);
}

void add_bad_data_params(ParamSchema& schema, const std::string& bad_item, const std::string& item,
                         const std::string& fail_names) {
  schema.add(string_param("on_corrupt", "fail",
                          bad_item + ": fail stops with " + fail_names +
                              "; skip leaves it out and records it in the run's events (bad_data)")
                 .one_of({"fail", "skip"}));
  schema.add(real_param("max_corrupt_fraction", 0.01,
                        "with on_corrupt = \"skip\": a split with a larger fraction of bad " + item +
                            "s (or of its bytes in damaged regions of files, where a " + item +
                            " count cannot be known) is an error")
                 .between(0.0, 1.0));
}

void add_decoded_image_params(ParamSchema& schema) {
  schema.add(int_param("channels", 3, "images are decoded to 1 (grey) or 3 (RGB) channels")
                 .between(1, 3)
                 .with_role(orchestrate::ParamRole::image_channels));
  schema.add(int_param("height", 0,
                       "a fixed decode size: images are resized to this height (antialiased bilinear, uint8) when "
                       "they differ; 0: as stored (resizing is [preprocessing]'s job)")
                 .at_least(0));
  schema.add(int_param("width", 0, "a fixed decode size, with height; 0: as stored").at_least(0));
  schema.rule([](const Params& p) -> std::string {
    if (p.integer("channels") == 2) return "channels: 1 (grey) or 3 (RGB)";
    if ((p.integer("height") == 0) != (p.integer("width") == 0))
      return "height and width: set both (a fixed decode size) or neither (images as stored)";
    return "";
  });
}

void apply_bad_data_policy(const BadDataPolicy& policy, const BadDataCount& count, const std::string& split) {
  if (count.bad == 0) return;
  const std::string counted = policy.counted(count.bad, count.seen, split);
  const std::string& first = count.listed.front();
  if (!policy.skip) throw DataError(policy.prefix() + first + " (" + counted + "; " + policy.fix + ")");
  policy.check_fraction(count.bad, count.seen, split, "the first", first);
  policy.check_byte_fraction(count.region_bytes, count.bytes, split, "the first", count.first_region);
  for (const auto& item : count.listed) policy.report(split + " split: skipped " + item, false);
  const std::string bytes = count.region_bytes == 0 ? std::string()
                                                    : " (" + std::to_string(count.region_bytes) + " of its " +
                                                          std::to_string(count.bytes) + " bytes in damaged regions)";
  policy.report("skipped " + counted + bytes + "; the first: " + first +
                (count.bad > count.listed.size()
                     ? " (the first " + std::to_string(count.listed.size()) + " are listed)"
                     : std::string()));
}

}  // namespace orchestrate
