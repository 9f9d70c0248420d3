// `orchestrate export tensorboard`: a sibling of `export serving`, reached
// through export_command (command.h).
#pragma once

#include <string>
#include <vector>

namespace orchestrate::cli {

// `arguments`: what follows "export tensorboard".
int export_tensorboard_command(const std::vector<std::string>& arguments);

}  // namespace orchestrate::cli
