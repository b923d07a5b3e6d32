"""Mutation run: small deliberate bugs injected into the rules and the rating code, one at a time.

    python ci/mutation.py                      # every mutant (about half an hour on 2 cores)
    python ci/mutation.py --check              # apply and restore every mutant, no tests (fast)
    python ci/mutation.py --only ID,ID --json /tmp/m.json --markdown /tmp/m.md
    python ci/mutation.py --list

A mutant is a copy of one source file with one small bug: a `<=` turned into `<`, a duration or a
constant off by one, a dropped condition, a wrong team index. For each mutant the script checks
that its original snippet occurs exactly once in the file, writes the mutated file, runs the few
test files that own that code (`pytest -x -q -m "not slow"`, JAX on CPU) and restores the original
bytes (and modification time), also on Ctrl-C or SIGTERM, and checks that they are back. Outcomes:
killed (pytest exit 1: a test failed), survived (exit 0: a missing test), timeout, and error (any
other exit code, e.g. 2: the tests could not even be collected); only "killed" counts as a kill.

While a mutant is in place the working tree holds the bug: run it on a checkout nobody is editing
or testing. A file left mutated by a killed run (SIGKILL) is refused by the next run, because its
original snippet is gone. Results go to `--json` (default ci/mutation_results.json, read by
ci/reliability.py for docs/reliability.md) and, as a markdown section, to `--markdown`.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutants import AREAS, MUTANTS, Mutant  # noqa: E402  (beside this script)

OUTCOMES = ("killed", "survived", "timeout", "error")


class MutationError(RuntimeError):
    """A mutant cannot be applied or its file cannot be restored."""


# --- checking, applying, restoring ----------------------------------------------------------------


def problems(mutant: Mutant, root: Path = ROOT) -> list[str]:
    """What keeps a mutant from running (empty when it is ready): its file, its snippet (exactly
    once), a mutated file that still compiles, and its test files."""
    out: list[str] = []
    path = root / mutant.file
    if not path.is_file():
        return [f"{mutant.id}: file {mutant.file} does not exist"]
    text = path.read_bytes().decode("utf-8")
    n = text.count(mutant.original)
    if n != 1:
        hint = ""
        if n == 0 and text.count(mutant.mutated) == 1:
            hint = " and the mutated snippet is there: left mutated by an interrupted run?"
        out.append(f"{mutant.id}: original snippet occurs {n} times in {mutant.file}{hint}")
    elif mutant.original == mutant.mutated:
        out.append(f"{mutant.id}: the mutated snippet equals the original")
    else:
        try:
            compile(text.replace(mutant.original, mutant.mutated), mutant.file, "exec")
        except SyntaxError as err:
            out.append(f"{mutant.id}: the mutated file does not compile: {err}")
    if not mutant.tests:
        out.append(f"{mutant.id}: no test files")
    missing = [t for t in mutant.tests if not (root / t).is_file()]
    out += [f"{mutant.id}: test file {t} does not exist" for t in missing]
    return out


def _restore(
    path: Path, original: bytes, mutated: bytes, mutant: Mutant, stat: os.stat_result
) -> None:
    """Put the original bytes (and modification time) back and verify them."""
    current = path.read_bytes()
    if current in (mutated, original):
        path.write_bytes(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        if path.read_bytes() != original:
            raise MutationError(f"{mutant.file}: restore failed (bytes differ after writing)")
        return
    # Someone edited the file while the mutant was in place: undo only the mutation.
    text = current.decode("utf-8")
    if text.count(mutant.mutated) == 1 and text.count(mutant.original) == 0:
        path.write_bytes(text.replace(mutant.mutated, mutant.original).encode("utf-8"))
        print(f"warning: {mutant.file} was edited during the run; only the mutation was undone")
        return
    backup = Path(tempfile.mkdtemp(prefix="mutation-")) / path.name
    backup.write_bytes(original)
    raise MutationError(
        f"{mutant.file} was edited during the run and the mutation cannot be undone; "
        f"the original bytes are in {backup}"
    )


@contextlib.contextmanager
def applied(mutant: Mutant, root: Path = ROOT) -> Iterator[None]:
    """The mutant written into its file for the duration of the block; always restored after."""
    path = root / mutant.file
    stat = path.stat()
    original = path.read_bytes()
    text = original.decode("utf-8")
    if text.count(mutant.original) != 1:
        raise MutationError(f"{mutant.id}: original snippet not exactly once in {mutant.file}")
    mutated = text.replace(mutant.original, mutant.mutated).encode("utf-8")
    try:
        path.write_bytes(mutated)
        yield
    finally:
        _restore(path, original, mutated, mutant, stat)


# --- running --------------------------------------------------------------------------------------


def _detail(output: str) -> str:
    """The line that says what happened: the first failed or errored test, else the last line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for prefix in ("FAILED ", "ERROR "):
        for ln in lines:
            if ln.startswith(prefix):
                return ln[:240]
    return lines[-1][:240] if lines else ""


