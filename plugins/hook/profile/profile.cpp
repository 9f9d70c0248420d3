// FastNN's profiling hooks (profile_every_n_iters, profile_at_task): LibTorch's
// profiler records a few updates on a chosen rank and saves them as a Chrome
// trace, which opens in https://ui.perfetto.dev or chrome://tracing. Each
// update is one "ProfilerStep#N" range, as torch.profiler marks its steps.
// The trace path is recorded with the run as a "profile" event.
#include <ATen/record_function.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "orchestrate/error.h"
#include "orchestrate/hook.h"
#include "orchestrate/plugin.h"
#include "orchestrate/profiler_start.h"

namespace {

namespace profiler = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

struct ProfileSettings {
  std::int64_t first_step = 10;
  std::int64_t steps = 3;
  std::int64_t every_n_steps = 0;
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;
  std::string dir;
};

class Profile final : public orchestrate::Hook {
 public:
  Profile(ProfileSettings settings, bool on_this_rank, int rank)
      : settings_(std::move(settings)), on_this_rank_(on_this_rank), rank_(rank) {}

  ~Profile() override {
    if (active_) {  // the run failed mid-trace: leave the profiler off, save nothing
      step_range_.reset();
      profiler::disableProfiler();
    }
  }

  void on_train_begin(const orchestrate::TrainBegin& run, orchestrate::HookSink&) override {
    activities_ = {ActivityType::CPU};
    if (run.device.is_cuda()) {
      activities_.insert(ActivityType::CUDA);
      cuda_device_ = run.device.has_index() ? run.device.index() : 0;
    }
  }

  void before_update(std::int64_t step) override {
    if (!on_this_rank_) return;
    if (!active_ && starts_at(step)) start(step);
    if (active_) {
      step_name_ = "ProfilerStep#" + std::to_string(step);
      step_range_ = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
      if (step_range_->isActive()) step_range_->before(step_name_);
    }
  }

  void after_update(const orchestrate::StepView& step, orchestrate::HookSink& sink) override {
    if (!active_) return;
    step_range_.reset();  // ends the step's range
    if (step.step >= first_ + settings_.steps - 1) stop(step.step, sink);
  }

  void on_train_end(const orchestrate::TrainEnd& end, orchestrate::HookSink& sink) override {
    if (active_) stop(end.steps, sink);  // training ended inside a trace: keep what it has
  }

 private:
  bool starts_at(std::int64_t step) const {
    if (step < settings_.first_step) return false;
    if (settings_.every_n_steps == 0) return step == settings_.first_step;
    return (step - settings_.first_step) % settings_.every_n_steps == 0;
  }

  void start(std::int64_t step) {
    const ProfilerConfig config(ProfilerState::KINETO, settings_.record_shapes, settings_.profile_memory,
                                settings_.with_stack);
    orchestrate::start_profiler(config, activities_);
    active_ = true;
    first_ = step;
  }

  void stop(std::int64_t last, orchestrate::HookSink& sink) {
    step_range_.reset();
    // The last update's kernels first, as torch.profiler.profile's exit does:
    // the host is about an update ahead, and Kineto drops the GPU activity
    // that ends after the profiler stops.
    if (cuda_device_) torch::cuda::synchronize(*cuda_device_);
    const auto result = profiler::disableProfiler();
    active_ = false;
    namespace fs = std::filesystem;
    fs::create_directories(settings_.dir);
    const std::string path = (fs::path(settings_.dir) / ("trace-rank" + std::to_string(rank_) + "-steps" +
                                                          std::to_string(first_) + "-" + std::to_string(last) + ".json"))
                                 .string();
    result->save(path);
    if (!fs::is_regular_file(path))
      throw orchestrate::Error("profile: LibTorch's profiler wrote no trace to " + path +
                               " (is this LibTorch built with Kineto?)");
    const std::string what = "chrome trace of steps " + std::to_string(first_) + "-" + std::to_string(last) +
                             " on rank " + std::to_string(rank_) + ": " + path +
                             " (open in https://ui.perfetto.dev or chrome://tracing)";
    sink.event("profile", what);
    sink.print(what);
  }

  ProfileSettings settings_;
  bool on_this_rank_;
  int rank_;
  std::set<ActivityType> activities_{ActivityType::CPU};
  std::optional<c10::DeviceIndex> cuda_device_;  // the run's GPU, whose kernels are traced
  bool active_ = false;
  std::int64_t first_ = 0;  // the first update of the trace being recorded
  std::string step_name_;
  std::unique_ptr<at::RecordFunction> step_range_;
};

orchestrate::ParamSchema profile_schema() {
  using namespace orchestrate;
  ParamSchema schema{
      int_param("first_step", 10, "the first update to record (after the warm-up updates)").at_least(1),
      int_param("steps", 3, "updates per trace").at_least(1),
      int_param("every_n_steps", 0,
                "start another trace every N updates from first_step (FastNN's profile_every_n_iters); 0: once")
          .at_least(0),
      int_param("rank", 0, "the rank that records (FastNN's profile_at_task); -1: every rank").at_least(-1),
      bool_param("record_shapes", false, "record the input shapes of every op"),
      bool_param("profile_memory", false, "record tensor allocations"),
      bool_param("with_stack", false, "record the C++/Python stack of every op (slower)"),
      string_param("dir", "", "where traces go; empty: <run store's directory>/artifacts/<store file>/run-<id>/profiles"),
  };
  schema.rule([](const Params& p) -> std::string {
    const auto every = p.integer("every_n_steps");
    if (every > 0 && every < p.integer("steps"))
      return "every_n_steps = " + std::to_string(every) + " is shorter than a trace (steps = " +
             std::to_string(p.integer("steps")) + "); raise every_n_steps or lower steps";
    return "";
  });
  return schema;
}

void register_components(orchestrate::Registry& registry) {
  registry.hooks().add(
      "profile",
      "a Chrome trace of a few updates from LibTorch's profiler, on one rank or all (FastNN's profile_every_n_iters "
      "and profile_at_task); the path is recorded as a 'profile' event",
      profile_schema(), [](const orchestrate::Params& params, const orchestrate::HookContext& context) {
        ProfileSettings settings;
        settings.first_step = params.integer("first_step");
        settings.steps = params.integer("steps");
        settings.every_n_steps = params.integer("every_n_steps");
        settings.record_shapes = params.boolean("record_shapes");
        settings.profile_memory = params.boolean("profile_memory");
        settings.with_stack = params.boolean("with_stack");
        settings.dir = params.string("dir").empty()
                           ? (std::filesystem::path(context.artifact_dir) / "profiles").string()
                           : params.string("dir");
        const auto rank = params.integer("rank");
        return std::make_unique<Profile>(std::move(settings), rank < 0 || rank == context.rank, context.rank);
      });
}

}  // namespace

ORCHESTRATE_PLUGIN("profile", "1.0.0", register_components)
