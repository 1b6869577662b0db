"""Settings declared once, and the files that repeat them checked against the declaration.

Each instructor command is declared once (``whole_transformer/course/commands/``: its function, its arguments
and its help line together); ``python -m whole_transformer.course --help`` is built from those declarations, and
the Makefile, which cannot read them without starting Python, is checked against them here: ``make help`` says
of each command what its declaration says, and a command's target runs that command with the variables it names.
Each environment variable is read in one helper and listed in docs/code.md's table.
"""

from __future__ import annotations

import re
from pathlib import Path

from whole_transformer.course.__main__ import parser
from whole_transformer.course.commands import COMMANDS

MAKEFILE = Path(__file__).resolve().parents[1] / "Makefile"
COURSE_CALL = re.compile(r"-m whole_transformer\.course ([a-z][a-z-]*)")


def recipes(text: str) -> dict[str, str]:
    """Each Makefile target's recipe (its tab-indented lines, joined), by target."""
    found = {}
    for m in re.finditer(r"^([a-z][a-z-]*):[^=\n]*\n((?:\t.*\n)*)", text, re.M):
        found[m.group(1)] = m.group(2)
    return found


def help_entries(recipe: str) -> dict[str, tuple[str, str]]:
    """``make help``'s entries: target → (the text after ``make <target>``, the indented lines under it, joined)."""
    entries: dict[str, tuple[str, str]] = {}
    target = ""
    for echoed in re.findall(r'^\t@echo "(.*)"$', recipe, re.M):
        echoed = echoed.replace('\\"', '"')
        if echoed.startswith("make "):
            target, _, rest = echoed.removeprefix("make ").partition(" ")
            entries[target] = (rest.strip(), "")
        elif target:
            first, more = entries[target]
            entries[target] = (first, f"{more} {echoed.strip()}".strip())
    return entries


def made() -> dict[str, str]:
    """The commands that have a Makefile target, with what make help says under their help line."""
    return {name: c.make for name, c in COMMANDS.items() if c.make is not None}


def test_make_help_says_what_each_command_is_declared_to_say():
    entries = help_entries(recipes(MAKEFILE.read_text())["help"])
    for name, variables in made().items():
        assert name in entries, f"make help does not list make {name}"
        assert entries[name] == (COMMANDS[name].help, variables), (
            f"make help's lines for make {name} differ from its declaration: {entries[name]} != "
            f"{(COMMANDS[name].help, variables)}"
        )


def test_a_command_target_runs_its_own_command_and_only_declared_ones():
    calls = {target: COURSE_CALL.findall(recipe) for target, recipe in recipes(MAKEFILE.read_text()).items()}
    called = {target: found for target, found in calls.items() if found}
    assert {t: [t] for t in made()} == called


def test_a_command_target_passes_on_every_variable_its_help_names():
    text = MAKEFILE.read_text()
    targets = recipes(text)
    for name, variables in made().items():
        for var in re.findall(r"\b([A-Z][A-Z_]+)=", variables):
            if var == "DB_URL":  # read from the environment by every command (docs/code.md)
                continue
            assert f"$({var})" in targets[name] or (f"$({var}_FLAG)" in targets[name] and f"$({var}))" in text), (
                f"make {name}'s help names {var}=, which its recipe does not pass on"
            )


def test_the_command_line_lists_each_declared_command_with_its_help_line():
    (commands,) = [a for a in parser()._actions if a.dest == "command"]
    listed = {c.dest: c.help for c in commands._choices_actions}
    assert listed == {name: c.help for name, c in COMMANDS.items()}
    assert all(name == c.name for name, c in COMMANDS.items())


# ------------------------------------------------------------------------------ environment variables
# Each variable the package reads is read in one helper (course/env_vars.py, envflags.py, and for the sandboxed
# programs sandbox/limits.py) and listed in docs/code.md's table; elsewhere the environment is only copied or
# passed on (PATH, a child's whole environment).
PACKAGE = MAKEFILE.parent / "whole_transformer"
HELPERS = {"course/env_vars.py", "envflags.py", "course/sandbox/limits.py"}
ENV_READ = re.compile(r"os\.environ(?:\.get|\.pop|\[)\(?\s*(\"?[A-Za-z_][\w.]*\"?)|os\.getenv\(")
NAMED = re.compile(r"\"((?:WT_|NBGRADER_|DB_)[A-Z_]+)\"")


def module_texts() -> dict[str, str]:
    return {
        str(p.relative_to(PACKAGE)): p.read_text(encoding="utf-8")
        for p in PACKAGE.rglob("*.py")
        if "templates" not in p.parts
    }


def test_the_environment_is_read_in_the_helpers_only():
    reads = {
        f"{name}: {m.group(0)}"
        for name, text in module_texts().items()
        if name not in HELPERS
        for m in ENV_READ.finditer(text)
        if m.group(1) != '"PATH"'  # passed on with this environment's programs first
    }
    assert not reads, f"environment variables read outside {sorted(HELPERS)}: {sorted(reads)}"


def test_docs_list_every_variable_the_helpers_name():
    section = (MAKEFILE.parent / "docs" / "code.md").read_text().split("## Environment variables", 1)[1]
    texts = module_texts()
    named = {v for helper in HELPERS for v in NAMED.findall(texts[helper]) if not v.endswith("_")} - {"WT_EXAMPLE"}
    assert named >= {"WT_BWRAP", "DB_URL", "WT_LABS_HEADLESS", "WT_LIMIT_AS", "WT_KERNEL_ZYGOTE"}
    assert not {v for v in named if f"`{v}`" not in section}, "docs/code.md's table lacks some"
