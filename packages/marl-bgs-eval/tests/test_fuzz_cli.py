"""Fuzz: argument sets handed to the `marl-bgs-eval` command line (typer's CliRunner).

Every bad argument set must end with exit code 2 and a message naming the option or field
(typer's own "Invalid value for '--games-per-map'" counts), never a Python traceback; the valid
edge cases must work. A refusal of `--out` must come before any game is played: those cases run
with `evaluate` replaced by a function that fails the test if it is called. The cases that only
check how arguments reach `evaluate` (or what `play` does with its games) use a stand-in that
returns conftest's `base_games`; one case plays for real, with the settings of `base_games`, so
it reuses that fixture's compiled programs.

Below the fuzz cases: an interrupted run resumed from its journal, and a journal whose last line
was cut while it was written.
"""

from __future__ import annotations

import importlib
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner, Result

import marl_bgs_eval as ev
from marl_bgs_eval.cli import app
from marl_bgs_eval.journal import Journal, journal_path
from marl_bgs_eval.results import normalize

pytestmark = pytest.mark.fuzz_family("CLI arguments")

runner = CliRunner()
# The settings of conftest's `base_games` (as in test_cli.py): with batch 8 a real play reuses
# the programs that fixture compiled.
SMALL = {
    "--maps": "0,12",
    "--games-per-map": "8",
    "--seed": "7",
    "--batch-size": "8",
    "--tick-limit": "40",
    "--winning-score": "5",
}
Frame = pd.DataFrame
Args = Callable[[Path, Frame], list[str]]


@dataclass(frozen=True)
class Case:
    """`args(tmp_path, base)` builds the command line (writing any files it names); `expect` is
    a regex on the output (outcome "error") or a check of the finished command ("accepted").
    `evaluate`: "real", "refuse" (fails the test if a game would be played) or "stub" (returns
    `base` at once and records its arguments)."""

    id: str
    outcome: str
    args: Args
    expect: str | Callable[[Result, Path, Frame, list[dict[str, Any]]], None]
    evaluate: str = "real"


def play(*extra: str, **options: str | None) -> Args:
    """`play mixed random` with SMALL, `options` ("games_per_map": "0") replacing or removing
    (None) them, then `extra`; "{tmp}" in any argument becomes the test's tmp_path."""
    settings: dict[str, str | None] = dict(SMALL)
    settings.update({"--" + k.replace("_", "-"): v for k, v in options.items()})

    def build(tmp: Path, base: Frame) -> list[str]:
        del base
        args = ["play", "mixed", "random", "--no-progress"]
        for option, value in settings.items():
            if value is not None:
                args += [option, value]
        return [a.replace("{tmp}", str(tmp)) for a in [*args, *extra]]

    return build


def command(*args: str, files: Callable[[Path, Frame], None] | None = None) -> Args:
    """Any command line; `files(tmp, base)` writes the files it names first."""

    def build(tmp: Path, base: Frame) -> list[str]:
        if files is not None:
            files(tmp, base)
        return [a.replace("{tmp}", str(tmp)) for a in args]

    return build


def _flipped(base: Frame) -> Frame:
    """The same games from the other side (other game numbers): a second valid file."""
    flipped = base.assign(
        system_a="random", system_b="mixed", game=base["game"] + 16, pair_id=base["pair_id"] + 8
    )
    flipped["result"] = flipped["result"].map({"win": "loss", "loss": "win", "draw": "draw"})
    return flipped


def _saved(tmp: Path, base: Frame) -> None:
    ev.save(base, tmp / "g.parquet")
    ev.save(_flipped(base), tmp / "f.csv")


def _unrecorded(tmp: Path, base: Frame) -> None:
    base.to_csv(tmp / "plain.csv", index=False)  # no integrity record: another tool wrote it


def _garbage(tmp: Path, base: Frame) -> None:
    del base
    (tmp / "junk.parquet").write_bytes(b"PAR1 this is not a parquet file")
    (tmp / "junk.csv").write_text("a,b\n1,2\n")
    (tmp / "g.txt").write_text("game\n0\n")
    (tmp / "d.csv").mkdir()


def _bad_content(tmp: Path, base: Frame) -> None:
    bad = base.copy()
    bad.loc[0, "result"] = "win"  # at 0-0
    bad.to_csv(tmp / "bad.csv", index=False)


def _existing(tmp: Path, base: Frame) -> None:
    ev.save(base.iloc[:8], tmp / "g.parquet")  # an earlier run's file
    (tmp / "d.parquet").mkdir()
    (tmp / "plainfile").write_text("not a folder")


