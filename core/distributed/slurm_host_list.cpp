#include "distributed/slurm_host_list.h"

#include <charconv>
#include <cstdint>
#include <string_view>

#include "orchestrate/error.h"

namespace orchestrate {

namespace {

// An expansion beyond this is a typo ("node[1-100000000]"), not a cluster.
constexpr std::size_t kMaxHosts = 1'000'000;

class ListError {
 public:
  ListError(const std::string& text, const std::string& variable, const char* example, const char* hint)
      : text_(text), variable_(variable), example_(example), hint_(hint) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw UsageError(variable_ + "='" + text_ + "' " + problem + "; expected Slurm's form, e.g. " + example_ + " (" +
                     hint_ + ")");
  }

 private:
  const std::string& text_;
  const std::string& variable_;
  const char* example_;
  const char* hint_;
};

// Splits at the commas outside brackets: "a[1,2],b" -> "a[1,2]", "b".
std::vector<std::string_view> split_top_level(std::string_view text, const ListError& error) {
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '[' && ++depth > 1) error.fail("has a '[' inside brackets");
    if (c == ']' && --depth < 0) error.fail("has a ']' without its '['");
    if (c != ',' || depth != 0) continue;
    if (i == start) error.fail("has an empty entry");
    items.push_back(text.substr(start, i - start));
    start = i + 1;
  }
  if (depth != 0) error.fail("has a '[' without its ']'");
  return items;
}

std::uint64_t parse_number(std::string_view digits, const ListError& error) {
  std::uint64_t value = 0;
  const auto [end, code] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || code != std::errc() || end != digits.data() + digits.size())
    error.fail("has '" + std::string(digits) + "' where a number belongs");
  return value;
}

std::string padded(std::uint64_t value, std::size_t width) {
  std::string digits = std::to_string(value);
  return digits.size() < width ? std::string(width - digits.size(), '0') + digits : digits;
}

// "07-09,12" -> 07 08 09 12.
std::vector<std::string> expand_ranges(std::string_view ranges, const ListError& error) {
  std::vector<std::string> values;
  std::size_t start = 0;
  while (start <= ranges.size()) {
    const std::size_t comma = std::min(ranges.find(',', start), ranges.size());
    const std::string_view range = ranges.substr(start, comma - start);
    const std::size_t dash = range.find('-');
    const std::string_view low_text = range.substr(0, dash);
    const std::uint64_t low = parse_number(low_text, error);
    const std::uint64_t high = dash == std::string_view::npos ? low : parse_number(range.substr(dash + 1), error);
    if (high < low) error.fail("has the descending range '" + std::string(range) + "'");
    if (high - low >= kMaxHosts) error.fail("expands to more than " + std::to_string(kMaxHosts) + " hosts");
    for (std::uint64_t value = low; value <= high; ++value) values.push_back(padded(value, low_text.size()));
    start = comma + 1;
  }
  return values;
}

// "rack[1-2]-n[01-02]" -> rack1-n01 rack1-n02 rack2-n01 rack2-n02.
void expand_name(std::string_view name, const ListError& error, std::vector<std::string>& hosts) {
  std::vector<std::string> partial{""};
  while (!name.empty()) {
    const std::size_t open = name.find('[');
    for (auto& prefix : partial) prefix += name.substr(0, open);
    if (open == std::string_view::npos) break;
    const std::size_t close = name.find(']', open);
    std::vector<std::string> combined;
    for (const auto& prefix : partial)
      for (const auto& value : expand_ranges(name.substr(open + 1, close - open - 1), error)) {
        combined.push_back(prefix + value);
        if (combined.size() + hosts.size() > kMaxHosts)
          error.fail("expands to more than " + std::to_string(kMaxHosts) + " hosts");
      }
    partial = std::move(combined);
    name.remove_prefix(close + 1);
  }
  hosts.insert(hosts.end(), partial.begin(), partial.end());
}

}  // namespace

std::vector<std::string> expand_slurm_host_list(const std::string& text, const std::string& variable) {
  const ListError error(text, variable, "node[01-04,07],gpu3", "set MASTER_ADDR to the host of rank 0 to bypass it");
  std::vector<std::string> hosts;
  for (const auto item : split_top_level(text, error)) expand_name(item, error, hosts);
  return hosts;
}

std::vector<int> expand_slurm_tasks_per_node(const std::string& text, const std::string& variable) {
  const ListError error(text, variable, "2(x3),1", "srun sets it for each task");
  std::vector<int> counts;
  for (std::string_view item : split_top_level(text, error)) {
    std::uint64_t repeat = 1;
    if (const std::size_t open = item.find("(x"); open != std::string_view::npos) {
      if (item.back() != ')') error.fail("has '" + std::string(item) + "' without its closing ')'");
      repeat = parse_number(item.substr(open + 2, item.size() - open - 3), error);
      item = item.substr(0, open);
    }
    const std::uint64_t count = parse_number(item, error);
    if (count > 1'000'000 || repeat > kMaxHosts || counts.size() + repeat > kMaxHosts)
      error.fail("has the implausible entry '" + std::string(item) + "'");
    counts.insert(counts.end(), repeat, static_cast<int>(count));
  }
  return counts;
}

}  // namespace orchestrate
