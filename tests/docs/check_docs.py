#!/usr/bin/env python3
"""The documentation's promises, checked: every command in the CLI's table
(what `orchestrate --help` lists, from core/cli/command.cpp) has its section
in share/doc/cli.md, every relative link in the README and the topic pages
leads to a file that exists (and, with a #fragment, to a heading in it), and
the README stays a front page.

usage: check_docs.py SOURCE_DIR ORCHESTRATE_BINARY
"""
import os
import re
import subprocess
import sys

MOST_README_LINES = 160  # the front page the README is, not a manual


def anchor_of(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def headings(path):
    anchors, in_code = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            anchors.add(anchor_of(line.lstrip("#")))
    return anchors


def links(path):
    """(line number, target) of each relative Markdown link outside code blocks."""
    found, in_code = [], False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = re.sub(r"`[^`]*`", "", line)  # inline code is not a link
        for target in re.findall(r"\[[^\]]+\]\(([^)\s]+)\)", line):
            if not re.match(r"[a-z]+:", target):
                found.append((number, target))
    return found


def main():
    source, binary = sys.argv[1], sys.argv[2]
    problems = []
    docs = os.path.join(source, "share", "doc")
    pages = [os.path.join(source, "README.md")] + sorted(
        os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))
    for page in pages:
        for number, target in links(page):
            file_part, _, fragment = target.partition("#")
            linked = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) if file_part else page
            where = "%s:%d" % (os.path.relpath(page, source), number)
            if not os.path.exists(linked):
                problems.append("%s: link to %s: no such file" % (where, target))
            elif fragment and linked.endswith(".md") and fragment not in headings(linked):
                problems.append("%s: link to %s: no heading with that anchor in %s" %
                                (where, target, os.path.relpath(linked, source)))

    usage = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    commands = re.findall(r"^  ([a-z][a-z-]*) ", usage.split("commands:", 1)[1], re.M)
    if len(commands) < 10:
        problems.append("orchestrate --help listed %d commands; the parse of its table is broken" % len(commands))
    cli = headings(os.path.join(docs, "cli.md"))
    for command in commands:
        if anchor_of("`orchestrate %s`" % command) not in cli:
            problems.append("share/doc/cli.md: no section '### `orchestrate %s`' for the command %s" %
                            (command, command))

    readme_lines = sum(1 for _ in open(os.path.join(source, "README.md"), encoding="utf-8"))
    if readme_lines > MOST_README_LINES:
        problems.append("README.md has %d lines, more than the front page's %d: move the detail to a page in "
                        "share/doc/" % (readme_lines, MOST_README_LINES))

    for problem in problems:
        print(problem)
    print("checked %d pages, %d commands: %d problems" % (len(pages), len(commands), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
