"""The tested console examples of README.md and docs/: how they are found, run and rewritten.

Every ```console block is a shell session: lines starting with `$ ` are commands (a line ending
in `\\` continues on the next), the lines after a command up to the next one are what it prints
(stdout and stderr together). The blocks of one file run in order, in one scratch copy of the
repository's tracked files (so the committed night is there and the examples may change it
freely), with the venv's `numbermatch` first on PATH and a fixed terminal (80 columns, no colour).
What a night changes (`generated/`: the nights and the stock, which `make nightly` moves puzzles
out of) is copied as committed, never as the working tree has it, so the examples print the same
after `make nightly` as before; `--rewrite` refuses while those committed files differ in the
working tree, since it would write output from files that are not what the checkout holds.
A run of exactly three dots (`...`) in the shown output matches any text, as doctest's ELLIPSIS
does: use it where output legitimately varies (seconds, node counts of a timed search, paths).

Parsing is sybil's (its markdown fenced-block lexer and its `skip` directive), so blocks are found
the way a Markdown renderer finds them, and `<!-- skip: next -->` before a block leaves it out.
Sybil's evaluator returns the difference as the failure, which the pytest test reports with the
file and line. `python -m tests.docs_examples --rewrite [FILE...]` (`make docs-examples`) runs the
same blocks and writes what the commands print now into the files, keeping the shown `...` lines
that still match: the one command that brings the docs up to date after a change of output.
"""

from __future__ import annotations

import functools
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown import CodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent.parent
LANGUAGE = "console"
PROMPT = "$ "
COMMAND_TIMEOUT = 300  # seconds for one command: a stuck example fails instead of hanging the suite
ELLIPSIS = re.compile(
    r"(?<!\.)\.\.\.(?!\.)"
)  # exactly three dots: a board's `1.......9` stays literal


