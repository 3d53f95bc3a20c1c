#!/usr/bin/env python3
"""Keeps the commands of README.md and docs/*.md working.

Two checks, each failure named by the doc file and line:

1. Every ```sh run block of README.md and docs/*.md (in that order: the guides build on
   the README's small run) is run, command by command, against the built actex in one
   scratch folder that sees the repository's scripts/ and tests/ (so the bundled corpus
   and tokenizer are found where the docs say). A command that exits non-zero fails.
   A plain ```sh block shows a command with placeholders and is not run.
2. Every `actex SUBCOMMAND ... --flag` in a sh block or an inline code span of README.md,
   docs/*.md and the folder READMEs names a subcommand that exists and a flag its --help
   lists, so docs cannot drift from the code.
3. Every relative link of README.md and docs/*.md names a file that exists and, with a
   #fragment, a heading of that file.

  doc_commands_test.py ACTEX SOURCE_DIR   runs both checks; exit 1 on any failure
  doc_commands_test.py --self-test ACTEX  proves both checks catch what they must
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

COMMAND_TIMEOUT_S = 180
FOLDER_READMES = ("base", "storage", "model", "transport", "coordination", "actors", "bench")


def doc_files(source):
    """README.md, then docs/*.md by name: the order their runnable blocks run in."""
    docs = sorted((source / "docs").glob("*.md"))
    return [source / "README.md"] + docs


def flag_checked_files(source):
    """The docs plus each folder's README that exists."""
    readmes = [source / folder / "README.md" for folder in FOLDER_READMES]
    return doc_files(source) + [readme for readme in readmes if readme.is_file()]


def fenced_blocks(lines):
    """Yields (info words, [(line number, text)]) for every ``` block of a doc."""
    block = None
    for number, line in enumerate(lines, start=1):
        fence = re.match(r"^\s*```(.*)$", line)
        if fence and block is None:
            block = (fence.group(1).split(), [])
        elif fence:
            yield block
            block = None
        elif block is not None:
            block[1].append((number, line))


def logical_commands(block_lines):
    """Joins lines ending in a backslash; yields (first line number, command)."""
    start, parts = None, []
    for number, line in block_lines:
        if not parts:
            start = number
        if line.rstrip().endswith("\\"):
            parts.append(line.rstrip()[:-1])
            continue
        parts.append(line)
        command = " ".join(part.strip() for part in parts).strip()
        parts = []
        if command and not command.startswith("#"):
            yield start, command


def inline_spans(lines):
    """Yields (line number, code span) for spans outside ``` blocks."""
    inside = False
    for number, line in enumerate(lines, start=1):
        if re.match(r"^\s*```", line):
            inside = not inside
            continue
        if not inside:
            for span in re.findall(r"`([^`]+)`", line):
                yield number, span


def without_comment(command):
    """A sh command without its trailing # comment (a # that starts a word)."""
    return re.split(r"(?:^|\s)#", command, maxsplit=1)[0]


def actex_uses(command):
    """Yields (subcommand, [flags]) for every `actex SUB ...` in a command or span."""
    for segment in re.split(r"\|\||&&|[|;]", without_comment(command)):
        words = segment.split()
        subcommand, flags = None, []
        for index, word in enumerate(words):
            if word == "actex" or word.endswith("/actex"):
                if subcommand:
                    yield subcommand, flags
                following = words[index + 1] if index + 1 < len(words) else ""
                subcommand = following if re.fullmatch(r"[a-z][a-z-]*", following) else None
                flags = []
                continue
            flag = re.match(r"^[\[(]*(--[a-z0-9][a-z0-9-]*)", word)
            if subcommand and flag:
                flags.append(flag.group(1))
        if subcommand:
            yield subcommand, flags


class HelpFlags:
    """The subcommands of actex and the flags each one's --help lists, read once."""

    def __init__(self, actex):
        self.actex = actex
        self.flags = {}
        self.subcommands = set(self._listed(["--help"], r"^  ([a-z][a-z-]+)\s{2,}"))

    def _listed(self, arguments, pattern):
        result = subprocess.run([self.actex] + arguments, capture_output=True, text=True)
        names = []
        for line in result.stdout.splitlines():
            match = re.match(pattern, line)
            if match:
                names.extend(re.findall(r"--[a-z0-9][a-z0-9-]*", match.group(1)) or
                             [match.group(1)])
        return names

    def of(self, subcommand):
        if subcommand not in self.flags:
            self.flags[subcommand] = set(self._listed([subcommand, "--help"], r"^\s+(-\S+)"))
        return self.flags[subcommand]


def check_flags(source, actex):
    """Failures of check 2, as 'FILE:LINE: message' lines."""
    help_flags = HelpFlags(actex)
    failures = []
    for path in flag_checked_files(source):
        lines = path.read_text().splitlines()
        mentions = list(inline_spans(lines))
        for info, block_lines in fenced_blocks(lines):
            if info[:1] == ["sh"]:
                mentions.extend(logical_commands(block_lines))
        name = path.relative_to(source)
        for number, text in sorted(mentions):
            for subcommand, flags in actex_uses(text):
                if subcommand not in help_flags.subcommands:
                    failures.append(f"{name}:{number}: actex has no subcommand "
                                    f"'{subcommand}' (actex --help lists "
                                    f"{', '.join(sorted(help_flags.subcommands))})")
                    continue
                for flag in flags:
                    if flag not in help_flags.of(subcommand):
                        failures.append(f"{name}:{number}: actex {subcommand} has no flag "
                                        f"{flag} (not in actex {subcommand} --help)")
    return failures


def heading_anchors(path):
    """The anchors GitHub gives the headings of a Markdown file."""
    anchors = set()
    for line in path.read_text().splitlines():
        heading = re.match(r"^#+\s+(.*)$", line)
        if heading:
            text = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            anchors.add(text.replace(" ", "-"))
    return anchors


def check_links(source):
    """Failures of check 3, as 'FILE:LINE: message' lines."""
    failures = []
    for path in doc_files(source):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z]+:", target):
                    continue
                file_part, _, anchor = target.partition("#")
                linked = (path.parent / file_part).resolve() if file_part else path
                where = f"{path.relative_to(source)}:{number}"
                if not linked.exists():
                    failures.append(f"{where}: the link {target} names no file")
                elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked):
                    failures.append(f"{where}: the link {target}: {linked.name} has no "
                                    f"heading #{anchor}")
    return failures


def scratch_folder(source, actex):
    """A folder that sees scripts/ and tests/ and has actex on PATH, and its env."""
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="actex-doc-commands-"))
    for shared in ("scripts", "tests"):
        if (source / shared).exists():
            (scratch / shared).symlink_to(source / shared)
    (scratch / ".bin").mkdir()
    (scratch / ".bin" / "actex").symlink_to(pathlib.Path(actex).resolve())
    env = dict(os.environ, PATH=f"{scratch / '.bin'}:{os.environ['PATH']}")
    return scratch, env


def run_commands(source, actex):
    """Failures of check 1; stops at the first, since later commands build on it."""
    scratch, env = scratch_folder(source, actex)
    try:
        for path in doc_files(source):
            lines = path.read_text().splitlines()
            for info, block_lines in fenced_blocks(lines):
                if info[:2] != ["sh", "run"]:
                    continue
                for number, command in logical_commands(block_lines):
                    where = f"{path.relative_to(source)}:{number}"
                    print(f"{where}: {command}", flush=True)
                    try:
                        result = subprocess.run(
                            ["bash", "-o", "pipefail", "-c", command], cwd=scratch, env=env,
                            capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
                    except subprocess.TimeoutExpired:
                        return [f"{where}: `{command}` ran past {COMMAND_TIMEOUT_S} s"]
                    if result.returncode != 0:
                        output = (result.stdout + result.stderr).splitlines()[-15:]
                        return [f"{where}: `{command}` exited {result.returncode}:"] + [
                            "    " + line for line in output]
        return []
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def check(source, actex):
    failures = check_flags(source, actex) + check_links(source) + run_commands(source, actex)
    for failure in failures:
        print(failure, file=sys.stderr)
    if failures:
        print("fix the doc (or the command) named above; ```sh run blocks are run, every "
              "`actex SUB --flag` must be in SUB's --help", file=sys.stderr)
    return failures


def self_test(actex):
    """Both checks catch a failing command, a made-up flag and a made-up subcommand."""
    source = pathlib.Path(tempfile.mkdtemp(prefix="actex-doc-commands-self-test-"))
    try:
        (source / "docs").mkdir()
        (source / "README.md").write_text(
            "Try `actex inspect --stats` and `actex verify --no-such-flag`.\n"
            "[ok](docs/a.md) [gone](docs/b.md) [ok](#a-heading) [no](docs/a.md#nowhere)\n"
            "## A heading\n"
            "```sh\n"
            "actex shuffle OUT --to X \\\n"
            "    [--seed 0] [--made-up 1]   # --ignored-in-comment\n"
            "```\n")
        (source / "docs" / "a.md").write_text(
            "```sh run\n"
            "actex --help\n"
            "actex tokenize --help | head -1\n"
            "actex inspect does-not-exist\n"
            "actex frobnicate --help\n"
            "```\n")
        failures = check(source, actex)
        expected = ["README.md:1: actex verify has no flag --no-such-flag",
                    "README.md:2: the link docs/b.md names no file",
                    "README.md:2: the link docs/a.md#nowhere: a.md has no heading #nowhere",
                    "README.md:5: actex shuffle has no flag --made-up",
                    "docs/a.md:5: actex has no subcommand 'frobnicate'",
                    "docs/a.md:4: `actex inspect does-not-exist` exited 2"]
        missed = [want for want in expected
                  if not any(failure.startswith(want) for failure in failures)]
        extra = [failure for failure in failures if failure.startswith(("README", "docs"))
                 and not any(failure.startswith(want) for want in expected)]
        if missed or extra:
            print(f"self-test: missed {missed}, reported wrongly {extra}", file=sys.stderr)
            return 1
        print("self-test: failing commands, unknown flags and subcommands, broken links "
              "are caught with their file and line")
        return 0
    finally:
        shutil.rmtree(source, ignore_errors=True)


def main(arguments):
    if len(arguments) == 2 and arguments[0] == "--self-test":
        return self_test(arguments[1])
    if len(arguments) == 2:
        failures = check(pathlib.Path(arguments[1]).resolve(), arguments[0])
        if not failures:
            print("every doc command runs and names only flags its --help lists; "
                  "every link leads somewhere")
        return 1 if failures else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
