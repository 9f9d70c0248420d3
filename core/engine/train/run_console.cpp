#include "engine/train/run_console.h"

#include <iostream>

namespace orchestrate {

RunConsole::RunConsole(const TrainOptions& options, const Settings& settings, bool leader)
    : progress_(options.progress ? *options.progress : null_stream_,
                options.progress ? parse_progress_mode(settings.progress) : ProgressMode::never,
                settings.run.log_every, options.progress_is_terminal),
      quiet_(options.progress == nullptr),
      leader_(leader) {}

void RunConsole::say(const std::string& line) {
  if (!quiet_) {
    progress_.message(line);
  } else if (leader_) {
    std::cerr << line << '\n';
  }
}

}  // namespace orchestrate
