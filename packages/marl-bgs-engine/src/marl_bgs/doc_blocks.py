"""The code blocks of the project's Markdown pages, who runs each one, and its tiny sizes.

Every fenced block in README.md, docs/*.md and packages/*/README.md carries one marker, an HTML
comment on the line right above its opening fence (see docs/testing.md):

    <!-- runs-in: marl-bgs-eval -->                         run by that package's tests
    <!-- runs-in: marl-bgs-engine, saved as my_map.json --> written to that file for later blocks
    <!-- illustrative: needs a Chat Completions server -->   never run; the reason says why

A page's blocks that one package claims run in order, in one namespace and one folder, at the
sizes of `TINY`, and every console-script command of every bash block is parsed against its
command line (`marl_bgs.testing.run_doc_blocks` and `doc_command_problems`). This module reads
pages with the standard library alone, so the `ci-checks` session loads it without JAX.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

PAGE_GLOBS = ("README.md", "docs/*.md", "packages/*/README.md")
RUNNABLE = ("python", "bash")  # languages a `runs-in` block without `saved as` may have

# The tiny sizes every run block gets, in one place: a Python keyword `name=N` and a command-line
# option `--name N` (underscores as dashes) take these values, whatever the page says.
TINY: dict[str, str] = {
    "num_envs": "4",  # the engine suite's batch (its programs are already compiled)
    "games_per_map": "2",
    "episodes": "4",  # as the two-bridge replay tests
    "bootstrap": "20",
    "tournaments": "2",
    "length": "3",  # lax.scan lengths
}

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<kind>runs-in|illustrative)\b(?P<rest>.*?)\s*-->\s*$")
_RUNS_IN = re.compile(r"^:\s*(?P<package>[\w.-]+)(?:,\s*saved as\s+(?P<file>\S+))?$")
_ILLUSTRATIVE = re.compile(r"^:\s*(?P<reason>\S.*)$")
_SEPARATORS = {"&&", ";"}


@dataclass(frozen=True)
class Claim:
    """A block's marker: run by `package` (optionally `saved_as` a file), or illustrative."""

    kind: str  # "runs-in" or "illustrative"
    package: str = ""
    saved_as: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Block:
    """One fenced block: its page (relative to the checkout), opening line, language, text and
    the claims written above it (exactly one when the page is well marked)."""

    page: str
    line: int
    lang: str
    text: str
    claims: tuple[Claim, ...]
    bad_markers: tuple[str, ...] = ()  # marker comments above it that do not parse

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class Command:
    """One shell command of a bash block: `NAME=value` prefixes, then the argument vector."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()

    @property
    def program(self) -> str:
        """The program's file name (`.nox-tools/bin/nox` -> `nox`)."""
        return self.argv[0].rsplit("/", 1)[-1]


def pages(root: Path) -> list[Path]:
    """The Markdown pages whose blocks are claimed, relative to the checkout `root`."""
    found = {p.relative_to(root) for pattern in PAGE_GLOBS for p in root.glob(pattern)}
    return sorted(found)


def _claim(line: str) -> Claim | None:
    marker = _MARKER.match(line)
    if marker is None:
        return None
    if marker["kind"] == "runs-in":
        runs = _RUNS_IN.match(marker["rest"])
        return Claim("runs-in", runs["package"], runs["file"] or "") if runs else None
    said = _ILLUSTRATIVE.match(marker["rest"])
    return Claim("illustrative", reason=said["reason"].strip()) if said else None


def _markers_above(lines: list[str], index: int) -> tuple[list[Claim], list[str]]:
    """The claims (and unparsable markers) in the run of comment lines right above `index`."""
    claims, bad = [], []
    above = index - 1
    while above >= 0 and _COMMENT.match(lines[above]):
        claim = _claim(lines[above])
        if claim is not None:
            claims.append(claim)
        elif re.search(r"runs-in|illustrative", lines[above]):
            bad.append(lines[above].strip())
        above -= 1
    return claims[::-1], bad[::-1]


def read_blocks(root: Path, page: Path) -> list[Block]:
    """Every fenced block of one page, in order, with the markers above each."""
    lines = (root / page).read_text(encoding="utf-8").splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening["fence"]
        close = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = next((j for j in range(index + 1, len(lines)) if close.match(lines[j])), len(lines))
        indent = len(opening["indent"])
        body = [ln[indent:] if ln[:indent].isspace() else ln for ln in lines[index + 1 : end]]
        claims, bad = _markers_above(lines, index)
        info = opening["info"].strip().split()
        blocks.append(Block(page.as_posix(), index + 1, info[0] if info else "",
                            "\n".join(body) + "\n", tuple(claims), tuple(bad)))  # fmt: skip
        index = end + 1
    return blocks


