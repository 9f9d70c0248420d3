#!/usr/bin/env bash
# `orchestrate new-plugin` end to end: installs the SDK from the main build,
# generates one skeleton per kind, builds them all out of tree against the
# installed SDK (one CMake configure, every core) and trains with each: each
# skeleton's own test runs its smoke recipe with --plugin-path. The run store
# must say finished and name the plugin, and what the component does must show.
#   check.sh <main build dir> <scratch dir> <share/plugin_templates dir>
set -euo pipefail
build=$1
scratch=$2
templates=$3
rm -rf "$scratch" && mkdir -p "$scratch"
fail() { echo "FAIL: $*" >&2; exit 1; }
seconds_since() { echo $(( $(date +%s) - $1 )); }

source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../support/sdk_project.sh"
install_sdk "$build" "$scratch/prefix"
orchestrate=$scratch/prefix/bin/orchestrate

# Refusals: one line on stderr, exit code 2, nothing written.
expect_usage_error() {
  local expected=$1; shift
  local status=0
  "$orchestrate" new-plugin "$@" >"$scratch/out" 2>"$scratch/err" || status=$?
  [ "$status" = 2 ] || fail "new-plugin $*: exit code $status, expected 2"
  [ "$(wc -l <"$scratch/err")" = 1 ] || fail "new-plugin $*: not one line: $(cat "$scratch/err")"
  grep -qF "$expected" "$scratch/err" || fail "new-plugin $*: '$(cat "$scratch/err")' lacks '$expected'"
  [ ! -s "$scratch/out" ] || fail "new-plugin $*: printed $(cat "$scratch/out")"
}
mkdir -p "$scratch/occupied" && touch "$scratch/occupied/notes.txt"
expect_usage_error "expected KIND NAME DIR" hook my_hook
expect_usage_error "'MyHook' is not a snake_case name" hook MyHook "$scratch/refused"
expect_usage_error "unknown kind 'optimiser' (did you mean optimizer?)" optimiser my_optimizer "$scratch/refused"
expect_usage_error "directory '$scratch/occupied' is not empty" hook my_hook "$scratch/occupied"
[ ! -e "$scratch/refused" ] || fail "a refused new-plugin created its directory"
[ "$(ls "$scratch/occupied")" = notes.txt ] || fail "a refused new-plugin wrote into a non-empty directory"

# One skeleton per kind with a template, under one parent project.
skeletons=$scratch/skeletons
mkdir -p "$skeletons"
kinds=()
for dir in "$templates"/*/; do
  kind=$(basename "$dir")
  [ "$kind" = common ] || kinds+=("$kind")
done
printf '%s\n' 'cmake_minimum_required(VERSION 3.25)' 'project(skeletons LANGUAGES CXX)' 'enable_testing()' \
  >"$skeletons/CMakeLists.txt"
for kind in "${kinds[@]}"; do
  "$orchestrate" new-plugin "$kind" "my_$kind" "$skeletons/$kind" >/dev/null
  echo "add_subdirectory($kind)" >>"$skeletons/CMakeLists.txt"
done

start=$(date +%s)
configure_against_sdk "$build" "$scratch/prefix" "$skeletons" "$scratch/build"
configured=$(seconds_since "$start")
start=$(date +%s)
# One job, like every other test: the suite runs tests side by side
# (scripts/test), and a test that took every core had to run alone.
cmake --build "$scratch/build" --parallel 1 >/dev/null
built=$(seconds_since "$start")
start=$(date +%s)
ctest --test-dir "$scratch/build" --output-on-failure >"$scratch/ctest.log" ||
  { cat "$scratch/ctest.log"; fail "a skeleton's smoke run failed"; }
trained=$(seconds_since "$start")
echo "${#kinds[@]} skeletons (${kinds[*]}): configure ${configured} s, build ${built} s, smoke runs ${trained} s"

query() { sqlite3 "$scratch/build/$1/smoke.db" "$2"; }
for kind in "${kinds[@]}"; do
  name=my_$kind
  [ "$(query "$kind" "select status from runs")" = finished ] || fail "$kind: the run did not finish"
  [ "$(query "$kind" "select count(*) from run_plugins where name = '$name'")" = 1 ] ||
    fail "$kind: the run store does not name the plugin $name"
  case $kind in
    hook)  # every_n = 2 over 5 updates
      [ "$(query "$kind" "select group_concat(step) from metrics where name = 'train/${name}_loss'")" = 2,4 ] ||
        fail "hook: train/${name}_loss not recorded after updates 2 and 4" ;;
    lr_schedule)  # factor 0.5 on sgd's lr 0.01
      [ "$(query "$kind" "select distinct learning_rate from step_timings")" = 0.005 ] ||
        fail "lr_schedule: the steps did not run at lr 0.005" ;;
    optimizer_wrapper | gradient_compression)
      metric=$([ "$kind" = optimizer_wrapper ] && echo grad_norm || echo sent_norm)
      recorded="select count(*) > 0 from metrics where name = 'train/${name}_$metric' and value > 0"
      [ "$(query "$kind" "$recorded")" = 1 ] ||
        fail "$kind: no train/${name}_$metric recorded" ;;
  esac
  echo "$kind: $name trained, run finished"
done

# The commands new-plugin prints work verbatim from a bare environment: no
# Python environment, no CMAKE_PREFIX_PATH (the SDK's package finds the
# LibTorch it was built with). One kind is enough: the others share the
# template's CMakeLists.txt.
#   run_printed_commands ORCHESTRATE NAME EXPECTED_LINE COMMAND_COUNT
run_printed_commands() {
  local host=$1 name=$2 expected=$3 count=$4
  "$host" new-plugin hook "$name" "$scratch/$name" >"$scratch/$name.txt"
  grep -qF -- "$expected" "$scratch/$name.txt" || fail "new-plugin printed no '$expected': $(cat "$scratch/$name.txt")"
  local printed start
  printed=$(sed -n 's/^  \(cmake .*\)$/\1/p' "$scratch/$name.txt")
  [ "$(printf '%s\n' "$printed" | wc -l)" = "$count" ] ||
    fail "new-plugin printed no $count commands: $(cat "$scratch/$name.txt")"
  start=$(date +%s)
  env -i PATH=/usr/bin:/bin HOME="$HOME" bash -euc "$printed" >"$scratch/$name.log" 2>&1 ||
    { cat "$scratch/$name.log"; fail "the commands printed for $name failed"; }
  grep -q "^CMAKE_BUILD_TYPE:STRING=Release" "$scratch/$name/build/CMakeCache.txt" || fail "the $name build is not Release"
  echo "the printed commands built and tested $name from a bare environment in $(seconds_since "$start") s"
}
# From the install prefix: the prefix itself is the search path.
run_printed_commands "$orchestrate" printed_hook "-DCMAKE_PREFIX_PATH=$scratch/prefix" 2
# From the main build tree, whose prefix holds no CMake package: the commands
# install the SDK from it first, then build against that.
run_printed_commands "$build/bin/orchestrate" build_tree_hook "cmake --install $build --prefix $build/sdk" 3
