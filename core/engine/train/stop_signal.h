// SIGINT/SIGTERM handling for a graceful stop: the first signal asks the
// trainer to finish its current step and record the run as interrupted; a
// second one kills the process the usual way.
#pragma once

namespace orchestrate {

class StopSignal {
 public:
  StopSignal();   // installs the handlers
  ~StopSignal();  // restores the previous ones
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  bool requested() const;
  int signal_number() const;  // which signal asked, 0 if none
};

}  // namespace orchestrate
