#include "engine/train/run_hooks.h"

#include "engine/setup/components.h"
#include "orchestrate/error.h"

namespace orchestrate {


RunHooks::RunHooks(const std::vector<ComponentChoice>& choices, const Registry& registry, const HookContext& context,
                   const RunRecorder& recorder)
    : recorder_(recorder) {
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const auto& choice = choices[i];
    labels_.push_back("[[hooks]] entry " + std::to_string(i) + " (" + choice.plugin + ")");
    sites_.push_back(plugin_call_site(registry, ComponentKind::hook, choice.plugin));
    part_names_.push_back("hooks." + std::to_string(i) + "." + choice.plugin);
    try {
      const PluginCallScope in_factory(sites_.back(), "create");
      hooks_.push_back(registry.hooks().get(choice.plugin).create(choice.params, context));
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(labels_.back() + ": " + exception_reason(e));
    }
    if (!hooks_.back()) throw Error(labels_.back() + ": the plugin returned no hook (a plugin bug)");
  }
}

// A hook's failure fails the run, naming the hook; an orchestrate Error
// (already worded for the user) keeps its text after the hook's name.
template <class Call>
void RunHooks::each(const char* what, Call call) {
  for (std::size_t i = 0; i < hooks_.size(); ++i) {
    try {
      const PluginCallScope in_hook(sites_[i], what);
      call(*hooks_[i]);
    } catch (const std::exception& e) {
      throw Error(labels_[i] + " failed in " + what + ": " + exception_reason(e));
    }
  }
}

std::vector<std::pair<std::string, Stateful*>> RunHooks::stateful_parts() {
  std::vector<std::pair<std::string, Stateful*>> parts;
  for (std::size_t i = 0; i < hooks_.size(); ++i) parts.emplace_back(part_names_[i], hooks_[i].get());
  return parts;
}

void RunHooks::train_begins(const TrainBegin& run, std::int64_t epoch) {
  step_ = run.first_step;
  epoch_ = epoch;
  each("on_train_begin", [&](Hook& hook) { hook.on_train_begin(run, *this); });
}

void RunHooks::update_begins(std::int64_t step) {
  each("before_update", [&](Hook& hook) { hook.before_update(step); });
}

void RunHooks::update_ended(const StepView& step) {
  step_ = step.step;
  epoch_ = step.epoch;
  each("after_update", [&](Hook& hook) { hook.after_update(step, *this); });
}

void RunHooks::train_ended(const TrainEnd& end, std::int64_t epoch) {
  step_ = end.steps;
  epoch_ = epoch;
  each("on_train_end", [&](Hook& hook) { hook.on_train_end(end, *this); });
}

void RunHooks::metric(const std::string& name, double value) { recorder_.metric(step_, epoch_, name, value); }

void RunHooks::event(const std::string& kind, const std::string& message) { recorder_.event(kind, message); }

void RunHooks::print(const std::string& line) {
  if (print_) print_(line);
}

void RunHooks::request_stop(const std::string& reason) {
  if (stop_reason_) return;
  stop_reason_ = reason;
  recorder_.event("hook_stop", "after step " + std::to_string(step_) + ": " + reason);
}

}  // namespace orchestrate
