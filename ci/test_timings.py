"""Unit tests of ci/timings.py on hand-written reports (`nox -s ci-checks`)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import timings

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3">
<testcase classname="packages.pkg.tests.test_a" name="test_fast" time="0.010" />
<testcase classname="packages.pkg.tests.test_a" name="test_slow[x]" time="12.500" />
<testcase classname="packages.pkg.tests.test_b" name="test_mid" time="3.25" />
</testsuite></testsuites>
"""


def _age(path: Path, seconds_ago: float) -> None:
    then = time.time() - seconds_ago
    os.utime(path, (then, then))


def test_slowest_tests_are_sorted_and_cut(tmp_path: Path) -> None:
    junit = tmp_path / "junit-pkg.xml"
    junit.write_text(JUNIT)
    got = timings.slowest_tests(junit, 2)
    assert got == [
        timings.TestTime("test_a::test_slow[x]", 12.5),
        timings.TestTime("test_b::test_mid", 3.25),
    ]


def test_only_this_runs_reports_are_shown_in_the_order_sessions_ended(tmp_path: Path) -> None:
    (tmp_path / "session-lint.tsv").write_text("10.0\tsuccess\tlint\n")
    (tmp_path / "session-tests(pkg).tsv").write_text("125.4\tfailed\ttests(pkg)\n")
    (tmp_path / "session-old.tsv").write_text("99.0\tsuccess\told\n")
    (tmp_path / "junit-pkg.xml").write_text(JUNIT)
    (tmp_path / "junit-stale.xml").write_text(JUNIT)
    _age(tmp_path / "session-lint.tsv", 30)
    _age(tmp_path / "session-tests(pkg).tsv", 20)
    _age(tmp_path / "session-old.tsv", 3600)
    _age(tmp_path / "junit-stale.xml", 3600)
    since = time.time() - 60
    sessions = timings.session_times(tmp_path, since)
    assert [s.name for s in sessions] == ["lint", "tests(pkg)"]
    assert sessions[1] == timings.SessionTime("tests(pkg)", 125.4, "failed")
    text = timings.report(tmp_path, since, count=1)
    assert "  lint          0:10  success" in text
    assert "  tests(pkg)    2:05  failed" in text
    assert "  total         2:15" in text
    assert "Slowest 1 tests of pkg" in text
    assert "12.50  test_a::test_slow[x]" in text
    assert "test_mid" not in text  # cut at count
    assert "old" not in text  # written before this run started
    assert "stale" not in text


def test_an_empty_run_says_so(tmp_path: Path) -> None:
    assert "no session of this run recorded its time" in timings.report(tmp_path / "none", 0.0)


@pytest.mark.parametrize("line", ["10.0\tsuccess\n", "ten\tsuccess\tlint\n"])
def test_a_malformed_session_line_names_its_file(tmp_path: Path, line: str) -> None:
    (tmp_path / "session-lint.tsv").write_text(line)
    with pytest.raises(ValueError, match=r"session-lint\.tsv"):
        timings.session_times(tmp_path, 0.0)
