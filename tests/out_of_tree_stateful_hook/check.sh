#!/usr/bin/env bash
# A hook with state, built against the installed SDK only (the installed
# example plateau_stop: early stopping that keeps its best loss and its
# count of log points since), survives kill -9 and --resume: the resumed run
# stops at the same step, with the same best loss, as the run never killed.
# Without its state back the resumed hook would start counting afresh and
# stop later. The test plugin count_updates slows each update, so the kill
# lands between the checkpoint of step 10 and the stop.
#   check.sh <main build dir> <scratch dir> <test data dir>
set -euo pipefail
build=$1
scratch=$2
data=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../support/sdk_project.sh"
out_of_tree_project "$build" "$scratch" plateau_stop
orchestrate=$scratch/prefix/bin/orchestrate
plugins=$scratch/plugin:$build/tests/bad_plugins/plugins/counting_hook
unset ORCHESTRATE_PLUGIN_PATH ORCHESTRATE_DB
steps="--set run.max_steps=200 --set run.log_every=5"

recipe() {  # recipe <file> <checkpoint dir>: the tiny recipe, 200 steps, logged and saved every 5
  cat "$data/recipes/tiny_mock.toml" - > "$1" <<TOML
[checkpoint]
dir = "$2"
every_epochs = 0
every_steps = 5
[[hooks]]
plugin = "plateau_stop"
patience = 3
min_delta = 0.05
[[hooks]]
plugin = "count_updates"
sleep_ms = 40
TOML
}
result() {  # result <db>: the run's last step and the hook's best loss
  sqlite3 "$1" "select (select max(step) from step_timings where run_id = 1) || ' ' ||
    (select value from metrics where run_id = 1 and name = 'hook/best_loss' order by id desc limit 1)"
}

recipe "$scratch/whole.toml" "$scratch/ck_whole"
"$orchestrate" run "$scratch/whole.toml" $steps --db "$scratch/whole.db" --plugin-path "$plugins" --quiet \
  > "$scratch/whole.log" 2>&1
read -r whole_step whole_best <<< "$(result "$scratch/whole.db")"
echo "never killed: stopped at step $whole_step of 200"
[ "$whole_step" -gt 10 ] && [ "$whole_step" -lt 200 ] || { echo "the hook must stop between step 10 and 200"; exit 1; }

recipe "$scratch/killed.toml" "$scratch/ck_killed"
"$orchestrate" run "$scratch/killed.toml" $steps --db "$scratch/killed.db" --plugin-path "$plugins" --quiet \
  > "$scratch/first.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do [ -d "$scratch/ck_killed/run-1/step-00000010" ] && break; sleep 0.025; done
kill -9 "$pid"
set +e; { wait "$pid"; } 2>/dev/null; status=$?; set -e
echo "killed: exit $status"
"$orchestrate" run "$scratch/killed.toml" $steps --resume 1 --db "$scratch/killed.db" --plugin-path "$plugins" \
  > "$scratch/resumed.log" 2>&1
resumed_from=$(grep -o "resuming run 1 from step [0-9]*" "$scratch/resumed.log" | grep -o "[0-9]*$") ||
  { cat "$scratch/resumed.log"; exit 1; }
echo "resuming run 1 from step $resumed_from"
[ "$resumed_from" -lt "$whole_step" ] || { echo "the kill came after the stop: nothing was resumed"; exit 1; }
read -r resumed_step resumed_best <<< "$(result "$scratch/killed.db")"
[ "$resumed_step" = "$whole_step" ] && echo "resumed: stopped at the same step" ||
  echo "resumed: stopped at step $resumed_step, never killed: $whole_step"
[ "$resumed_best" = "$whole_best" ] && echo "best loss: the same ($whole_best)" ||
  echo "best loss: $resumed_best, never killed: $whole_best"
