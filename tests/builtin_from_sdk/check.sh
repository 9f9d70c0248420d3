#!/usr/bin/env bash
# A built-in plugin builds from the install prefix alone: its own folder's
# CMakeLists.txt, unchanged, under a project that only has
# find_package(orchestrate), as a third party's would. The plugin built that
# way passes the installed conformance checks.
#   check.sh <main build dir> <scratch dir> <source dir> <plugin folder, relative to the source dir> <kind> <component>
set -euo pipefail
build=$1
scratch=$2
source=$3
folder=$4
kind=$5
component=$6
rm -rf "$scratch" && mkdir -p "$scratch/project"
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../support/sdk_project.sh"
install_sdk "$build" "$scratch/prefix"
cat > "$scratch/project/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(builtin_from_sdk LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(orchestrate REQUIRED)
add_subdirectory("$source/$folder" plugin)
CMAKE
configure_against_sdk "$build" "$scratch/prefix" "$scratch/project" "$scratch/build"
# The plugin library only: its unit tests need the source tree's test data.
target=$(cmake --build "$scratch/build" --target help | sed -n 's/^\(orchestrate_plugin_[a-z0-9_]*\): .*/\1/p' | grep -v _objects | head -1)
cmake --build "$scratch/build" --target "$target" >/dev/null
library=$(find "$scratch/build" -name 'liborchestrate_*.so' | head -1)
echo "built $(basename "$library") from the install prefix"
mkdir -p "$scratch/plugins" && cp "$library" "$scratch/plugins/"
cd "$source"
"$scratch/prefix/bin/orchestrate" conformance "$kind" "$component" --plugin-path "$scratch/plugins" \
  --settings tests/conformance/builtin_samples.toml 2>&1 | grep -E "^\[  (PASSED|FAILED) |is not loaded"