def run_tests(
    tests: Sequence[str], timeout: float, root: Path = ROOT
) -> tuple[str, int | None, str]:
    """Run pytest on `tests` (its own session, killed on timeout or interrupt); return (outcome,
    exit code, detail)."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow"]
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen(
        [*cmd, *tests], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        return "timeout", None, f"no result after {timeout:.0f} s"
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    rc = proc.returncode
    outcome = "killed" if rc == 1 else "survived" if rc == 0 else "error"
    return outcome, rc, _detail(output)


def run_mutant(mutant: Mutant, timeout: float, root: Path = ROOT) -> dict[str, object]:
    """Apply one mutant, run its tests, restore the file; the mutant's result record."""
    start = time.perf_counter()
    with applied(mutant, root):
        outcome, rc, detail = run_tests(mutant.tests, timeout, root)
    return {
        "id": mutant.id,
        "area": mutant.area,
        "file": mutant.file,
        "description": mutant.description,
        "tests": list(mutant.tests),
        "outcome": outcome,
        "exit_code": rc,
        "seconds": round(time.perf_counter() - start, 1),
        "detail": detail,
    }


def _sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # so that the `finally` blocks restore the file


# --- report ---------------------------------------------------------------------------------------


def _git(*args: str, root: Path = ROOT) -> str:
    run = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    return run.stdout.strip()


def _counts(records: Sequence[dict[str, object]]) -> dict[str, object]:
    c = Counter(str(r["outcome"]) for r in records)
    n = len(records)
    return {
        "mutants": n,
        **{o: c[o] for o in OUTCOMES},
        "kill_rate": round(c["killed"] / n, 3) if n else None,
        "seconds": round(sum(float(r["seconds"]) for r in records), 1),  # type: ignore[arg-type]
    }


def report(records: list[dict[str, object]], selected: Sequence[Mutant], **extra: object) -> dict:
    """The JSON document: per mutant, totals, the kill rate per area, commit, date and machine."""
    files = sorted({m.file for m in selected})
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    return {
        "format": "marl-bgs-mutation-v1",
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_targets": _git("status", "--porcelain", "--", *files).splitlines(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "command": "python ci/mutation.py " + " ".join(sys.argv[1:]),
        **extra,
        "summary": _counts(records),
        "areas": {a: _counts([r for r in records if r["area"] == a]) for a in AREAS},
        "mutants": records,
    }


