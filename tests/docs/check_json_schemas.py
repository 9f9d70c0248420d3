#!/usr/bin/env python3
"""Every `--format json` keeps its documented schema (share/doc/schemas):
each command of `orchestrate --help` whose help offers --format json has a
schema, and its output on a real run store validates against it (fixed keys:
every schema lists every key as required and no other). Numbers are the
stored ones at full precision, times ISO-8601 UTC.

Two short training runs on the `mock` dataset give the store; then each
command that prints JSON runs once against it.

usage: check_json_schemas.py SOURCE_DIR ORCHESTRATE_BINARY
(run by the project's venv python: it needs jsonschema, installed by scripts/setup)
"""
import json
import os
import re
import sqlite3
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    import jsonschema
except ImportError:
    sys.exit("check_json_schemas: jsonschema is missing: run scripts/setup "
             "(or pip install jsonschema==4.26.0 into the project's venv)")

RECIPE = """schema_version = 1
[run]
name = "schema_probe"
device = "cpu"
batch_size = 32
max_steps = 8
log_every = 2
num_workers = 0
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
num_classes = 10
train_size = 256
test_size = 64
[model]
plugin = "convnet"
[optimizer]
plugin = "adam"
lr = 0.001
[checkpoint]
every_epochs = 0
at_end = true
[log]
progress = "never"
"""


