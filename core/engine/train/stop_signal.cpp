#include "engine/train/stop_signal.h"

#include <csignal>
#include <string>

namespace orchestrate {

namespace {
// A signal handler can only talk to the program through a global of this
// type; it is the one piece of global mutable state in the engine.
volatile std::sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int signal_number) {
  g_stop_signal = signal_number;
  std::signal(signal_number, SIG_DFL);  // a second Ctrl-C ends the process at once
}

struct sigaction g_previous_int;
struct sigaction g_previous_term;
struct sigaction g_previous_usr1;
}  // namespace

StopSignal::StopSignal() {
  g_stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
  sigaction(SIGUSR1, &action, &g_previous_usr1);
}

StopSignal::~StopSignal() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  sigaction(SIGUSR1, &g_previous_usr1, nullptr);
}

bool StopSignal::requested() const { return g_stop_signal != 0; }
int StopSignal::signal_number() const { return g_stop_signal; }

std::string stop_signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT: return "SIGINT (Ctrl-C)";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1 (a batch system's warning before its time limit)";
  }
  return "signal " + std::to_string(signal_number);
}

}  // namespace orchestrate
