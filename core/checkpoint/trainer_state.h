// A checkpoint's trainer state (trainer.pt): every part of the run that
// keeps state across --resume, registered once under a name unique in the
// run, saves its Stateful state_dict as a section of its own and takes it
// back on resume. The file knows no part: adding one is one add() call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "orchestrate/stateful.h"

namespace orchestrate {

// The layout trainer.pt is written in. 1: one key per piece of state, known
// to one central function (before 2026-11-28); 2: one section per part.
inline constexpr std::int64_t kTrainerStateFormat = 2;

class TrainerState {
 public:
  // What a resume does when the checkpoint has no section for a part.
  enum class IfAbsent {
    skip,    // the part keeps its fresh state: saved before it kept any, or it had none then
    refuse,  // the checkpoint was saved by a run without this part: resuming would not be exact
  };

  // `part` must outlive this object; `name` ("optimizer", "hooks.0.profile")
  // is the section's and is named in errors.
  void add(std::string name, Stateful& part, IfAbsent if_absent = IfAbsent::skip);
  // The same for a part that exists only to be saved (state_adapters.h).
  void add_owned(std::string name, std::unique_ptr<Stateful> part, IfAbsent if_absent = IfAbsent::skip);

  // The serialized archive: the format, then each part with state.
  std::string save() const;
  // Gives each part its section of the file at `path`. A file of another
  // format, or a part that refuses its section, is an Error naming both.
  void load(const std::string& path) const;

 private:
  struct Part {
    std::string name;
    Stateful* part;
    IfAbsent if_absent;
  };
  std::vector<Part> parts_;
  std::vector<std::unique_ptr<Stateful>> owned_;
};

}  // namespace orchestrate