def markdown(data: dict) -> str:
    """The markdown section: what a mutant is, how to run, kill rate per area, the mutants
    (survivors first, each with its bug)."""
    s = data["summary"]
    lines = [
        "## Mutation run",
        "",
        "A mutant is a copy of the code with one small deliberate bug: a `<=` turned into `<`, a "
        "duration or constant off by one, a dropped condition, a wrong team index. "
        "`python ci/mutation.py` injects each mutant below in turn into the engine's rule modules "
        "or the evaluation's rating code, runs the test files that own that code "
        '(`pytest -x -m "not slow"`) and restores the file. A mutant is killed when a test fails; '
        "one that survives names a missing test. Timeouts and errors (the tests could not run at "
        "all) are counted apart and are not kills. `python ci/mutation.py --check` only verifies "
        "that every mutant still applies.",
        "",
        f"Commit `{str(data.get('commit', '?'))[:12]}`, {data.get('date', '?')}, "
        f"{data.get('machine', '?')}: {s['mutants']} mutants in {s['seconds']:.0f} s.",
        "",
        "| area | mutants | killed | survived | timeout | error | kill rate |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, c in [*data["areas"].items(), ("**all**", s)]:
        if not c["mutants"]:
            continue
        cells = [c["mutants"], *(c[o] for o in OUTCOMES)]
        rate = f"{c['kill_rate']:.0%}"
        lines.append(f"| {name} | " + " | ".join(map(str, cells)) + f" | {rate} |")
    lines += ["", "| mutant | bug | file | tests | outcome | s |", "|---|---|---|---|---|---:|"]
    order = {"survived": 0, "timeout": 1, "error": 2, "killed": 3}
    for r in sorted(data["mutants"], key=lambda r: (order.get(r["outcome"], 4), r["area"])):
        tests = ", ".join(Path(t).name for t in r["tests"])
        outcome = r["outcome"] if r["outcome"] == "killed" else f"**{r['outcome']}**"
        lines.append(
            f"| `{r['id']}` | {r['description']} | `{Path(r['file']).name}` | {tests} "
            f"| {outcome} | {r['seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


# --- command line ---------------------------------------------------------------------------------


def select(only: str | None, limit: int | None) -> list[Mutant]:
    """The mutants named by `--only` (all by default), the first `--limit` of them."""
    chosen = list(MUTANTS)
    if only:
        names = [n.strip() for n in only.split(",") if n.strip()]
        known = {m.id: m for m in MUTANTS}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise SystemExit(f"--only: unknown mutant(s) {unknown}; see --list")
        chosen = [known[n] for n in names]
    return chosen[:limit] if limit is not None else chosen


def main(argv: list[str] | None = None) -> int:
    """Check or run the selected mutants; exit 0 when every mutant was killed (or, with --check,
    applied and restored), 1 otherwise, 2 when a mutant cannot be applied."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--only", help="comma-separated mutant ids")
    p.add_argument("--limit", type=int, help="run only the first N selected mutants")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant (600)")
    p.add_argument("--check", action="store_true", help="apply and restore each mutant, no tests")
    p.add_argument("--list", action="store_true", help="print the mutants and exit")
    p.add_argument("--json", type=Path, default=ROOT / "ci" / "mutation_results.json")
    p.add_argument("--markdown", type=Path, help="write the markdown section here ('-': stdout)")
    args = p.parse_args(argv)

    ids = [m.id for m in MUTANTS]
    if len(set(ids)) != len(ids):
        raise SystemExit(f"duplicate mutant ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    chosen = select(args.only, args.limit)
    if args.list:
        for m in chosen:
            print(f"{m.id:40} {m.file.split('/src/')[-1]:28} {m.description}")
        per_file = Counter(Path(m.file).name for m in chosen)
        print(f"{len(chosen)} mutants: " + ", ".join(f"{f} {n}" for f, n in per_file.items()))
        return 0
    bad = [msg for m in chosen for msg in problems(m)]
    if bad:
        print("refusing to run:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 2

    signal.signal(signal.SIGTERM, _sigterm)
    if args.check:
        for m in chosen:
            with applied(m):
                pass
        print(f"{len(chosen)} mutants apply to their files exactly once, compile, and restore")
        return 0

    records: list[dict[str, object]] = []
    interrupted = False
    start = time.perf_counter()
    try:
        for k, m in enumerate(chosen, 1):
            print(f"[{k}/{len(chosen)}] {m.id} ...", end=" ", flush=True)
            r = run_mutant(m, args.timeout)
            records.append(r)
            print(f"{r['outcome']} ({r['seconds']} s) {r['detail']}", flush=True)
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: the mutated file was restored; writing the results so far")
    data = report(records, chosen, timeout_s=args.timeout, interrupted=interrupted)
    args.json.write_text(json.dumps(data, indent=2) + "\n")
    text = markdown(data)
    if args.markdown is None or str(args.markdown) == "-":
        print(text)
    else:
        args.markdown.write_text(text)
    s = data["summary"]
    print(
        f"{s['killed']}/{s['mutants']} killed, {s['survived']} survived, {s['timeout']} timeout, "
        f"{s['error']} error in {time.perf_counter() - start:.0f} s; wrote {args.json}"
    )
    return 130 if interrupted else 0 if s["killed"] == s["mutants"] else 1


if __name__ == "__main__":
    sys.exit(main())
