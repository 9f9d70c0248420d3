#!/usr/bin/env bash
# Installs the SDK from the main build, builds the out-of-tree plugin against
# it, and checks the host loads it and trains with it.
#   check.sh <main build dir> <scratch dir>
set -euo pipefail
build=$1
scratch=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../support/sdk_project.sh"
out_of_tree_project "$build" "$scratch" "$here"
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
