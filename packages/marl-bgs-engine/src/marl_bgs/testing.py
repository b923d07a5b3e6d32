"""Testing helpers: the conformance suite every mode, pool and adapter must pass (see
`marl_bgs.core.conformance`), runners for code that needs several devices or processes, the
building blocks of the fuzz suites (`mutated` for data files; `Refused`, `holds`,
`case_label` and `check_setting` for a mode's settings), and the runner of the docs' code
blocks (`run_doc_blocks`, `doc_command_problems`; see `marl_bgs.doc_blocks`).

from marl_bgs.testing import check_env
check_env(marl_bgs.make("tdm", map_id=47, num_envs=4), ticks=20)
"""

from __future__ import annotations

import copy
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import distribution
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from marl_bgs import doc_blocks
from marl_bgs.core.conformance import (
    ConformanceError,
    check_env,
    check_jaxmarl_adapter,
    check_pettingzoo_adapter,
    same_structure,
)
from marl_bgs.core.env import MAX_NUM_ENVS
from marl_bgs.core.errors import ConfigError
from marl_bgs.doc_blocks import Block, Command

if TYPE_CHECKING:
    import typer


def host_devices_flags(devices: int) -> str:
    """`XLA_FLAGS` for `devices` simulated CPU devices, keeping this process's other flags."""
    kept = os.environ.get("XLA_FLAGS", "").split()
    kept = [f for f in kept if not f.startswith("--xla_force_host_platform_device_count")]
    return " ".join([*kept, f"--xla_force_host_platform_device_count={devices}"])