def all_blocks(root: Path) -> list[Block]:
    """Every fenced block of every claimed page."""
    return [block for page in pages(root) for block in read_blocks(root, page)]


def orphan_markers(root: Path, page: Path) -> list[str]:
    """Markers that no fence follows (left behind when a block moved): `page:line` each."""
    lines = (root / page).read_text(encoding="utf-8").splitlines()
    blocks = read_blocks(root, page)
    inside = {i for b in blocks for i in range(b.line, b.line + b.text.count("\n"))}
    found = []
    for index, line in enumerate(lines):
        if index in inside or not _MARKER.match(line):
            continue
        below = index + 1
        while below < len(lines) and _COMMENT.match(lines[below]):
            below += 1
        if below == len(lines) or not _FENCE.match(lines[below]):
            found.append(f"{page.as_posix()}:{index + 1}")
    return found


def problems(root: Path, packages: list[str]) -> list[str]:
    """Everything wrong with the pages' claims: a block with no marker or several, a marker that
    does not parse or follows no block, an unknown package, an empty reason, a `runs-in` block of
    a language that cannot run. Empty when every block is claimed exactly once."""
    found: list[str] = []
    for page in pages(root):
        found += [f"{where}: a marker with no code block right below it"
                  for where in orphan_markers(root, page)]  # fmt: skip
        for block in read_blocks(root, page):
            found += [f"{block.where}: marker does not parse: {bad}" for bad in block.bad_markers]
            if not block.claims and not block.bad_markers:
                found.append(
                    f"{block.where}: no marker: add <!-- runs-in: PACKAGE --> or "
                    "<!-- illustrative: REASON --> on the line above the fence"
                )
            if len(block.claims) > 1:
                found.append(f"{block.where}: claimed {len(block.claims)} times; keep one marker")
            for claim in block.claims:
                if claim.kind == "runs-in" and claim.package not in packages:
                    found.append(f"{block.where}: runs-in {claim.package!r} is not a package; "
                                 f"one of {', '.join(packages)}")  # fmt: skip
                if claim.kind == "runs-in" and not claim.saved_as and block.lang not in RUNNABLE:
                    found.append(f"{block.where}: a {block.lang or 'plain'} block cannot run; "
                                 f"use ```{' or ```'.join(RUNNABLE)}, 'saved as FILE', or "
                                 "illustrative")  # fmt: skip
    return found


def claimed_by(root: Path, package: str) -> dict[str, list[Block]]:
    """The blocks `package` runs, page by page (pages in order, blocks in page order)."""
    runs: dict[str, list[Block]] = {}
    for block in all_blocks(root):
        if any(c.kind == "runs-in" and c.package == package for c in block.claims):
            runs.setdefault(block.page, []).append(block)
    return runs


def tiny(text: str) -> str:
    """`text` with every size of `TINY` set small where a number is given: `name=N` (Python)
    and `--name N` or `--name=N` (command lines)."""
    number = r"\d[\w.+-]*"  # 1024, 2e6, 1_000, 2.2e6
    for name, value in TINY.items():
        text = re.sub(rf"\b({name}\s*=\s*){number}", rf"\g<1>{value}", text)
        text = re.sub(rf"(--{name.replace('_', '-')}[ =]){number}", rf"\g<1>{value}", text)
    return text


def commands(text: str) -> list[Command]:
    """The commands of a bash block: lines joined at a trailing backslash, `#` comments dropped,
    split at `&&` and `;`. Raises ValueError on other shell syntax (pipes, redirections)."""
    found = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words: list[str] = []
        for token in [*lexer, ";"]:
            if token in _SEPARATORS:
                found += [_command(words)] if words else []
                words = []
            elif token and set(token) <= set("();<>|&"):
                raise ValueError(f"shell syntax {token!r} in {line.strip()!r}")
            else:
                words.append(token)
    return found


def _command(words: list[str]) -> Command:
    env = []
    while len(words) > 1 and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
        name, value = words.pop(0).split("=", 1)
        env.append((name, value))
    return Command(tuple(words), tuple(env))


def is_setup(command: Command) -> bool:
    """An install step (`pip install`, `uv pip install`, `python -m venv`): the tests skip it,
    as they already run in the package's environment (`ci-checks` checks what it names)."""
    argv, program = command.argv, command.program
    return (
        (program in ("pip", "pip3") and argv[1:2] == ("install",))
        or (program == "uv" and argv[1:3] == ("pip", "install"))
        or (program.startswith("python") and argv[1:3] == ("-m", "venv"))
    )
