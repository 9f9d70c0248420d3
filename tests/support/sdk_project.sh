# Sourced by the tests that build plugins out of tree (tests/*/check.sh):
# the SDK installed from the main build into a scratch prefix, and a project
# configured against it as a third party would, with the main build's
# LibTorch location and compiler cache (so the test does not recompile what
# the main build already compiled).

# install_sdk <main build dir> <prefix>
install_sdk() {
  cmake --install "$1" --prefix "$2" >/dev/null
}

# configure_against_sdk <main build dir> <prefix> <source dir> <binary dir>
configure_against_sdk() {
  local prefix_path launcher
  prefix_path=$(sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "$1/CMakeCache.txt")
  launcher=$(sed -n 's/^CMAKE_CXX_COMPILER_LAUNCHER:[A-Z]*=//p' "$1/CMakeCache.txt")
  cmake -S "$3" -B "$4" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$2;$prefix_path" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" >/dev/null
}
