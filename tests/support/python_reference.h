// Runs a Python snippet in the project's environment (the venv scripts/setup
// made, with the same torch as LibTorch) and returns what it printed, for
// parity tests against PyTorch's own implementations.
//
// A missing interpreter or package is a test failure that names the command
// that installs it, never a skip.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "scratch_dir.h"

#ifndef ORCHESTRATE_PYTHON
#define ORCHESTRATE_PYTHON ""
#endif

namespace orchestrate::testing {

inline const char* kPythonSetupHint =
    "run scripts/setup (it installs torch, numpy, safetensors, torchvision, timm, tritonclient, tensorboard, tfrecord, jsonschema, mlflow, onnx and onnxruntime into the project's venv and configures the build with it)";

// Runs `script` with the project's Python; throws std::runtime_error with the
// script's stderr when it fails.
inline std::string run_python(const std::string& script) {
  const std::string python = ORCHESTRATE_PYTHON;
  if (python.empty())
    throw std::runtime_error("no Python configured for parity tests (ORCHESTRATE_PYTHON is empty); " +
                             std::string(kPythonSetupHint));
  ScratchDir dir;
  const std::string path = dir.write("reference.py", script);
  const std::string errors = dir.file("stderr.txt");
  const std::string command = "'" + python + "' '" + path + "' 2>'" + errors + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start " + python + "; " + kPythonSetupHint);
  std::string out;
  std::array<char, 4096> buffer{};
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  const int status = pclose(pipe);
  if (status != 0) {
    std::string err;
    if (FILE* f = fopen(errors.c_str(), "r")) {
      while (std::size_t n = fread(buffer.data(), 1, buffer.size(), f)) err.append(buffer.data(), n);
      fclose(f);
    }
    throw std::runtime_error("Python reference failed (exit " + std::to_string(WEXITSTATUS(status)) + "): " + err +
                             "\nIf a module is missing, " + kPythonSetupHint);
  }
  return out;
}

}  // namespace orchestrate::testing
