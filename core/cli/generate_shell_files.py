#!/usr/bin/env python3
"""Writes the bash completion and the man page's extra sections from the
CLI's own help (`orchestrate --help` lists the command table, `orchestrate
help CMD` each command's options, or the subcommands of a command made of
them, and `orchestrate help CMD SUB` each subcommand's), so neither can
drift from the program.
Run by the build after the front end is linked; help2man then makes the man
page from --help, --version and the sections written here.

usage: generate_shell_files.py ORCHESTRATE_BINARY CLI_MD COMPLETION_OUT MAN_INCLUDE_OUT
"""
import re
import subprocess
import sys

FORMAT_WORDS = ("table", "csv", "json", "markdown", "text")
# Options whose value is a file or directory: completed with file names.
PATH_OPTIONS = ("--db", "--plugin-path", "-o", "--output", "--out", "--checkpoint", "--settings", "--resume")


def help_of(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, check=True).stdout


def command_table(binary):
    """(name, summary) of each command, in the order --help lists them."""
    text = help_of(binary, "--help")
    table = text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    commands = []
    for line in table.splitlines():
        match = re.match(r"  (\S+)\s+(.*)", line)
        if match:
            commands.append((match.group(1), match.group(2)))
        elif commands:  # a wrapped summary
            commands[-1] = (commands[-1][0], commands[-1][1] + " " + line.strip())
    return commands


def options_of(command_help):
    """Every --option (and -x) the help lists, and the --format words it names."""
    options, formats = [], []
    for line in command_help.splitlines():
        match = re.match(r"  (-\w)?(?: \[ )?(--[\w-]+)?", line)
        if not match or not (match.group(1) or match.group(2)):
            continue
        for option in (match.group(1), match.group(2)):
            if option and option not in options:
                options.append(option)
        if match.group(2) == "--format":
            formats = [word for word in FORMAT_WORDS if re.search(r"\b%s\b" % word, line)]
    return options, formats


def subcommands_of(command, command_help):
    """The subcommands a command made of them lists in its help (the
    command table's): `usage: orchestrate report <report> [options]`, then
    `reports:` and one `  name  summary` line each. None for a plain command."""
    match = re.match(r"usage: orchestrate %s <(\w+)> \[options\]\n\n\1s:\n" % re.escape(command), command_help)
    if not match:
        return []
    section = command_help[match.end():].split("\n\n", 1)[0]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ") and not line.startswith("   ")]


def helps_of(binary, name):
    """The command's help, then each of its subcommands' (name, help)."""
    text = help_of(binary, "help", name)
    return text, [(sub, help_of(binary, "help", name, sub)) for sub in subcommands_of(name, text)]


def bash_completion(binary, commands):
    cases, format_cases, sub_cases = [], [], []
    for name, _ in commands:
        text, subs = helps_of(binary, name)
        options, formats = [], []
        for help_text in [text] + [sub_help for _, sub_help in subs]:
            more_options, more_formats = options_of(help_text)
            options += [option for option in more_options if option not in options]
            formats += [word for word in more_formats if word not in formats]
        cases.append(f"    {name}) options='{' '.join(options)}' ;;")
        if formats:
            format_cases.append(f"    {name}) formats='{' '.join(formats)}' ;;")
        if subs:
            sub_cases.append(f"    {name}) subcommands='{' '.join(sub for sub, _ in subs)}' ;;")
    names = " ".join(name for name, _ in commands)
    newline = "\n"
    return f"""# bash completion for orchestrate, generated from its help by
# core/cli/generate_shell_files.py at build time: do not edit.
_orchestrate() {{
  local cur prev words cword
  _init_completion || return
  local commands='{names} help'
  if ((cword == 1)); then
    COMPREPLY=($(compgen -W "$commands --help --version -V" -- "$cur"))
    return
  fi
  local command=${{words[1]}} options='' formats='table csv json markdown' subcommands=''
  case $command in
{newline.join(cases)}
    help) COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
  esac
  case $command in
{newline.join(format_cases)}
  esac
  case $command in
{newline.join(sub_cases)}
  esac
  case $prev in
    --format) COMPREPLY=($(compgen -W "$formats" -- "$cur")); return ;;
    {'|'.join(PATH_OPTIONS)}) _filedir; return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  elif [[ -n $subcommands && $cword == 2 ]]; then
    COMPREPLY=($(compgen -W "$subcommands" -- "$cur"))
  elif [[ $command =~ ^(run|eval|bench-input)$ && $cword == 2 ]]; then
    # a recipe: a TOML file, or a shipped recipe's name
    local names
    names=$("${{words[0]}}" recipes --format csv 2> /dev/null | tail -n +2 | cut -d, -f1)
    _filedir toml
    COMPREPLY+=($(compgen -W "$names" -- "$cur"))
  else
    _filedir
  fi
}}
complete -F _orchestrate orchestrate
"""


def markdown_table(cli_md, heading):
    """The rows of the first table under `## heading` in cli.md, as (cell, cell) pairs."""
    text = open(cli_md, encoding="utf-8").read().split("## " + heading + "\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows.append(cells)
    return rows[1:]  # past the header


def roff(text):
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)  # links: their words
    return text.replace("\\", "\\\\").replace("`", "").replace("-", "\\-")


def man_include(binary, commands, cli_md):
    out = ["[COMMANDS]"]
    for name, _ in commands:
        text, subs = helps_of(binary, name)
        for title, help_text in [(name, text)] + [(f"{name} {sub}", sub_help) for sub, sub_help in subs]:
            out.append(f".SS {title}")
            out.append(".nf")
            # A line starting with . or ' would be a roff request: \& keeps it text.
            out.extend(("\\&" if line[:1] in (".", "'") else "") + roff(line)
                       for line in help_text.rstrip().splitlines())
            out.append(".fi")
    out.append("[EXIT STATUS]")
    for code, meaning in markdown_table(cli_md, "Exit codes"):
        out += [".TP", f".B {code}", roff(meaning)]
    out.append("[ENVIRONMENT]")
    for variable, meaning in markdown_table(cli_md, "Environment"):
        out += [".TP", f".B {roff(variable)}", roff(meaning)]
    out.append("[SEE ALSO]")
    out.append("The topic pages installed in share/doc/orchestrate: getting\\-started.md, cli.md, recipes.md, "
               "reports.md, run\\-store.md, distributed.md, and the JSON schemas in schemas/.")
    return "\n".join(out) + "\n"


def main():
    binary, cli_md, completion_out, include_out = sys.argv[1:5]
    commands = command_table(binary)
    with open(completion_out, "w") as f:
        f.write(bash_completion(binary, commands))
    with open(include_out, "w") as f:
        f.write(man_include(binary, commands, cli_md))


if __name__ == "__main__":
    main()
