# Sourced by the tests that build plugins out of tree (tests/*/check.sh):
# the SDK installed from the main build into a scratch prefix, and a project
# configured against it as a third party would, with the main build's
# LibTorch location and compiler cache (so the test does not recompile what
# the main build already compiled).

# install_sdk <main build dir> <prefix>
install_sdk() {
  cmake --install "$1" --prefix "$2" >/dev/null
}

# configure_against_sdk <main build dir> <prefix> <source dir> <binary dir> [cmake arguments...]
configure_against_sdk() {
  local prefix_path launcher
  prefix_path=$(sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "$1/CMakeCache.txt")
  launcher=$(sed -n 's/^CMAKE_CXX_COMPILER_LAUNCHER:[A-Z]*=//p' "$1/CMakeCache.txt")
  cmake -S "$3" -B "$4" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$2;$prefix_path" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" "${@:5}" >/dev/null
}

# out_of_tree_project <main build dir> <scratch dir> <example name>: a
# fresh scratch directory holding the installed SDK (prefix/) and the
# installed example share/orchestrate/examples/<example name>, copied as a
# user would and built against it (plugin/).
out_of_tree_project() {
  rm -rf "$2" && mkdir -p "$2"
  install_sdk "$1" "$2/prefix"
  local example="$2/prefix/share/orchestrate/examples/$3"
  [ -f "$example/CMakeLists.txt" ] || { echo "the install has no example $3 ($example)"; return 1; }
  cp -r "$example" "$2/source"
  configure_against_sdk "$1" "$2/prefix" "$2/source" "$2/plugin"
  cmake --build "$2/plugin" >/dev/null
}
