"""Write docs/reliability.md: what the fuzz suite tried per input family, and the mutation run.

    python ci/reliability.py [--out docs/reliability.md] [--mutation ci/mutation_results.json]

Runs every fuzz module (`packages/*/tests/test_fuzz_*.py`) once with pytest, reads the outcome
each generated input recorded (a clear error, a documented repair, or accepted as valid) from the
JUnit report, and tabulates them per family. A failed case is a regression and makes the command
exit non-zero. The mutation section comes from the JSON that `python ci/mutation.py` writes (it
takes about half an hour, so it is run on its own and its result committed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTCOMES = ("error", "repair", "accepted")


def run_fuzz(junit: Path) -> int:
    """Run every fuzz module, package by package, into one JUnit file each; return pytest's rc."""
    modules = sorted(ROOT.glob("packages/*/tests/test_fuzz_*.py"))
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(ROOT / "ci")}
    rc = 0
    for package in sorted({m.parent for m in modules}):
        files = [str(m) for m in modules if m.parent == package]
        out = junit.with_name(f"{package.parent.name}.xml")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "fuzz_plugin", "-p", "no:cacheprovider"]
        cmd += [f"--junitxml={out}", "-o", "junit_family=xunit1", *files]
        rc = max(rc, subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode)
    return rc


def tally(reports: list[Path]) -> dict[str, Counter[str]]:
    """Per family: inputs tried, each outcome, failures (regressions) and plain checks."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for report in reports:
        for case in ET.parse(report).iter("testcase"):
            props = {p.get("name"): p.get("value") for p in case.iter("property")}
            family = props.get("family")
            if family is None:
                continue
            count = table[family]
            failed = case.find("failure") is not None or case.find("error") is not None
            if "outcome" in props:
                count["inputs"] += 1
                count[props["outcome"] or "?"] += 1
            else:
                count["checks"] += 1
            count["failed"] += failed
            count["skipped"] += case.find("skipped") is not None
    return dict(table)


def fuzz_section(table: dict[str, Counter[str]]) -> list[str]:
    """The fuzz table as markdown lines."""
    lines = [
        "| family | inputs tried | clear error | documented repair | accepted (valid) "
        "| other checks | failed |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    total: Counter[str] = Counter()
    for family, c in sorted(table.items()):
        total.update(c)
        cells = [c["inputs"], *(c[o] for o in OUTCOMES), c["checks"], c["failed"]]
        lines.append(f"| {family} | " + " | ".join(str(v) for v in cells) + " |")
    cells = [total["inputs"], *(total[o] for o in OUTCOMES), total["checks"], total["failed"]]
    lines.append("| **all** | " + " | ".join(f"**{v}**" for v in cells) + " |")
    return lines


def mutation_section(path: Path) -> list[str]:
    """The mutation run's summary as markdown lines (from ci/mutation.py's JSON)."""
    if not path.is_file():
        return [f"No mutation results yet: run `python ci/mutation.py --json {path.name}`."]
    data = json.loads(path.read_text())
    mutants = data["mutants"]
    lines = [
        f"Run of commit `{str(data.get('commit', '?'))[:12]}` on {data.get('date', '?')} "
        f"({data.get('machine', '?')}), `python ci/mutation.py`.",
        "",
        "| area | mutants | killed | survived | timeout | error | kill rate |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    areas: dict[str, Counter[str]] = defaultdict(Counter)
    for m in mutants:
        area = m.get("area") or m["file"].split("/")[1]
        areas[area][m["outcome"]] += 1
        areas[area]["n"] += 1
    for area, c in sorted(areas.items()):
        rate = c["killed"] / c["n"] if c["n"] else 0.0
        cells = [c["n"], c["killed"], c["survived"], c["timeout"], c["error"]]
        lines.append(f"| {area} | " + " | ".join(map(str, cells)) + f" | {rate:.0%} |")
    reruns = data.get("reruns", [])
    if reruns:
        lines += ["", "Survivors of this run and what was done about them:", ""]
        lines += [f"- `{m['id']}` ({m['description']}): {m['note']}: **{m['outcome']}**."
                  for m in reruns]  # fmt: skip
    lines += ["", "| mutant | file | bug | outcome |", "|---|---|---|---|"]
    order = {"survived": 0, "timeout": 1, "error": 2, "killed": 3}
    for m in sorted(mutants, key=lambda m: (order.get(m["outcome"], 4), m["id"])):
        lines.append(f"| {m['id']} | `{m['file']}` | {m['description']} | {m['outcome']} |")
    return lines


def render(table: dict[str, Counter[str]], mutation: Path) -> str:
    """The whole page."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    head = [
        "# Reliability",
        "",
        "<!-- Generated by `python ci/reliability.py --out docs/reliability.md`; do not edit. -->",
        "",
        "Every input family a user hands the project has a fuzz module (`packages/*/tests/"
        "test_fuzz_*.py`) that generates malformed inputs (wrong types, NaN and infinities, huge "
        "and negative numbers, truncation, wrong shapes, duplicate keys, hostile sizes) and "
        "asserts one exact outcome for each: a clear error of the project's own type "
        "(`marl_bgs.ConfigError`, `MapError`, `marl_bgs_eval.EvalError`) whose message names "
        "the field, or a documented repair, or, for the valid edge cases mixed in, that the input "
        "works. The same modules run in the test suite; this page counts them.",
        "",
        f"Fuzz run of commit `{commit}` on {dt.date.today()} ({platform.platform()}, "
        f"{os.cpu_count()} CPUs).",
        "",
    ]
    intro = [
        "",
        "## Mutation run",
        "",
        "Small deliberate bugs are injected into the rule modules and the rating code one at a "
        "time, and the tests that own that code are run; a mutant the tests do not notice "
        "survives and names a missing test.",
        "",
    ]
    lines = head + fuzz_section(table) + intro + mutation_section(mutation)
    return "\n".join(_wrap(line) for line in lines) + "\n"


def _wrap(line: str) -> str:
    """Prose at 100 columns; tables, headings and comments as they are."""
    if line.startswith(("|", "#", "<!--")) or len(line) <= 100:
        return line
    return textwrap.fill(line, width=100, break_on_hyphens=False, break_long_words=False)


def main(argv: list[str] | None = None) -> int:
    """Run the fuzz suite, write the page; non-zero when a fuzz case failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "reliability.md")
    parser.add_argument("--mutation", type=Path, default=ROOT / "ci" / "mutation_results.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rc = run_fuzz(Path(tmp) / "fuzz.xml")
        table = tally(sorted(Path(tmp).glob("*.xml")))
    args.out.write_text(render(table, args.mutation))
    failed = sum(c["failed"] for c in table.values())
    print(f"wrote {args.out}: {sum(c['inputs'] for c in table.values())} inputs, {failed} failed")
    return 1 if rc or failed else 0


if __name__ == "__main__":
    sys.exit(main())
