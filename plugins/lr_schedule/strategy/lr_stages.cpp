#include "lr_stages.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <system_error>

namespace orchestrate::lr_stages {
namespace {

constexpr const char* kHowToWrite =
    "write END:LR or END:LR_START->LR_END, e.g. \"30:0.4\" or \"5:0.001->0.4\"";

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// The whole of `text` as a finite number, or the reason it is not one.
std::string read_number(std::string_view text, const char* what, double& value) {
  const auto* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || !std::isfinite(value))
    return std::string(what) + " \"" + std::string(text) + "\" is not a number";
  return "";
}

// The stage, or the reason it is malformed, not yet prefixed with its position.
std::string read_stage(std::string_view text, Stage& stage) {
  stage.text = std::string(text);
  if (text.empty()) return "empty; remove the extra comma or " + std::string(kHowToWrite);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return "no ':' between end and lr; " + std::string(kHowToWrite);
  if (auto why = read_number(trimmed(text.substr(0, colon)), "end", stage.end); !why.empty())
    return why + "; " + kHowToWrite;
  const auto lrs = text.substr(colon + 1);
  if (const auto arrow = lrs.find("->"); arrow != std::string_view::npos) {
    stage.ramp = true;
    if (auto why = read_number(trimmed(lrs.substr(0, arrow)), "lr_start", stage.start_lr); !why.empty())
      return why + "; " + kHowToWrite;
    if (auto why = read_number(trimmed(lrs.substr(arrow + 2)), "lr_end", stage.end_lr); !why.empty())
      return why + "; " + kHowToWrite;
  } else {
    if (auto why = read_number(trimmed(lrs), "lr", stage.start_lr); !why.empty()) return why + "; " + kHowToWrite;
    stage.end_lr = stage.start_lr;
  }
  if (stage.start_lr < 0 || stage.end_lr < 0)
    return "lr " + number_text(stage.start_lr < 0 ? stage.start_lr : stage.end_lr) +
           " is negative; learning rates must be >= 0";
  return "";
}

}  // namespace

Parsed parse(std::string_view text) {
  Parsed parsed;
  if (trimmed(text).empty()) {
    parsed.problem = "no stages; " + std::string(kHowToWrite) + ", several separated by commas";
    return parsed;
  }
  std::size_t position = 0;
  while (true) {
    const auto comma = text.find(',');
    Stage stage;
    ++position;
    std::string why = read_stage(trimmed(text.substr(0, comma)), stage);
    if (why.empty() && parsed.stages.empty() && stage.end <= 0) why = "ends at " + number_text(stage.end) + "; the first stage must end after 0";
    if (why.empty() && !parsed.stages.empty() && stage.end <= parsed.stages.back().end)
      why = "ends at " + number_text(stage.end) + ", not after stage " + std::to_string(position - 1) + "'s end " +
            number_text(parsed.stages.back().end) + "; stage ends must increase";
    if (!why.empty()) {
      parsed.problem = "stage " + std::to_string(position) + " \"" + stage.text + "\": " + why;
      parsed.stages.clear();
      return parsed;
    }
    parsed.stages.push_back(std::move(stage));
    if (comma == std::string_view::npos) return parsed;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace orchestrate::lr_stages