def run_on_host_devices(script: str, devices: int, timeout: float = 600.0) -> str:
    """Run a Python `script` in a fresh process that sees `devices` simulated CPU devices
    (`--xla_force_host_platform_device_count`); return its stdout, or raise `AssertionError`
    with the end of its stderr when it fails."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": host_devices_flags(devices)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise AssertionError(f"script failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def run_local_processes(
    script: str, processes: int, devices: int, env: dict[str, str] | None = None,
    timeout: float = 600.0,
) -> list[str]:  # fmt: skip
    """Run `script` in `processes` local processes of `devices` simulated CPU devices each, as
    hosts of one `jax.distributed` job: each finds `COORDINATOR`, `NUM_PROCESSES` and
    `PROCESS_ID` in its environment (for `jax.distributed.initialize`). Returns their stdouts;
    raises `AssertionError` with a failing process's stderr."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = {**os.environ, **(env or {}), "JAX_PLATFORMS": "cpu"}
    base["XLA_FLAGS"] = host_devices_flags(devices)
    base |= {"COORDINATOR": f"127.0.0.1:{port}", "NUM_PROCESSES": str(processes)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            env={**base, "PROCESS_ID": str(i)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    outputs = [p.communicate(timeout=timeout) for p in procs]
    for i, (p, (_, stderr)) in enumerate(zip(procs, outputs, strict=True)):
        if p.returncode != 0:
            raise AssertionError(f"process {i} failed ({p.returncode}):\n{stderr[-3000:]}")
    return [stdout for stdout, _ in outputs]


__all__ = [
    "ConformanceError",
    "Refused",
    "case_label",
    "check_env",
    "check_jaxmarl_adapter",
    "check_pettingzoo_adapter",
    "check_setting",
    "doc_command_problems",
    "holds",
    "host_devices_flags",
    "run_doc_blocks",
    "run_local_processes",
    "run_on_host_devices",
    "same_structure",
]


DELETE = object()  # `mutated`: remove the key instead of setting it


def mutated(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of a decoded data file (a map, a scenario) with the dotted `path`
    ("units.0.health", list indices as numbers) set to `value`, or removed with `DELETE`: the
    building block of the file fuzz suites."""
    doc = copy.deepcopy(base)
    *parents, last = path.split(".")
    node: Any = doc
    for key in parents:
        node = node[int(key)] if key.isdigit() else node[key]
    slot: Any = int(last) if last.isdigit() else last
    if value is DELETE:
        del node[slot]
    else:
        node[slot] = value
    return doc


# --- settings fuzz suites ---------------------------------------------------------------------

MAX_MESSAGE = 400  # characters: a refusal names the field and the allowed values, no more
FAST_S = 1.0  # a memory refusal comes before anything is allocated


@dataclass(frozen=True)
class Refused:
    """A settings case's expected refusal: exactly `cls`, its message matching `pattern` (from
    the start, at most MAX_MESSAGE characters)."""

    pattern: str
    cls: type[Exception] = ConfigError
    fast: bool = False  # timed: raised within FAST_S once the start pool has compiled


Check = Callable[[Any], None]  # asserts what an accepted environment holds


def holds(**expected: Any) -> Check:
    """A check that an accepted env's attributes (dotted paths; an adapter's `native` env)
    equal the values given, with their types."""

    def check(env: Any) -> None:
        for path, want in expected.items():
            got: Any = getattr(env, "native", env)
            for part in path.split("."):
                got = getattr(got, part)
            assert got == want, (path, got, want)
            assert type(got) is type(want), (path, type(got), type(want))

    return check


_HUGE = {2**31: "2**31", 2**40: "2**40", 2**63: "2**63", -(2**63): "-2**63", 10**8: "10**8",
         10**400: "10**400", 10**5000: "10**5000", MAX_NUM_ENVS: "MAX_NUM_ENVS"}  # fmt: skip


def case_label(value: Any) -> str:
    """A short case id for a value (huge integers by their formula, long values cut)."""
    if type(value) is int and value in _HUGE:
        return _HUGE[value]
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__}({value.item()!r})"
    if isinstance(value, list | tuple) and len(value) > 6:
        return f"{type(value).__name__} of {len(value)} ({case_label(value[0])}, ...)"
    # Without memory addresses, so every process (pytest-xdist's workers) names a case alike.
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))
    return text if len(text) <= 30 else text[:27] + "..."


def check_setting(
    make: Callable[..., Any], kwargs: dict[str, Any], expect: Refused | Check, plain: Check
) -> str:
    """Run one settings case: `make(**kwargs)` must raise what `expect` (a `Refused`) says, or
    build an env that passes `plain` (plain Python values whatever it was given) and `expect`.
    Returns "error" or "accepted" (the fuzz report's outcome)."""
    if not isinstance(expect, Refused):
        env = make(**dict(kwargs))
        plain(getattr(env, "native", env))
        expect(env)
        return "accepted"
    if expect.fast:  # compile the start pool first: only the refusal is timed
        make(**{k: v for k, v in kwargs.items() if k != "num_envs"})
    start = time.perf_counter()
    try:
        make(**dict(kwargs))
    except Exception as err:
        elapsed, error = time.perf_counter() - start, err
    else:
        raise AssertionError(f"accepted; expected {expect.cls.__name__}: {expect.pattern}")
    message = str(error)
    assert type(error) is expect.cls, repr(error)[:300]
    assert len(message) <= MAX_MESSAGE, (len(message), message[:200])
    assert re.match(expect.pattern, message, re.DOTALL), message[:300]
    assert not expect.fast or elapsed < FAST_S, elapsed
    return "error"


# --- the docs' code blocks (`marl_bgs.doc_blocks`) -------------------------------------------


def run_doc_blocks(blocks: list[Block]) -> dict[str, object]:
    """Run one page's blocks (those one package claims) in order, in the current folder, at the
    sizes of `doc_blocks.TINY`: Python in one shared namespace, bash commands in this process
    through their console script's typer app (install steps skipped), `saved as` blocks written
    as they are. Returns the namespace; raises on the first failure."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    for block in blocks:
        (claim,) = block.claims
        if claim.saved_as:
            Path(claim.saved_as).write_text(block.text, encoding="utf-8")
        elif block.lang == "python":  # at the page's own line numbers, for tracebacks
            code = compile("\n" * block.line + doc_blocks.tiny(block.text), block.page, "exec")
            exec(code, namespace)
        else:
            for command in doc_blocks.commands(doc_blocks.tiny(block.text)):
                if not doc_blocks.is_setup(command):
                    run_console_command(command, block.where)
    return namespace


def console_app(program: str) -> typer.Typer:
    """The typer app behind an installed console script (the entry point itself, or the `app`
    beside its `main()`); LookupError when no installed package ships it."""
    from importlib.metadata import entry_points

    import typer

    found = entry_points(group="console_scripts", name=program)
    if not found:
        raise LookupError(f"{program}: no installed package ships this console script")
    target = next(iter(found)).load()
    if not isinstance(target, typer.Typer):
        target = getattr(sys.modules[target.__module__], "app", target)
    if not isinstance(target, typer.Typer):
        raise LookupError(f"{program}: its entry point is not a typer app")
    return target


def run_console_command(command: Command, where: str) -> str:
    """Run one console-script command in this process (so it reuses the programs this process
    compiled); return its output, or raise AssertionError with it."""
    from typer.testing import CliRunner  # typer: every package with a console script has it

    if not command.program.startswith("marl-bgs"):
        raise AssertionError(
            f"{where}: the tests run only the packages' console scripts, not "
            f"{command.program!r}: mark the block illustrative with a reason"
        )
    app, args = console_app(command.program), list(command.argv[1:])
    done = CliRunner().invoke(app, args, env=dict(command.env), prog_name=command.program,
                              catch_exceptions=False)  # fmt: skip
    if done.exit_code != 0:
        raise AssertionError(f"{where}: `{shlex.join(command.argv)}` exited {done.exit_code}:\n"
                             f"{done.output}")  # fmt: skip
    return done.output


def parse_console_command(command: Command) -> None:
    """Parse a console-script command against its command line without running it: every
    subcommand, option and value must be accepted (click raises a UsageError otherwise)."""
    import typer

    cli = typer.main.get_command(console_app(command.program))
    ctx = cli.make_context(command.program, list(command.argv[1:]))
    resolve = getattr(cli, "resolve_command", None)  # a group: parse its subcommand's too
    while resolve is not None:
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]  # click 8.2+ keeps the name here
        if not rest:
            return
        name, sub, args = resolve(ctx, rest)
        if name is None or sub is None:
            raise LookupError(f"{command.program}: no command {rest[0]!r}")
        ctx = sub.make_context(name, args, parent=ctx)
        resolve = getattr(sub, "resolve_command", None)


def scripts_of(package: str) -> list[str]:
    """The console scripts the installed distribution `package` declares."""
    points = distribution(package).entry_points
    return sorted(e.name for e in points if e.group == "console_scripts")


def doc_command_problems(root: Path, package: str) -> tuple[int, list[str]]:
    """Parse every command of every bash block (run or illustrative) whose program is one of
    `package`'s console scripts: (commands parsed, failures as `page:line: command: error`)."""
    mine, parsed, found = set(scripts_of(package)), 0, []
    for block in doc_blocks.all_blocks(root):
        for command in doc_blocks.commands(block.text) if block.lang == "bash" else []:
            if command.program in mine:
                parsed += 1
                try:
                    parse_console_command(command)
                except Exception as error:  # click's UsageError, BadParameter, ...
                    found.append(f"{block.where}: `{shlex.join(command.argv)}`: {error}")
    return parsed, found


def doc_block_tests(
    test_file: str,
    package: str,
    checks: dict[str, Callable[[dict], None]],
    min_commands: int | None = None,
) -> tuple[Callable[..., None], ...]:
    """The tests of the docs' code blocks that `package` claims, for its test module to bind to
    `test_*` names: each page's blocks run (`run_doc_blocks`) and then meet `checks[page]`;
    every key of `checks` is a page run here; with `min_commands`, every command of the
    package's console scripts in the docs parses, and there are at least that many. They skip
    when docs/ is not beside the checkout (`test_file`: the module's `__file__`)."""
    import pytest

    root = Path(test_file).resolve().parents[3]
    pages = doc_blocks.claimed_by(root, package) if (root / "docs").is_dir() else {}
    no_docs = pytest.mark.skipif(not pages, reason="docs/ is not beside this checkout")

    @no_docs
    @pytest.mark.parametrize("page", sorted(pages) or ["-"])
    def page_runs(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.chdir(tmp_path)
        namespace = run_doc_blocks(pages[page])
        checks.get(page, lambda _: None)(namespace)

    def every_check_names_a_page_run_here() -> None:
        assert not pages or set(checks) <= set(pages)

    @no_docs
    def every_command_in_the_docs_parses() -> None:
        parsed, failed = doc_command_problems(root, package)
        assert not failed, "\n".join(failed)
        assert parsed >= (min_commands or 0)

    tests = (page_runs, every_check_names_a_page_run_here)
    return tests if min_commands is None else (*tests, every_command_in_the_docs_parses)
