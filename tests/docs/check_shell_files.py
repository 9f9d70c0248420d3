#!/usr/bin/env python3
"""The generated man page and bash completion do what a user expects: `man`
renders a page with every command, the exit codes and the environment; bash
(with Debian's bash-completion) completes commands, subcommands, options,
--format values and shipped recipe names.

usage: check_shell_files.py BUILD_DIR ORCHESTRATE_BINARY
"""
import os
import subprocess
import sys

BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"


def main():
    build, binary = sys.argv[1], sys.argv[2]
    completion = os.path.join(build, "share", "bash-completion", "completions", "orchestrate")
    man_page = os.path.join(build, "share", "man", "man1", "orchestrate.1")
    failures = []

    page = subprocess.run(["man", "-l", "-P", "cat", man_page], capture_output=True, text=True,
                          env=dict(os.environ, MANWIDTH="100"))
    if page.returncode != 0:
        failures.append(f"man -l {man_page}: {page.stderr.strip()}")
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    commands = [line.split()[0] for line in help_text.split("commands:\n")[1].split("\n\n")[0].splitlines()
                if line.startswith("  ") and not line.startswith("   ")]
    for expected in ["COMMANDS", "EXIT STATUS", "ENVIRONMENT", "ORCHESTRATE_DB", "usage: orchestrate report"] + \
                    [f"usage: orchestrate {command}" for command in commands if command != "report"]:
        if expected not in page.stdout:
            failures.append(f"the man page has no '{expected}'")

    if not os.path.exists(BASH_COMPLETION):
        sys.exit("check_shell_files: bash-completion is missing: apt-get install bash-completion (scripts/setup does)")

    def complete(*words):
        """COMPREPLY for the command line `orchestrate WORDS...` with the cursor at its end."""
        line = " ".join((binary,) + words)
        script = f"""
source {BASH_COMPLETION}
source {completion}
COMP_WORDS=({binary} {' '.join(repr(w) if w else "''" for w in words)})
COMP_CWORD={len(words)}
COMP_LINE={line!r}
COMP_POINT={len(line)}
_orchestrate
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
        return sorted(set(done.stdout.split()))

    cases = [
        (("re",), ["recipes", "report", "rerun"]),
        (("report", "th"), ["throughput"]),
        (("weights", ""), ["export", "list"]),
        (("runs", "--fo"), ["--format"]),
        (("report", "throughput", "--format", ""), ["csv", "json", "markdown", "table"]),
        (("run", "--format", ""), ["json", "text"]),
        (("run", "fashion_mnist_f"), ["fashion_mnist_fast", "fashion_mnist_first5", "fashion_mnist_folder"]),
    ]
    for words, expected in cases:
        got = complete(*words)
        print(f"orchestrate {' '.join(words)}<TAB>: {' '.join(got)}")
        if got != expected:
            failures.append(f"'orchestrate {' '.join(words)}<TAB>' completes {got}, expected {expected}")

    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