def doc_files(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown page under docs/, in a stable order."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


@dataclass(frozen=True)
class Step:
    """One command of a console block and the output the block shows for it."""

    command: str  # as typed, continuation lines joined with their backslashes kept
    shown: str  # the lines after it, up to the next command ("" when it shows nothing)
    blank_after: int = 0  # blank lines between the output and the next command

    def __str__(self) -> str:
        return PROMPT + self.command


def parse_block(source: str) -> list[Step]:
    """The commands of a console block and the output shown after each."""
    steps: list[Step] = []
    command: list[str] = []
    shown: list[str] = []
    continuing = False
    for line in source.splitlines():
        if continuing:
            command.append(line)
            continuing = line.endswith("\\")
        elif line.startswith(PROMPT) or line == PROMPT.strip():
            if command:
                steps.append(_step(command, shown))
            command, shown = [line[len(PROMPT) :]], []
            continuing = line.endswith("\\")
        elif command:
            shown.append(line)
        elif line.strip():
            raise ValueError(
                f"console block starts with output, not a `{PROMPT}` command: {line!r}"
            )
    if command:
        steps.append(_step(command, shown))
    return steps


def _step(command: list[str], shown: list[str]) -> Step:
    text = "\n".join(shown).rstrip()
    blank = len(shown) - len(text.splitlines()) if text else len(shown)
    return Step("\n".join(command), text, blank)


def normalise(text: str) -> str:
    """Trailing spaces of each line and trailing blank lines are not significant."""
    return "\n".join(line.rstrip() for line in text.rstrip("\n").splitlines())


def matches(shown: str, actual: str) -> bool:
    """Whether the actual output is what the block shows, `...` matching any text."""
    parts = ELLIPSIS.split(normalise(shown))
    pattern = ".*?".join(re.escape(part) for part in parts)
    return re.fullmatch(pattern, normalise(actual), re.DOTALL) is not None


def environment(cache: Path | None = None) -> dict[str, str]:
    """A fixed terminal for the examples: the venv's commands first, 80 columns, no colour, and
    none of the variables that would change what a command does (a scheduler, GitHub's workspace);
    the level-file index in `cache` (beside the scratch copy), never in the user's own cache."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("NUMBERMATCH_", "GITHUB_", "FORCE_COLOR", "PYTEST_", "COV_"))
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(
        {"COLUMNS": "80", "LINES": "40", "NO_COLOR": "1", "TERM": "dumb", "LC_ALL": "C.UTF-8"}
    )
    if cache is not None:
        env["NUMBERMATCH_CACHE"] = str(cache)
    return env


def run(step: Step, cwd: Path) -> tuple[str, int]:
    """What the command prints (stdout and stderr interleaved, as on a terminal) and its exit
    status."""
    try:
        done = subprocess.run(
            ["bash", "-c", step.command],
            cwd=cwd,
            env=environment(cwd.parent / "nm-cache"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return f"(the command did not finish within {COMMAND_TIMEOUT} s)", -1
    return done.stdout, done.returncode


# What `make nightly` changes (the night it writes, the stock it draws from): the examples read
# these folders as HEAD has them.
COMMITTED = ("generated",)


def scratch_copy(target: Path, root: Path = ROOT) -> Path:
    """A copy of the repository's tracked files under target: the folders in COMMITTED as HEAD
    holds them (a night run in the checkout changes none of the examples' output), every other
    file as the working tree has it (the change being made to the code or the docs)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached"], cwd=root, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if name.split("/", 1)[0] in COMMITTED:
            continue
        source = root / name
        if source.is_file():  # a file deleted but not yet committed is not copied
            dest = target / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest)
    return committed_copy(target, COMMITTED, root)


def committed_copy(target: Path, paths: tuple[str, ...], root: Path = ROOT) -> Path:
    """The files under `paths` (relative to the repository's top) as HEAD holds them, written
    under target at the same relative places."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD", "--", *paths],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target


def committed_changes(root: Path = ROOT) -> list[str]:
    """The committed files under COMMITTED that the working tree (or the index) has changed or
    deleted, as `git diff --name-status` gives them (`D\tgenerated/stock/...`)."""
    done = subprocess.run(
        ["git", "diff", "--name-status", "--no-renames", "HEAD", "--", *COMMITTED],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def refusal(changes: list[str]) -> str:
    """Why `--rewrite` will not run, in one line, with what to do."""
    folders = ", ".join(f"{name}/" for name in COMMITTED)
    first = changes[0].split("\t", 1)[-1]
    return (
        f"make docs-examples: {len(changes)} committed file(s) under {folders} differ in the"
        f" working tree (first: {first}; a `make nightly` moves stock puzzles); the examples run"
        f" on the committed files: commit the change first, or put them back with"
        f" `git checkout HEAD -- {folders}`"
    )


def evaluate(example: Example) -> str | None:
    """Sybil's evaluator for a console block: None when every command printed what it shows."""
    cwd: Path = example.namespace["cwd"]
    problems = []
    for step in parse_block(str(example.parsed)):
        actual, status = run(step, cwd)
        example.namespace.setdefault("outputs", []).append((step, actual, status))
        if not matches(step.shown, actual):
            problems.append(f"{step}\n--- shown\n{step.shown}\n--- printed\n{normalise(actual)}")
    return "\n\n".join(problems) or None


SYBIL = Sybil(
    parsers=[CodeBlockParser(language=LANGUAGE, evaluator=evaluate), SkipParser()],
    patterns=["README.md", "docs/**/*.md"],
    path="..",
)


def examples(path: Path, cwd: Path) -> Iterator[Example]:
    """The examples of one file, bound to the scratch folder they run in."""
    document: Document = SYBIL.parse(path)
    document.namespace["cwd"] = cwd
    yield from document.examples()


def console_regions(path: Path) -> list[Region]:
    """The console blocks of one file (skipped ones included), in order."""
    return [region for _, region in SYBIL.parse(path).regions if region.evaluator is evaluate]


def merge(shown: str, actual: str) -> str:
    """The output to write for a step: what it prints now, keeping each shown line with `...`
    that still matches its place (a line that is only `...` may stand for several lines), so
    elided seconds stay elided across regenerations. The shown lines are aligned with the
    printed ones to keep as many as possible, as diff aligns lines."""
    if matches(shown, actual):
        return normalise(shown)
    old = normalise(shown).splitlines()
    new = normalise(actual).splitlines()

    @functools.cache
    def best(i: int, j: int, inside: bool) -> tuple[int, int, tuple[str, ...]]:
        # (shown lines kept, printed lines written as printed, the lines) for old[i:] against
        # new[j:]; inside: old[i-1] is a `...` line that took new[j-1] and may take more. On a
        # tie a printed line is written rather than hidden under a `...`.
        if j == len(new):
            return 0, 0, ()
        options = []
        if inside:
            options.append(best(i, j + 1, True))  # new[j] is one more line under the `...`
        if i < len(old):
            options.append(best(i + 1, j, False))  # old[i] is gone
            if (ELLIPSIS.search(old[i]) and matches(old[i], new[j])) or old[i] == new[j]:
                kept, verbatim, rest = best(i + 1, j + 1, old[i].strip() == "...")
                options.append((kept + 1, verbatim, (old[i], *rest)))
        kept, verbatim, rest = best(i, j + 1, False)
        options.append((kept, verbatim + 1, (new[j], *rest)))  # new[j] is written as printed
        return max(options, key=lambda option: option[:2])

    return "\n".join(best(0, 0, False)[2])


def _is_error(output: str) -> bool:
    """Whether a command's output is the CLI refusing (a stale id, a gone option), not a report."""
    return "numbermatch: error:" in output or "Error:" in output


def rewrite(path: Path, cwd: Path) -> tuple[bool, list[str]]:
    """Run the file's console blocks and write what they print now into it. Returns whether the
    file changed and the commands that now fail where they did not (an id the night no longer
    has, a changed option): those need a person, so `make docs-examples` exits 1 naming them."""
    failed: list[str] = []
    document = SYBIL.parse(path)
    document.namespace["cwd"] = cwd
    text = document.text
    edits: list[tuple[int, int, str]] = []
    for example in document.examples():
        example.namespace["outputs"] = []
        try:
            example.evaluate()
        except Exception:
            pass
        if example.region.evaluator is not evaluate or not example.namespace["outputs"]:
            continue  # skipped, or not a console block
        lines = []
        for step, actual, status in example.namespace["outputs"]:
            lines.append(PROMPT + step.command)
            merged = merge(step.shown, actual)
            if merged:
                lines.append(merged)
            if merged != normalise(step.shown):
                where = f"{Path(path).relative_to(ROOT) if Path(path).is_relative_to(ROOT) else path}:{example.line}"
                print(
                    f"{where}: new output for {step}"
                    + (f" (exit status {status})" if status else "")
                )
                if status and _is_error(actual) and not _is_error(step.shown):
                    failed.append(
                        f"{where}: {step} now fails (exit status {status}): {normalise(actual)[:300]}"
                    )
            lines.extend([""] * step.blank_after)
        body_start = text.index("\n", example.region.start) + 1
        body_end = text.rindex("\n", 0, example.region.end) + 1
        fence_indent = text[body_end : example.region.end][
            : -len(text[body_end : example.region.end].lstrip())
        ]
        if fence_indent:  # a block inside a list item: keep its indentation
            lines = [
                fence_indent + line if line else line for line in "\n".join(lines).splitlines()
            ]
        edits.append((body_start, body_end, "\n".join(lines) + "\n"))
    for start, end, body in reversed(edits):
        text = text[:start] + body + text[end:]
    if text != document.text:
        Path(path).write_text(text, encoding="utf-8")
        return True, failed
    return False, failed


def main(argv: list[str]) -> int:
    """`python -m tests.docs_examples [--rewrite] [FILE...]`: check (default) or rewrite the files."""
    import tempfile

    do_rewrite = "--rewrite" in argv
    names = [arg for arg in argv if arg != "--rewrite"]
    if do_rewrite and (changes := committed_changes()):
        print(refusal(changes), file=sys.stderr)
        return 1
    paths = [Path(name).resolve() for name in names] or doc_files()
    status = 0
    for path in paths:
        with tempfile.TemporaryDirectory(prefix="nm-docs-") as tmp:
            cwd = scratch_copy(Path(tmp) / "repo")
            if do_rewrite:
                changed, failed = rewrite(path, cwd)
                print(f"{path.relative_to(ROOT)}: {'rewritten' if changed else 'up to date'}")
                for line in failed:
                    print(line, file=sys.stderr)
                    status = 1
                continue
            for example in examples(path, cwd):
                try:
                    example.evaluate()
                except AssertionError as failure:
                    print(failure)
                    status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
