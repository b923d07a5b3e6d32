"""Progress reports: plain lines when stderr is not a terminal (a pipe, a log file)."""

from __future__ import annotations

import pytest

from marl_bgs_eval import progress
from marl_bgs_eval.progress import PlainLines, progress_bar


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_at_the_start_each_tenth_every_30_s_and_the_end(capsys) -> None:
    clock = Clock()
    lines = PlainLines(48, "play", "batches", clock=clock)
    clock.now += 1
    lines(4.0, 4)  # 8%: not yet a tenth
    clock.now += 1
    lines(6.0, 6)  # 12.5%, 2 s after the last line: a tenth's line
    clock.now += 1
    lines(11.0, 11)  # 23%, but only 1 s after the last line: wait
    clock.now += 30
    lines(11.5, 11, "slow batch")  # no tenth crossed, but 30 s passed
    clock.now += 10
    lines(48.0, 48)  # 100%
    lines.close()  # the end was already shown: no repeat
    assert capsys.readouterr().err.splitlines() == [
        "play: 0/48 batches, 0%, 0 s elapsed",
        "play: 6/48 batches, 12%, 2 s elapsed, about 14 s left",
        "play: 11/48 batches, 24%, 33 s elapsed, about 105 s left, slow batch",
        "play: 48/48 batches, 100%, 43 s elapsed",
    ]


def test_the_last_state_is_shown_at_the_end(capsys) -> None:
    clock = Clock()
    lines = PlainLines(1_000_000, "ippo-rnn", "steps", clock=clock)
    clock.now += 0.5
    lines(1_000_000, 1_000_000, "validating")  # a tenth crossed, but too soon after the start
    lines.close()
    assert capsys.readouterr().err.splitlines()[-1] == (
        "ippo-rnn: 1,000,000/1,000,000 steps, 100%, 0 s elapsed, validating"
    )


def test_a_resumed_run_starts_where_it_stopped_and_estimates_from_its_own_pace(capsys) -> None:
    clock = Clock()
    lines = PlainLines(100, "qmix", "steps", 50, "compiling", clock=clock)
    clock.now += 10
    lines(60, 60)  # exactly the sixth tenth
    assert capsys.readouterr().err.splitlines() == [
        "qmix: 50/100 steps, 50%, 0 s elapsed, compiling",
        "qmix: 60/100 steps, 60%, 10 s elapsed, about 40 s left",
    ]


@pytest.mark.parametrize("enabled", [True, False])
def test_progress_bar_writes_plain_lines_off_a_terminal(capsys, enabled: bool) -> None:
    assert not progress.on_terminal()  # pytest captures stderr
    with progress_bar(enabled, 3, "study", unit="tournaments") as show:
        for k in range(1, 4):
            show(k, k)
    err = capsys.readouterr().err.splitlines()
    if enabled:
        assert err[0] == "study: 0/3 tournaments, 0%, 0 s elapsed"
        assert err[-1] == "study: 3/3 tournaments, 100%, 0 s elapsed"
    else:
        assert err == []
