// The recipe's [[hooks]] for one training run: builds them, calls them in
// recipe order, and is their sink, so a hook reaches the run store and the
// progress line only through what HookSink allows.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crash_report/plugin_call.h"
#include "engine/recipe/settings.h"
#include "orchestrate/hook.h"
#include "orchestrate/registry.h"
#include "store/run_recorder.h"
#include "store/run_records.h"

namespace orchestrate {


// Where hooks' files go when nothing else is said: this, beside the run
// store (directory_beside_store), as checkpoints go to "checkpoints".
inline constexpr const char* kArtifactDirectory = "artifacts";

class RunHooks final : public HookSink {
 public:
  using PrintLine = std::function<void(const std::string&)>;

  // Builds every [[hooks]] entry; a factory's error names its entry. What the
  // hooks send is recorded by `recorder` (this process's record
  // of the run, which for ranks 1.. is a scratch store with its own ids).
  RunHooks(const std::vector<ComponentChoice>& choices, const Registry& registry, const HookContext& context,
           const RunRecorder& recorder);
  // Where print() goes (the progress line's stream); nowhere until set.
  void set_printer(PrintLine print) { print_ = std::move(print); }

  bool empty() const { return hooks_.empty(); }

  // Each forwards to every hook in order. `epoch` is where metrics land.
  void train_begins(const TrainBegin& run, std::int64_t epoch);
  void update_begins(std::int64_t step);
  void update_ended(const StepView& step);
  void train_ended(const TrainEnd& end, std::int64_t epoch);

  // Each hook as a part that keeps its state across --resume, named
  // "hooks.<entry>.<plugin>" (trainer_state.h).
  std::vector<std::pair<std::string, Stateful*>> stateful_parts();

  // The first stop a hook asked for, if any.
  const std::optional<std::string>& stop_reason() const { return stop_reason_; }

  // HookSink
  void metric(const std::string& name, double value) override;
  void event(const std::string& kind, const std::string& message) override;
  void print(const std::string& line) override;
  void request_stop(const std::string& reason) override;

 private:
  template <class Call>
  void each(const char* what, Call call);

  std::vector<std::unique_ptr<Hook>> hooks_;
  std::vector<std::string> labels_;  // "[[hooks]] entry 0 (profile)"
  std::vector<PluginCallSite> sites_;  // named to a crash inside a hook (crash_handler.h)
  std::vector<std::string> part_names_;  // "hooks.<entry>.<plugin>": its state's section in a checkpoint
  const RunRecorder recorder_;
  PrintLine print_;
  std::int64_t step_ = 0, epoch_ = 0;  // where the current call's metrics land
  std::optional<std::string> stop_reason_;
};

}  // namespace orchestrate
