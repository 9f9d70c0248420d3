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
# Python environment, no CMAKE_PREFIX_PATH, the install prefix printed (the
# SDK's package finds the LibTorch it was built with). One kind is enough:
# the others share the template's CMakeLists.txt.
"$orchestrate" new-plugin hook printed_hook "$scratch/printed" >"$scratch/printed.txt"
grep -qF -- "-DCMAKE_PREFIX_PATH=$scratch/prefix" "$scratch/printed.txt" ||
  fail "new-plugin printed another prefix than $scratch/prefix: $(cat "$scratch/printed.txt")"
printed=$(sed -n 's/^  \(cmake .*\)$/\1/p' "$scratch/printed.txt")
[ "$(printf '%s\n' "$printed" | wc -l)" = 2 ] || fail "new-plugin printed no build commands: $(cat "$scratch/printed.txt")"
start=$(date +%s)
env -i PATH=/usr/bin:/bin HOME="$HOME" bash -euc "$printed" >"$scratch/printed.log" 2>&1 ||
  { cat "$scratch/printed.log"; fail "the printed commands failed"; }
grep -q "^CMAKE_BUILD_TYPE:STRING=Release" "$scratch/printed/build/CMakeCache.txt" || fail "the printed build is not Release"
echo "the printed commands built and tested printed_hook from a bare environment in $(seconds_since "$start") s"

# The same from the main build tree, whose prefix holds no CMake package: the
# printed commands install the SDK from it first, then build against that.
"$build/bin/orchestrate" new-plugin hook build_tree_hook "$scratch/from_build" >"$scratch/from_build.txt"
grep -qF -- "cmake --install $build --prefix $build/sdk" "$scratch/from_build.txt" ||
  fail "new-plugin from the build tree printed no SDK install: $(cat "$scratch/from_build.txt")"
printed=$(sed -n 's/^  \(cmake .*\)$/\1/p' "$scratch/from_build.txt")
[ "$(printf '%s\n' "$printed" | wc -l)" = 3 ] || fail "new-plugin printed no build commands: $(cat "$scratch/from_build.txt")"
start=$(date +%s)
env -i PATH=/usr/bin:/bin HOME="$HOME" bash -euc "$printed" >"$scratch/from_build.log" 2>&1 ||
  { cat "$scratch/from_build.log"; fail "the commands printed from the build tree failed"; }
echo "the commands printed from the build tree installed the SDK, built and tested build_tree_hook in $(seconds_since "$start") s"
