#!/usr/bin/env python3
"""check_layers.py fails on each kind of planted breach, and passes on the tree.

    planted_includes.py BUILD_DIR SOURCE_DIR

Copies core/ to a scratch directory, plants one include at a time in a real
file, and expects check_layers.py to exit 1 with the line that names it; the
unplanted copy must pass. Prints one line per case; exits 1 on any miss.
"""
import os
import shutil
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")

# (file to plant in, the include, what the checker must say)
CASES = [
    ("store/run_store.cpp", "engine/train/strategy.h",
     '"engine/train/strategy.h" belongs to orchestrate_train, which orchestrate_store does not link'),
    ("engine/recipe/recipe.cpp", "engine/setup/smoke_overrides.h",
     '"engine/setup/smoke_overrides.h" belongs to orchestrate_setup, which orchestrate_recipe does not link'),
    ("analysis/reports.cpp", "store/store_sql.h", '"store/store_sql.h" is private to core/store'),
    ("store/run_liveness.cpp", "run_store.h", '"run_store.h" by its bare name; include it as "store/run_store.h"'),
]


def check(build_dir, tree):
    result = subprocess.run([sys.executable, CHECKER, build_dir, tree], capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def main():
    build_dir, source_dir = sys.argv[1], sys.argv[2]
    failed = False
    with tempfile.TemporaryDirectory(prefix="layering-") as scratch:
        shutil.copytree(os.path.join(source_dir, "core"), os.path.join(scratch, "core"))
        code, output = check(build_dir, scratch)
        print(f"unplanted: exit {code}")
        if code != 0:
            print(output)
            failed = True
        for file_name, included, expected in CASES:
            path = os.path.join(scratch, "core", file_name)
            original = open(path, encoding="utf-8").read()
            lines = original.count("\n")
            with open(path, "a", encoding="utf-8") as planted:
                planted.write(f'#include "{included}"\n')
            code, output = check(build_dir, scratch)
            want = f"core/{file_name}:{lines + 1}: {expected}"
            found = want in output
            print(f"{file_name} + {included}: exit {code}, {'named' if found else 'NOT named'}")
            if code != 1 or not found:
                print(f"  expected: {want}\n  got:\n{output}")
                failed = True
            with open(path, "w", encoding="utf-8") as restored:
                restored.write(original)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
