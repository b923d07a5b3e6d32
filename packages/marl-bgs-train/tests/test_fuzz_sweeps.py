"""Fuzz: `--sweep` items as the command line reads them (`cli._sweep`, then `batch.plan`), for
Team Deathmatch and Two-Bridge configs.

Inputs are generated per sweepable setting of each base config (its learning rates, lambdas,
coefficients, reward weights, layouts) and for settings that change a program: each value of a
list of wrong kinds (words, NaN, infinities, empty values, lists where a number is expected),
values out of range, the grammar's own mistakes (no `=`, no setting, a setting twice, an
unknown setting) and layouts a run may not play (test maps, unknown variants, variants of two
unit counts in one run). Each must end in one outcome: a `ConfigError` whose message names the
setting or `--sweep`, or, for a valid sweep, one run per value (per seed) whose config holds the
value as written. Nothing else may escape.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
import typer

from marl_bgs import ConfigError
from marl_bgs_train.batch import plan
from marl_bgs_train.cli import _sweep
from marl_bgs_train.config import preset_of
from marl_bgs_train.hypers import sweepable
from marl_bgs_train.testing import tiny_config

pytestmark = pytest.mark.fuzz_family("training sweeps")

BASES = {"tdm": tiny_config("ippo-rnn"), "two-bridge": preset_of("two-bridge", "maskppo")}
WRONG_NUMBERS = [
    "x",
    "nan",
    "inf",
    "-inf",
    "1e999",
    "[1]",
    "true",
    "0.1.2",
    "١",
    "0x10",
    "1_0",
    " ",
]


def _range(name: str) -> tuple[list[str], list[str]]:
    """Values out of the setting's declared range, and edge values inside it."""
    if name.endswith("lambda"):  # [0, 1]
        return ["-1", "1.5"], ["0", "1"]
    if name.startswith("game.reward."):  # any finite weight
        return [], ["-1", "1e9"]
    return ["-1"], ["0", "1e9"]  # >= 0


class Case(NamedTuple):
    id: str
    mode: str
    items: list[str]
    expect: str | None  # a pattern of the error, None: accepted


def _setting(config: Any, name: str) -> Any:
    for part in name.split("."):
        config = getattr(config, part)
    return config


def _cases() -> Iterator[Case]:
    for mode, base in BASES.items():
        numbers = [s for s in sweepable(base) if not s.startswith("game.") or "reward" in s]
        for name in numbers:
            for j, value in enumerate(WRONG_NUMBERS):
                yield Case(
                    f"{mode}-{name}-wrong{j}", mode, [f"{name}=0.1,{value}"], re.escape(name)
                )
            refused, allowed = _range(name)
            for value in refused:
                yield Case(f"{mode}-{name}-out{value}", mode, [f"{name}={value}"], re.escape(name))
            for value in allowed:
                yield Case(f"{mode}-{name}-edge{value}", mode, [f"{name}={value}"], None)
            yield Case(f"{mode}-{name}-ok", mode, [f"{name}=0.1,0.2"], None)
            yield Case(f"{mode}-{name}-twice", mode, [f"{name}=0.1", f"{name}=0.2"], "twice")
            yield Case(f"{mode}-{name}-empty", mode, [f"{name}="], "at least one value")
            yield Case(f"{mode}-{name}-blank", mode, [f"{name}=,;"], re.escape(name))
        for j, item in enumerate(["lr", "=0.1", " =0.1", ""]):
            yield Case(f"{mode}-grammar{j}", mode, [item], "--sweep")
        yield Case(f"{mode}-unknown", mode, ["no_such_setting=1,2"], "no_such_setting")
        yield Case(f"{mode}-hidden", mode, ["hidden=8,16"], None)  # one program per value
        yield Case(f"{mode}-hidden-bad", mode, ["hidden=8,0"], "hidden")
    tdm = [("0-3;4-7", None), ("47", "test"), ("0-3;999", "map"), ("0-3;train", None),
           ("zero", "maps"), ("0-3;0-3", "repeat")]  # fmt: skip
    for j, (value, expect) in enumerate(tdm):
        yield Case(f"tdm-maps{j}", "tdm", [f"game.maps={value}"], expect)
    bridge = [("V1_Base;V1_Combat", None), ("V1_Base;V2_Base", None), ("V9_Nothing", "V9"),
              ("V1_Base,V2_Base;V1_Combat", "unit count"), ("all", "unit count")]  # fmt: skip
    for j, (value, expect) in enumerate(bridge):
        yield Case(f"two-bridge-variants{j}", "two-bridge", [f"game.variants={value}"], expect)


CASES = list(_cases())


def test_there_are_enough_sweep_cases() -> None:
    assert len(CASES) >= 150
    assert len({c.id for c in CASES}) == len(CASES)
    assert sum(c.expect is None for c in CASES) >= 10


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_sweep_is_refused_naming_the_setting_or_planned_as_written(
    case: Case, record_property: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    base = BASES[case.mode]
    if case.expect is not None:  # the layout grammar ends the command with its error line
        with pytest.raises((ConfigError, typer.Exit)) as refused:
            plan(base, [0, 1], _sweep(case.items, case.mode))
        said = capsys.readouterr().err if refused.type is typer.Exit else str(refused.value)
        assert re.search(case.expect, said), said
        record_property("outcome", "error")
        return
    swept = _sweep(case.items, case.mode)
    runs = plan(base, [0, 1], swept)
    ((name, values),) = swept.items()
    assert len(runs) == 2 * len(values)
    for j, value in enumerate(values):
        held = [_setting(run.config, name) for run in runs[2 * j : 2 * j + 2]]
        if isinstance(held[0], int | float):
            assert all(math.isclose(h, float(value)) for h in held)
        else:  # layouts: the indices the layout grammar read
            assert all(",".join(str(i) for i in h) == value for h in held)
    record_property("outcome", "accepted")
