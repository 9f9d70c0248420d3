#!/usr/bin/env bash
# The CSV-manifest dataset (csv_manifest.cpp), built against the installed
# SDK only, must: pass the installed conformance checks with its own sample
# settings, train 50 steps, and treat a corrupt file exactly as image_folder
# does (the same error with on_corrupt = "fail", the same run events with
# "skip"), on the same images. A wrapper dataset (first_images.cpp) that
# builds image_folder through the registry passes the checks too.
#   check.sh <main build dir> <scratch dir> <test data dir>
set -euo pipefail
build=$1
scratch=$2
data=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../support/sdk_project.sh"
out_of_tree_project "$build" "$scratch" csv_manifest
# Its own unit tests, on the installed test helpers.
ctest --test-dir "$scratch/plugin" 2>&1 | grep "tests passed"
orchestrate=$scratch/prefix/bin/orchestrate
export ORCHESTRATE_PLUGIN_PATH=$scratch/plugin
wc -l < "$scratch/source/csv_manifest.cpp" | awk '{ if ($1 >= 120) { print "csv_manifest.cpp has " $1 " lines (the SDK should keep it under 120)"; exit 1 } }'

# The committed Fashion-MNIST image folder, and manifests listing the same
# files with image_folder's labels (the sorted class folders' positions).
cp -r "$data/fashion_mnist_folder" "$scratch/images"
for split in train val; do
  (cd "$scratch/images" && ls "$split" | sort | awk '{ print NR - 1 "\t" $0 }') |
    while IFS=$'\t' read -r label class; do
      for file in "$scratch/images/$split/$class"/*; do echo "$split/$class/$(basename "$file"),$label"; done
    done > "$scratch/images/$split.csv"
done
printf 'train = "%s"\ntest = "%s"\nchannels = 1\n' "$scratch/images/train.csv" "$scratch/images/val.csv" > "$scratch/sample.toml"
"$orchestrate" conformance dataset csv_manifest --settings "$scratch/sample.toml" 2>&1 | grep -E "^\[  (PASSED|FAILED) "
# Without its sample data, the required key is named with the table to add (exit 2).
if "$orchestrate" conformance dataset csv_manifest > "$scratch/no_settings.log" 2>&1; then
  echo "conformance passed a dataset with no data"; exit 1
fi
grep -o "dataset 'csv_manifest' needs its required key '[a-z]*' .*give it in a settings file: --settings FILE.toml with \[dataset.csv_manifest\]" \
  "$scratch/no_settings.log" | head -1 | sed 's/(.*)/(...)/'
# --plugin-path and no KIND NAME: this project's plugins only, not the built-ins.
printf '[dataset.csv_manifest]\ntrain = "%s"\ntest = "%s"\nchannels = 1\n[dataset.first_images]\nroot = "%s"\nchannels = 1\ncount = 8\n' \
  "$scratch/images/train.csv" "$scratch/images/val.csv" "$scratch/images" > "$scratch/both.toml"
"$orchestrate" conformance --plugin-path "$scratch/plugin" --settings "$scratch/both.toml" > "$scratch/own.log" 2>&1
echo "own plugins only: $(grep -c '^\[       OK \]' "$scratch/own.log") checks, $(grep -cE '^\[       OK \] .*/(mock|fashion_mnist|sgd|lenet)' "$scratch/own.log") of built-ins"
# A wrapper that builds image_folder through the registry passes too.
printf '[dataset.first_images]\nroot = "%s"\nchannels = 1\ncount = 8\n' "$scratch/images" > "$scratch/wrapper.toml"
"$orchestrate" conformance dataset first_images --settings "$scratch/wrapper.toml" 2>&1 | grep -E "^\[  (PASSED|FAILED) " |
  sed 's/^/first_images: /'

recipe() {  # recipe <file> <dataset table lines> <on_corrupt>
  cat > "$1" <<TOML
schema_version = 1
[run]
max_steps = 50
batch_size = 8
[data]
$2
channels = 1
height = 28
width = 28
on_corrupt = "$3"
max_corrupt_fraction = 0.1
[model]
plugin = "lenet"
[optimizer]
plugin = "sgd"
lr = 0.05
TOML
}
csv_table="plugin = \"csv_manifest\"
train = \"$scratch/images/train.csv\"
test = \"$scratch/images/val.csv\""
folder_table="plugin = \"image_folder\"
root = \"$scratch/images\""
recipe "$scratch/csv.toml" "$csv_table" fail
"$orchestrate" run "$scratch/csv.toml" --db "$scratch/runs.db" --quiet
echo "trained steps: $(sqlite3 "$scratch/runs.db" "select max(step) from step_timings")"

# One corrupt file, in both layouts.
echo "not an image" > "$scratch/images/train/3_Dress/corrupt.png"
echo "train/3_Dress/corrupt.png,3" >> "$scratch/images/train.csv"
for policy in fail skip; do
  recipe "$scratch/csv_$policy.toml" "$csv_table" "$policy"
  recipe "$scratch/folder_$policy.toml" "$folder_table" "$policy"
done
set +e
"$orchestrate" run "$scratch/csv_fail.toml" --db "$scratch/fail.db" --quiet 2> "$scratch/csv_fail.err"
csv_status=$?
"$orchestrate" run "$scratch/folder_fail.toml" --db "$scratch/fail.db" --quiet 2> "$scratch/folder_fail.err"
folder_status=$?
set -e
echo "on_corrupt = fail: exit $csv_status (csv_manifest), $folder_status (image_folder)"
sed 's/image_folder/DATASET/g' "$scratch/folder_fail.err" > "$scratch/folder_fail.norm"
sed 's/csv_manifest/DATASET/g' "$scratch/csv_fail.err" > "$scratch/csv_fail.norm"
diff "$scratch/folder_fail.norm" "$scratch/csv_fail.norm"
grep -c "corrupt.png" "$scratch/csv_fail.err" | sed 's/^/fail message names the file: /'

"$orchestrate" run "$scratch/csv_skip.toml" --db "$scratch/skip.db" --quiet >/dev/null 2>&1
"$orchestrate" run "$scratch/folder_skip.toml" --db "$scratch/skip.db" --quiet >/dev/null 2>&1
# The two reads run at once (process substitution): the first to open the
# store may recover its WAL while the second waits, so give it a busy timeout.
events() { sqlite3 -cmd ".timeout 10000" "$scratch/skip.db" "select message from events e join runs r on r.id = e.run_id
  where e.kind = 'bad_data' and r.id = $1 order by e.id" | sed "s/$2/DATASET/g"; }
diff <(events 1 csv_manifest) <(events 2 image_folder)
echo "on_corrupt = skip: $(events 1 csv_manifest | wc -l) bad_data events, the same for both"