def png(path, width=28, height=28):
    """A grey PNG, written by hand so the test needs no imaging package."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + bytes((x * 9) % 256 for x in range(width)) for _ in range(height))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def main():
    source, binary = sys.argv[1], sys.argv[2]
    schema_dir = os.path.join(source, "share", "doc", "schemas")
    failures = []

    def orchestrate(*args):
        done = subprocess.run([binary, *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"orchestrate {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        return done.stdout

    # Which commands print JSON: the help of each, so a new one cannot be missed.
    help_text = orchestrate("--help")
    commands = [line.split()[0] for line in help_text.split("commands:")[1].split("\n\n")[0].splitlines()
                if line.startswith("  ") and line.strip()]
    def offers_json(text):
        return "--format" in text and "json" in text.split("--format", 1)[1].splitlines()[0]

    # A command made of subcommands lists them in its help (`reports:`); each
    # subcommand that prints JSON has its own schema, COMMAND-SUBCOMMAND.
    expected = []
    for command in commands:
        text = orchestrate("help", command)
        listed = re.match(r"usage: orchestrate %s <(\w+)> \[options\]\n\n\1s:\n" % re.escape(command), text)
        if not listed:
            expected += [command] if offers_json(text) else []
            continue
        section = text[listed.end():].split("\n\n", 1)[0]
        for sub in [line.split()[0] for line in section.splitlines() if line.startswith("  ") and line[2] != " "]:
            if offers_json(orchestrate("help", command, sub)):
                expected.append(f"{command}-{sub}")
    expected.sort()
    present = sorted(name[:-len(".schema.json")] for name in os.listdir(schema_dir) if name.endswith(".schema.json"))
    if expected != present:
        failures.append(f"schemas {present} but commands with --format json {expected}")

    def check(schema_name, text, what):
        schema = json.load(open(os.path.join(schema_dir, schema_name + ".schema.json")))
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            failures.append(f"{what}: not JSON ({error}): {text[:200]}")
            return None
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(document), key=str)
        for error in errors[:5]:
            failures.append(f"{what}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
        print(f"{what}: {'ok' if not errors else f'{len(errors)} errors'}")
        return document

    with tempfile.TemporaryDirectory() as scratch:
        recipe = os.path.join(scratch, "probe.toml")
        with open(recipe, "w") as f:
            f.write(RECIPE)
        db = os.path.join(scratch, "runs.db")
        first = check("run", orchestrate("run", recipe, "--db", db, "--format", "json", "--tag", "team=vision"),
                      "run --format json")
        check("run", orchestrate("run", recipe, "--db", db, "--format", "json", "--set", "optimizer.lr=0.002"),
              "run --format json (second)")
        runs = check("runs", orchestrate("runs", "--db", db, "--format", "json"), "runs")
        check("runs", orchestrate("runs", "--db", db, "--format", "json", "--sort", "train/top1"), "runs --sort")
        show = check("show", orchestrate("show", "1", "--db", db, "--format", "json"), "show")
        check("compare", orchestrate("compare", "1", "2", "--db", db, "--format", "json"), "compare")
        check("report-throughput", orchestrate("report", "throughput", "1", "2", "--db", db, "--format", "json"),
              "report throughput")
        check("report-regressions", orchestrate("report", "regressions", "--db", db, "--format", "json"),
              "report regressions")
        check("recipes", orchestrate("recipes", "--format", "json"), "recipes")
        describe = check("describe", orchestrate("describe", "model", "resnet_v1", "--format", "json"),
                         "describe model resnet_v1")
        check("describe", orchestrate("describe", "recipe", "run", "--format", "json"), "describe recipe run")
        check("describe", orchestrate("describe", "model", "--format", "json"), "describe model")
        check("describe", orchestrate("describe", "recipe", "--format", "json"), "describe recipe")
        check("plugins", orchestrate("plugins", "--format", "json"), "plugins")
        check("env", orchestrate("env", "--format", "json"), "env")
        checkpoints = check("checkpoints", orchestrate("checkpoints", "1", "--db", db, "--format", "json"),
                            "checkpoints")
        checkpoint = first["checkpoint"] if first else checkpoints[0]["path"]
        check("weights-list", orchestrate("weights", "list", checkpoint, "--format", "json"), "weights list")
        check("eval", orchestrate("eval", recipe, "--checkpoint", "1", "--db", db, "--format", "json"), "eval")
        check("bench-input", orchestrate("bench-input", recipe, "--batches", "2", "--format", "json"), "bench-input")
        spec = os.path.join(scratch, "lr.toml")
        with open(spec, "w") as f:
            f.write('[sweep]\nrecipe = "probe.toml"\nmetric = "eval/top1"\nconcurrency = 1\n'
                    '[sweep.parameters]\n"optimizer.lr" = [0.001, 0.002]\n')
        check("sweep", orchestrate("sweep", spec, "--db", db, "--format", "json"), "sweep")
        check("sweep", orchestrate("sweep", spec, "--dry-run", "--format", "json"), "sweep --dry-run")
        check("sweep", orchestrate("sweep", "show", "1", "--db", db, "--format", "json"), "sweep show")
        check("sweeps", orchestrate("sweeps", "--db", db, "--format", "json"), "sweeps")
        served = os.path.join(scratch, "served")
        orchestrate("export", "serving", "1", "--db", db, "-o", served)
        image = os.path.join(scratch, "grey.png")
        png(image)
        check("predict", orchestrate("predict", os.path.join(served, "schema_probe"), image, "--format", "json"),
              "predict")

        # What a program relies on beyond the shapes: the stored values at full
        # precision, typed defaults, tags as an object.
        with sqlite3.connect(db) as connection:
            stored = connection.execute("select value from metrics where run_id = 1 and name = 'train/loss' "
                                        "order by step desc limit 1").fetchone()[0]
        if runs:
            oldest = [run for run in runs if run["id"] == 1][0]
            if oldest["metrics"]["train/loss"] != stored:
                failures.append(f"runs: train/loss {oldest['metrics']['train/loss']!r}, stored {stored!r}")
            if oldest["tags"] != {"team": "vision"}:
                failures.append(f"runs: tags {oldest['tags']!r}")
        if first and first["final_metrics"].get("train/loss") != stored:
            failures.append(f"run: train/loss {first['final_metrics'].get('train/loss')!r}, stored {stored!r}")
        if show and show["run"]["tags"] != {"team": "vision"}:
            failures.append(f"show: tags {show['run']['tags']!r}")
        if describe:
            defaults = {row["key"]: row["default"] for row in describe}
            if defaults.get("depth") != 50 or defaults.get("zero_init_residual") is not False:
                failures.append(f"describe: defaults not typed: {defaults}")

    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