def _plain(output: str) -> str:
    """Output as one line: no box drawing of typer's error panel, single spaces."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", output).split())


# --- error cases ------------------------------------------------------------------------------

E = "error: "  # the prefix of the CLI's own refusals
INVALID = "Invalid value for '{}'"


def _play_cases() -> list[Case]:
    cases: list[Case] = []
    for value, message in [
        ("0", E + "games_per_map: expected a positive integer, got 0"),
        ("-2", E + "games_per_map: expected a positive integer, got -2"),
        ("3", E + "games_per_map: games come in spawn-swapped pairs, so it must be even; got 3"),
        ("abc", INVALID.format("--games-per-map")),
        ("1.5", INVALID.format("--games-per-map")),
        ("", INVALID.format("--games-per-map")),
    ]:
        cases.append(
            Case(f"play --games-per-map {value!r}", "error", play(games_per_map=value), message)
        )
    for value, message in [
        ("0", E + "batch_size: expected a positive integer, got 0"),
        ("-1", E + "batch_size: expected a positive integer, got -1"),
        (
            str(10**12),
            E + r"batch_size: expected an integer in \[1, 2147483647\], got 1000000000000",
        ),
        (str(2**31 - 1), E + r"batch_size: 2147483647 games need about [0-9.]+ GiB, more than the"),
        ("x", INVALID.format("--batch-size")),
    ]:
        cases.append(Case(f"play --batch-size {value!r}", "error", play(batch_size=value), message))
    for value, message in [
        ("-1", E + "seed: expected a non-negative integer, got -1"),
        (str(2**63), E + f"seed: expected a non-negative integer, got {2**63}"),
        (str(2**64), E + f"seed: expected a non-negative integer, got {2**64}"),
        ("1e3", INVALID.format("--seed")),
    ]:
        cases.append(Case(f"play --seed {value}", "error", play(seed=value), message))
    for value, message in [
        ("0", E + r"tick_limit: expected an integer in \[1, 10000\], got 0"),
        ("10001", E + r"tick_limit: expected an integer in \[1, 10000\], got 10001"),
        (str(10**9), E + r"tick_limit: expected an integer in \[1, 10000\], got 1000000000"),
    ]:
        cases.append(Case(f"play --tick-limit {value}", "error", play(tick_limit=value), message))
    for value in ("0", "-3"):
        message = E + rf"winning_score: expected an integer in \[1, 1000\], got {value}"
        cases.append(
            Case(f"play --winning-score {value}", "error", play(winning_score=value), message)
        )
    for value in ("all", "", "Priority"):
        message = E + rf"metrics: expected one of \['none', 'priority', 'full'\], got '{value}'"
        cases.append(Case(f"play --metrics {value!r}", "error", play(metrics=value), message))
    # The engine's layout grammar (marl_bgs.kit(mode).layouts.select) reads --maps.
    maps = E + "--maps: map_id: expected e.g. '0,3', '0-9', 'all' or a name, got "
    for value in ("", ",", "test,,validation", "0,", " "):
        empty = maps + ("' '" if value == " " else "''")  # the item, as it was given
        cases.append(Case(f"play --maps {value!r}", "error", play(maps=value), empty))
    unknown = E + "--maps: map_id: unknown {}; allowed \\['all', 'curriculum', 'train'"
    for value, message in [
        ("999", E + "--maps: map_id: '999' is outside 0-51"),
        ("40-60", E + "--maps: map_id: '40-60' is outside 0-51"),
        ("nonexistent_name", unknown.format("'nonexistent_name'")),
        ("x.txt", unknown.format("'x.txt'")),
        ("maps/x.txt", unknown.format("'maps/x.txt'")),
        ("/missing/m.json", E + r"maps: map file '/missing/m\.json' does not exist"),
        ("{tmp}/m.json", E + r"maps: map file '.*/m\.json' is not valid JSON"),
        ("0,open arena", unknown.format(r"'open arena' \(did you mean 'Open Arena'\?\)")),
        ("²", unknown.format("'²'")),  # a digit int() refuses
        ("-1", unknown.format("'-1'")),
    ]:
        build = play(maps=value)
        if value.startswith("{tmp}"):
            build = _writing(build, "m.json", "{not json")
        cases.append(Case(f"play --maps {value!r}", "error", build, message))
    cases += [
        Case(
            "play --split bogus",
            "error",
            play("--split", "bogus"),
            E + r"maps: split: expected one of \[",
        ),
        Case(
            "play --split custom",
            "error",
            play("--split", "custom"),
            E + "maps: split: expected one of",
        ),
        Case(
            "play --split test with --maps 0,12",
            "error",
            play("--split", "test"),
            E + r"maps: \[0, 12\] are not in split 'test' \(\[47, 48, 49, 50, 51\]\)",
        ),
        Case(
            "play unknown system A",
            "error",
            command("play", "nobody", "random"),
            E + "team_a: system: unknown System 'nobody'; registered: ",
        ),
        Case(
            "play unknown system B",
            "error",
            command("play", "random", "Random"),
            E + "team_b: system: unknown System 'Random'",
        ),
        Case(
            "play empty system name",
            "error",
            command("play", "", "random"),
            E + "team_a: system: unknown System ''",
        ),
        Case(
            "play one system", "error", command("play", "mixed"), "system_b: mode tdm-v2 has 2 team"
        ),
        Case("play unknown option", "error", play("--gpm", "4"), "No such option: --gpm"),
        Case(
            "play option without value",
            "error",
            play("--games-per-map"),
            "Option '--games-per-map' requires an argument",
        ),
        Case(
            "play --plugin missing.module",
            "error",
            play("--plugin", "missing.module"),
            E + "--plugin: cannot import 'missing.module': No module named 'missing'",
        ),
        Case(
            "play --plugin ''",
            "error",
            play("--plugin", ""),
            E + "--plugin: cannot import '': Empty module name",
        ),
        Case(
            "play --plugin .relative",
            "error",
            play("--plugin", ".relative"),
            E + "--plugin: cannot import '.relative'",
        ),
        Case(
            "systems --plugin nope",
            "error",
            command("systems", "--plugin", "nope"),
            E + "--plugin: cannot import 'nope'",
        ),
    ]
    out = [
        (
            "--out results.txt",
            ["--out", "results.txt"],
            E + r"out: expected a \.parquet or \.csv file, or a folder \(a name without a "
            r"suffix\); got 'results\.txt'",
        ),
        (
            "--out x.PARQUET",
            ["--out", "{tmp}/x.PARQUET"],
            E + r"out: expected a \.parquet or \.csv file, or a folder .*; got '.*x\.PARQUET'",
        ),
        (
            "--out a file with no suffix",
            ["--out", "{tmp}/plainfile"],
            E + r"out: expected a \.parquet or \.csv file, or a folder .*; got '.*plainfile'",
        ),
        (
            "--out a folder in a missing folder",
            ["--out", "/missing/dir/run"],
            E + "out: folder '/missing/dir' does not exist",
        ),
        (
            "--replays without --out",
            ["--replays", "2"],
            E + r"replays: needs --out \(replays are saved beside the results\)",
        ),
        (
            "--out in a missing folder",
            ["--out", "/missing/dir/x.parquet"],
            E + "out: folder '/missing/dir' does not exist",
        ),
        (
            "--out an existing file",
            ["--out", "{tmp}/g.parquet"],
            E + r"out: '.*g\.parquet' exists; remove it or choose another name",
        ),
        (
            "--out a folder",
            ["--out", "{tmp}/d.parquet", "--overwrite"],
            E + r"out: '.*d\.parquet' is a folder",
        ),
        (
            "--out beside an unfinished run",
            ["--out", "{tmp}/new.parquet"],
            E + r"out: .*new\.parquet\.journal\.csv holds games of an unfinished run; add --resume",
        ),
        (
            "--resume without --out",
            ["--resume"],
            E + r"resume: needs --out \(the journal lives beside the results file\)",
        ),
    ]
    for what, extra, message in out:
        build = play(*extra)
        if "unfinished" in message:
            build = _then_files(
                build, lambda d, b: Journal(journal_path(d / "new.parquet")).append(b.iloc[:2])
            )
        else:
            build = _then_files(build, _existing)
        cases.append(Case(f"play {what}", "error", build, message, evaluate="refuse"))
    return cases


def _writing(build: Args, name: str, text: str) -> Args:
    def run(tmp: Path, base: Frame) -> list[str]:
        (tmp / name).write_text(text)
        return build(tmp, base)

    return run


def _then_files(build: Args, files: Callable[[Path, Frame], None]) -> Args:
    def run(tmp: Path, base: Frame) -> list[str]:
        files(tmp, base)
        return build(tmp, base)

    return run


def _rating_cases() -> list[Case]:
    cases: list[Case] = []
    for cmd in ("rate", "leaderboard"):
        cases += [
            Case(
                f"{cmd} a missing file",
                "error",
                command(cmd, "{tmp}/absent.parquet"),
                E + r"path: results file '.*absent\.parquet' does not exist",
            ),
            Case(
                f"{cmd} a garbage file",
                "error",
                command(cmd, "{tmp}/junk.parquet", files=_garbage),
                E + r"path: cannot read '.*junk\.parquet'",
            ),
            Case(
                f"{cmd} a .txt file",
                "error",
                command(cmd, "{tmp}/g.txt", files=_garbage),
                E + r"path: expected a \.parquet or \.csv file, got '.*g\.txt'",
            ),
            Case(f"{cmd} no files", "error", command(cmd), "Missing argument 'files'"),
            Case(
                f"{cmd} --bootstrap 0",
                "error",
                command(cmd, "{tmp}/g.parquet", "--bootstrap", "0", files=_saved),
                E + "bootstrap: expected a number of resamples in \\[1, 1000000\\], got 0",
            ),
            Case(
                f"{cmd} --bootstrap -5",
                "error",
                command(cmd, "{tmp}/g.parquet", "--bootstrap", "-5", files=_saved),
                E + "bootstrap: expected a number of resamples in \\[1, 1000000\\], got -5",
            ),
            Case(
                f"{cmd} --seed -1",
                "error",
                command(cmd, "{tmp}/g.parquet", "--seed", "-1", files=_saved),
                INVALID.format("--seed"),  # typer: "greater than or equal to 0"
            ),
            Case(
                f"{cmd} --bootstrap-scheme map",
                "error",
                command(cmd, "{tmp}/g.parquet", "--bootstrap-scheme", "map", files=_saved),
                E + r"bootstrap_scheme: expected one of \['pairs', 'maps'\], got 'map'",
            ),
        ]
    cases += [
        Case(
            "rate a table of another schema",
            "error",
            command("rate", "{tmp}/junk.csv", files=_garbage),
            E + r"junk\.csv: missing column\(s\) \['game'",
        ),
        Case(
            "rate a folder",
            "error",
            command("rate", "{tmp}/d.csv", files=_garbage),
            E + r"path: '.*d\.csv' is a folder",
        ),
        Case(
            "rate --bootstrap abc",
            "error",
            command("rate", "{tmp}/g.parquet", "--bootstrap", "abc", files=_saved),
            INVALID.format("--bootstrap"),
        ),
        Case(
            "rate the same file twice",
            "error",
            command("rate", "{tmp}/g.parquet", "{tmp}/g.parquet", files=_saved),
            E + r"results: the game \(seed=7, system_a=mixed, system_b=random, game=0\) is in both",
        ),
        Case(
            "rate a file without its record",
            "error",
            command("rate", "{tmp}/plain.csv", files=_unrecorded),
            E + r"plain\.csv: no integrity record .*--no-integrity",
        ),
        Case(
            "rate a file with a wrong result",
            "error",
            command("rate", "{tmp}/bad.csv", "--no-integrity", files=_bad_content),
            E + r"bad\.csv: row 0 \(game 0\): result does not follow from points_a",
        ),
    ]
    return cases


def _limit_cases() -> list[Case]:
    """Sizes beyond what memory or int32 numbering allows: refused before anything is built."""
    return [
        Case(f"play --games-per-map {label}", "error", play(games_per_map=str(value)),
             E + "games_per_map")
        for label, value in (("10**20", 10**20), ("10**12", 10**12), ("2**31", 2**31))
    ] + [
        Case("rate --bootstrap 10**15", "error",
             command("rate", "{tmp}/g.parquet", "--bootstrap", str(10**15), files=_saved),
             E + "bootstrap"),
    ]  # fmt: skip


# --- accepted cases ---------------------------------------------------------------------------


def _loads_as_base(name: str) -> Callable[..., None]:
    def check(result: Result, tmp: Path, base: Frame, calls: list[dict[str, Any]]) -> None:
        del calls
        assert f"saved 16 games to {tmp / name}" in _plain(result.output)
        pd.testing.assert_frame_equal(ev.load(tmp / name), base)
        assert not journal_path(tmp / name).exists()

    return check


def _evaluate_got(**want: Any) -> Callable[..., None]:
    def check(result: Result, tmp: Path, base: Frame, calls: list[dict[str, Any]]) -> None:
        del result, tmp, base
        assert len(calls) == 1
        for key, value in want.items():
            assert calls[0][key] == value, (key, calls[0][key])

    return check


def _file_kept(result: Result, tmp: Path, base: Frame, calls: list[dict[str, Any]]) -> None:
    del result, base
    assert [c["maps"] for c in calls] == [[47, f"{tmp}/m.json"]]


def _shows(*words: str) -> Callable[..., None]:
    def check(result: Result, tmp: Path, base: Frame, calls: list[dict[str, Any]]) -> None:
        del tmp, base, calls
        for word in words:
            assert word in result.output, word

    return check


def _accepted_cases() -> list[Case]:
    return [
        Case(
            "systems", "accepted", command("systems"), _shows("idle", "mixed", "random", "eastward")
        ),
        Case(
            "systems --plugin json",
            "accepted",
            command("systems", "--plugin", "json"),
            _shows("random"),
        ),
        Case(
            "play SMALL --out g.csv (a real play)",
            "accepted",
            play("--out", "{tmp}/g.csv"),
            _loads_as_base("g.csv"),
        ),
        Case(
            "play --out g.parquet",
            "accepted",
            play("--out", "{tmp}/g.parquet"),
            _loads_as_base("g.parquet"),
            evaluate="stub",
        ),
        Case(
            "play --out an existing file with --overwrite",
            "accepted",
            _then_files(play("--out", "{tmp}/g.parquet", "--overwrite"), _existing),
            _loads_as_base("g.parquet"),
            evaluate="stub",
        ),
        Case(
            "play --resume with no journal yet",
            "accepted",
            play("--out", "{tmp}/g.parquet", "--resume"),
            _evaluate_got(resume=None),
            evaluate="stub",
        ),
        Case(
            "play --maps ' 0 , 12 '",
            "accepted",
            play(maps=" 0 , 12 "),
            _evaluate_got(maps=[0, 12]),
            evaluate="stub",
        ),
        Case(
            "play --maps Arabic-Indic digits",
            "accepted",
            play(maps="٠,١٢"),
            _evaluate_got(maps=[0, 12]),
            evaluate="stub",
        ),
        Case(
            "play --maps a split, a range and a name",
            "accepted",
            play(maps="test,0-2,Open Arena"),
            _evaluate_got(maps=[47, 48, 49, 50, 51, 0, 1, 2]),
            evaluate="stub",
        ),
        Case(
            "play --maps a repeat is played once",
            "accepted",
            play(maps="test,48,test"),
            _evaluate_got(maps=[47, 48, 49, 50, 51]),
            evaluate="stub",
        ),
        Case(
            "play --maps a map file stays a file",
            "accepted",
            play(maps="47,{tmp}/m.json"),
            _file_kept,
            evaluate="stub",
        ),
        Case(
            "play --seed 2**63 - 1 reaches evaluate exactly",
            "accepted",
            play(seed=str(2**63 - 1)),
            _evaluate_got(seed=2**63 - 1),
            evaluate="stub",
        ),
        Case(
            "rate two files",
            "accepted",
            command("rate", "{tmp}/g.parquet", "{tmp}/f.csv", "--bootstrap", "20", files=_saved),
            _shows("Elo", "mixed", "random", "distinct_games"),
        ),
        Case(
            "leaderboard two files",
            "accepted",
            command(
                "leaderboard", "{tmp}/g.parquet", "{tmp}/f.csv", "--bootstrap", "20", files=_saved
            ),
            _shows("Leaderboard", "mixed", "random"),
        ),
        Case(
            "rate --no-integrity a file without its record",
            "accepted",
            command(
                "rate", "{tmp}/plain.csv", "--no-integrity", "--bootstrap", "20", files=_unrecorded
            ),
            _shows("Elo", "mixed"),
        ),
    ]


CASES = _play_cases() + _rating_cases() + _limit_cases() + _accepted_cases()
PARAMS = [pytest.param(c, id=c.id) for c in CASES]


def test_there_are_enough_cli_cases() -> None:
    errors = [c for c in CASES if c.outcome == "error"]
    assert len(errors) >= 50
    assert len(CASES) - len(errors) >= 5
    assert {c.outcome for c in CASES} == {"error", "accepted"}
    assert all(isinstance(c.expect, str) == (c.outcome == "error") for c in CASES)
    assert len({c.id for c in CASES}) == len(CASES)
    assert all(c.evaluate == "refuse" for c in errors if "--out" in c.id or "--resume" in c.id)


# The module whose `evaluate` the command calls (the package's `ev.evaluate` is the function).
EVALUATE = importlib.import_module("marl_bgs_eval.evaluate")


def _played(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("played")


@pytest.mark.parametrize("case", PARAMS)
def test_cli_arguments(tmp_path, base_games, monkeypatch, record_property, case: Case) -> None:
    record_property("outcome", case.outcome)
    calls: list[dict[str, Any]] = []
    if case.evaluate == "refuse":
        monkeypatch.setattr(EVALUATE, "evaluate", _played)
    elif case.evaluate == "stub":
        monkeypatch.setattr(EVALUATE, "evaluate", lambda *a, **k: calls.append(k) or base_games)
    result = runner.invoke(app, case.args(tmp_path, base_games))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        trace = "".join(traceback.format_exception(result.exception))
        pytest.fail(f"{type(result.exception).__name__} escaped:\n{result.output}\n{trace}")
    assert "Traceback" not in result.output
    if case.outcome == "error":
        assert isinstance(case.expect, str)
        assert result.exit_code == 2, result.output
        assert re.search(case.expect, _plain(result.output)), result.output
    else:
        assert callable(case.expect)
        assert result.exit_code == 0, result.output
        case.expect(result, tmp_path, base_games, calls)


# --- interrupted runs -------------------------------------------------------------------------


def _small(**options: str) -> list[str]:
    """`play mixed random` with SMALL (`options` replacing some) as a plain argument list."""
    return play(**options)(Path(), pd.DataFrame())


def test_an_interrupted_run_resumes_from_its_journal(tmp_path, base_games, monkeypatch) -> None:
    """Ctrl-C after the first finished games: they stay in the journal, a plain rerun is told to
    add --resume, and --resume plays only the rest, ending with exactly the games of one
    uninterrupted run (conftest's `base_games`, played at batch 8).

    Batch 4 on purpose: 16 games of 40 ticks with 64-tick chunks finish 4 at a time, so the
    first hand-over holds 4 games and 12 are left (at batch 8 the first chunk would already end
    8 games). Results do not depend on the batch size, so the resumed table still equals
    `base_games`; the one new compile (batch 4) serves both runs (16 padded games each)."""
    out = tmp_path / "g.parquet"
    args = [*_small(batch_size="4"), "--out", str(out)]
    original, seen = Journal.append, []

    def append_then_stop(self: Journal, games: Frame) -> None:
        original(self, games)
        seen.append(len(games))
        if len(seen) == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(Journal, "append", append_then_stop)
    stopped = runner.invoke(app, args)
    assert stopped.exit_code != 0
    journal = journal_path(out)
    assert f"stopped: the finished games are kept in {journal}" in _plain(stopped.output)
    assert "with --resume to play the rest" in _plain(stopped.output)
    assert not out.exists()
    kept, dropped = Journal(journal).read()
    assert kept is not None
    assert dropped == 0
    assert len(kept) == seen[0] == 4
    pd.testing.assert_frame_equal(kept, base_games.iloc[:4])

    again = runner.invoke(app, args)
    assert again.exit_code == 2
    assert "holds games of an unfinished run; add --resume" in _plain(again.output)

    resumed = runner.invoke(app, [*args, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert "resuming: 4 games already played" in resumed.output
    assert sum(seen[1:]) == 12  # only the missing games were played
    pd.testing.assert_frame_equal(ev.load(out), base_games)
    assert not journal.exists()


def test_a_cut_journal_line_is_dropped_and_reported(tmp_path, base_games) -> None:
    """A run stopped while writing game 6: the journal holds 6 whole games and part of a line.
    --resume drops the cut line (saying so) and plays game 6 again with the rest."""
    out = tmp_path / "g.parquet"
    journal = Journal(journal_path(out))
    journal.append(base_games.iloc[:6])
    line = normalize(base_games.iloc[[6]]).to_csv(index=False, header=False, lineterminator="\n")
    with journal.path.open("a", encoding="utf-8") as f:
        f.write(line[: len(line) // 2])
    result = runner.invoke(app, [*_small(), "--out", str(out), "--resume"])
    assert result.exit_code == 0, result.output
    text = _plain(result.output)
    assert f"dropped 1 cut line from {journal.path} (replayed)" in text
    assert "resuming: 6 games already played" in text
    pd.testing.assert_frame_equal(ev.load(out), base_games)
    assert not journal.path.exists()
