#!/usr/bin/env bash
# Installs the SDK from the main build, builds the out-of-tree plugin against
# it, and checks the host loads it and trains with it.
#   check.sh <main build dir> <scratch dir>
set -euo pipefail
build=$1
scratch=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../support/sdk_project.sh"
out_of_tree_project "$build" "$scratch" linear_warmup
orchestrate=$scratch/prefix/bin/orchestrate
"$orchestrate" describe lr_schedule linear_warmup --plugin-path "$scratch/plugin"
cat > "$scratch/recipe.toml" <<'TOML'
schema_version = 1
[run]
max_steps = 5
batch_size = 16
[data]
plugin = "mock"
train_size = 64
test_size = 16
[model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
[schedule]
plugin = "linear_warmup"
warmup_steps = 4
TOML
"$orchestrate" run "$scratch/recipe.toml" --plugin-path "$scratch/plugin" --db "$scratch/runs.db" --quiet
# The schedule really drove the optimizer: step 1 ran at lr/4 (sgd's default lr is 0.01).
sqlite3 "$scratch/runs.db" "select learning_rate from step_timings order by step limit 1"

# A plugin project built with the other C++ ABI is told so in one line: at
# configure time for a flag set before find_package ...
if configure_against_sdk "$build" "$scratch/prefix" "$scratch/source" "$scratch/old_abi" \
  -DCMAKE_CXX_FLAGS=-D_GLIBCXX_USE_CXX11_ABI=0 2> "$scratch/old_abi.log"; then
  echo "a project with _GLIBCXX_USE_CXX11_ABI=0 configured against the SDK"; exit 1
fi
tr '\n' ' ' < "$scratch/old_abi.log" | tr -s ' ' |  # CMake wraps a message's lines
  grep -o "orchestrate: this project compiles with _GLIBCXX_USE_CXX11_ABI=0, but the orchestrate SDK (and LibTorch) use _GLIBCXX_USE_CXX11_ABI=1" |
  sed 's/^/at configure: /'
# ... and by the compiler for a definition a target sets later.
mkdir -p "$scratch/old_abi_target"
cp "$scratch/source/linear_warmup.cpp" "$scratch/old_abi_target/"
cat > "$scratch/old_abi_target/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(old_abi_target LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(orchestrate REQUIRED)
orchestrate_add_plugin(linear_warmup SOURCES linear_warmup.cpp)
target_compile_definitions(orchestrate_plugin_linear_warmup_objects PRIVATE _GLIBCXX_USE_CXX11_ABI=0)
CMAKE
configure_against_sdk "$build" "$scratch/prefix" "$scratch/old_abi_target" "$scratch/old_abi_target/build"
if cmake --build "$scratch/old_abi_target/build" > "$scratch/old_abi_build.log" 2>&1; then
  echo "a plugin compiled with _GLIBCXX_USE_CXX11_ABI=0 against the SDK"; exit 1
fi
grep -o "this plugin compiles with another _GLIBCXX_USE_CXX11_ABI than the orchestrate SDK" "$scratch/old_abi_build.log" |
  head -1 | sed 's/^/at compile: /'
