// `orchestrate export tensorboard` and `export mlflow`: siblings of `export
// serving` that read only the run store, run by the front end (command.h).
#pragma once

#include <string>
#include <vector>

namespace orchestrate::cli {

// `arguments`: what follows "export tensorboard".
int export_tensorboard_command(const std::vector<std::string>& arguments);
// `arguments`: what follows "export mlflow".
int export_mlflow_command(const std::vector<std::string>& arguments);

}  // namespace orchestrate::cli
