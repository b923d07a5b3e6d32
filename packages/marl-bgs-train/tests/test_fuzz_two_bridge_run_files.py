"""Fuzz: malformed files of a Two-Bridge run, as `resume` reads them back: its `config.json`
(`run.load_config`) and its checkpoint log `checkpoints.csv`.

The configs are generated from each algorithm's paper settings by walking every field of
`BridgeConfig`: removing it, writing a value of each wrong kind, adding an unknown one; then
whole files that are not a config (other JSON values, broken JSON, bytes, a folder). The logs are
generated from the log of a real tiny run: every column removed or renamed, every cell of every
row set to each bad value, rows dropped, repeated or swapped, the file cut short anywhere before
its last value, random bytes. Each must end in one outcome: a `ConfigError` whose message names the
setting (or, for a log, the file, the row and the column); or, for the valid edge cases, a config
or a resumed log equal to what was written. Nothing may escape, nothing may be read silently.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import shutil
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from marl_bgs import ConfigError
from marl_bgs_train.two_bridge import run as bridge_run
from marl_bgs_train.two_bridge.config import ADDED_SETTINGS, ALGOS, BridgeConfig, paper_config

pytestmark = pytest.mark.fuzz_family("two-bridge run files")

HINTS = typing.get_type_hints(BridgeConfig)
WRONG: dict[Any, list[Any]] = {
    bool: [1, "true", None, []],
    int: [1.5, "3", True, None, [1], 10**30],
    float: ["x", True, None, {}, float("nan"), float("inf")],
    str: [3, None, ["a"], "bogus"],
}


def _config_data(algo: str) -> dict[str, Any]:
    return dataclasses.asdict(paper_config(algo, variant="V2_Combat"))


def _config_cases() -> Iterator[Any]:
    for algo in ALGOS:
        for name, hint in HINTS.items():
            if name not in ADDED_SETTINGS:
                yield pytest.param(algo, name, "drop", None, id=f"{algo}:{name}:drop")
            for k, value in enumerate(WRONG[hint]):
                yield pytest.param(algo, name, "set", value, id=f"{algo}:{name}:wrong{k}")
        yield pytest.param(algo, "surprise", "set", 1, id=f"{algo}:unknown")


@pytest.mark.parametrize(("algo", "name", "how", "value"), list(_config_cases()))
def test_a_malformed_config_is_refused_naming_the_setting(
    tmp_path: Path, record_property: Any, algo: str, name: str, how: str, value: Any
) -> None:
    data = _config_data(algo)
    if how == "drop":
        del data[name]
    else:
        data[name] = value
    (tmp_path / bridge_run.CONFIG_FILE).write_text(json.dumps(data))
    with pytest.raises(ConfigError) as caught:
        bridge_run.load_config(tmp_path)
    named = f"'{name}': not a setting" if name not in HINTS else f"{name}:"
    assert str(caught.value).startswith(named), caught.value
    assert len(str(caught.value)) <= 400
    record_property("outcome", "error")


@pytest.mark.parametrize(
    "content",
    ["", "[1, 2", "[]", "3", '"config"', "null", b"\xff\xfe\x00\x01", "{" * 5000, "folder"],
    ids=["empty", "broken", "list", "number", "string", "null", "bytes", "deep", "folder"],
)
def test_a_file_that_is_not_a_config_is_refused(
    tmp_path: Path, record_property: Any, content: str | bytes
) -> None:
    path = tmp_path / bridge_run.CONFIG_FILE
    if content == "folder":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(ConfigError, match=re.escape(f"run_dir: {path} is not a valid Two-Bridge")):
        bridge_run.load_config(tmp_path)
    record_property("outcome", "error")


@pytest.mark.parametrize("algo", ALGOS)
def test_valid_edge_cases_load_as_written(tmp_path: Path, record_property: Any, algo: str) -> None:
    data = _config_data(algo)
    data["gamma"] = 1  # an integer where a number is expected
    del data["resume_every"]  # a run saved before the setting existed
    (tmp_path / bridge_run.CONFIG_FILE).write_text(json.dumps(dict(reversed(data.items()))))
    loaded = bridge_run.load_config(tmp_path)
    assert loaded == paper_config(algo, variant="V2_Combat", gamma=1.0)
    assert isinstance(loaded.gamma, float)
    record_property("outcome", "accepted")


# The checkpoint log, read back by `resume`: a finished tiny run (checkpoints at 32 and 64).
TINY = {
    "variant": "V1_Navigate",
    "num_envs": 8,
    "total_steps": 64,
    "checkpoint_every": 32,
    "eval_episodes": 2,
    "learning_starts": 32,
    "train_every": 2,
    "buffer_size": 256,
}
BAD_CELLS = ["", "x", "nan", "inf", "-1", "1e400", "9" * 400, "0x10", "1,5"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    run = tmp_path_factory.mktemp("two-bridge-run")
    bridge_run.train(paper_config("qmix", **TINY), run, progress=False)
    return run, (run / bridge_run.LOG_FILE).read_text()


def _log_cases() -> Iterator[Any]:
    columns = bridge_run.LOG_COLUMNS
    for column in columns:
        yield pytest.param("drop column", column, id=f"drop:{column}")
        yield pytest.param("rename column", column, id=f"rename:{column}")
        for row, cells in ((0, BAD_CELLS[:3]), (1, BAD_CELLS)):
            for k, cell in enumerate(cells):
                yield pytest.param("cell", (row, column, cell), id=f"cell:{row}:{column}:{k}")
        if column not in ("steps", "seconds"):
            yield pytest.param("cell", (1, column, "1.5"), id=f"cell:1:{column}:above-one")
    yield pytest.param("cell", (0, "steps", "33"), id="cell:0:steps:off-grid")
    yield pytest.param("cell", (1, "steps", "32"), id="cell:1:steps:repeated")
    yield pytest.param("cell", (0, "steps", "32.5"), id="cell:0:steps:fraction")
    for how in ("drop first row", "drop last row", "swap rows", "repeat first row", "header only"):
        yield pytest.param(how, None, id=how.replace(" ", "-"))
    for k in range(12):
        yield pytest.param("cut", k, id=f"cut:{k}")
    for k in range(6):
        yield pytest.param("bytes", k, id=f"bytes:{k}")
    yield pytest.param("missing", None, id="missing")
    yield pytest.param("folder", None, id="folder")


def _write_log(path: Path, text: str, how: str, what: Any) -> None:
    log = pd.read_csv(path.parent / "good.csv", dtype=str)
    rng = random.Random(str(what))
    if how == "drop column":
        log = log.drop(columns=what)
    elif how == "rename column":
        log = log.rename(columns={what: what + "s"})
    elif how == "cell":
        row, column, cell = what
        log.loc[row, column] = cell
    elif how == "drop first row":
        log = log.iloc[1:]
    elif how == "drop last row":
        log = log.iloc[:1]
    elif how == "swap rows":
        log = log.iloc[::-1]
    elif how == "repeat first row":
        log = pd.concat([log.iloc[:1], log])
    elif how == "header only":
        log = log.iloc[:0]
    if how == "cut":  # anywhere before the last value (a cut inside it leaves a number)
        path.write_bytes(text.encode()[: rng.randrange(1, text.rindex(",") + 1)])
    elif how == "bytes":
        path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))))
    elif how == "missing":
        path.unlink()
    elif how == "folder":
        path.unlink()
        path.mkdir()
    else:
        log.to_csv(path, index=False)


@pytest.mark.parametrize(("how", "what"), list(_log_cases()))
def test_a_malformed_checkpoint_log_is_refused_on_resume(
    finished: tuple[Path, str], tmp_path: Path, record_property: Any, how: str, what: Any
) -> None:
    source, text = finished
    run = tmp_path / "run"
    shutil.copytree(source, run)
    (run / "good.csv").write_text(text)
    path = run / bridge_run.LOG_FILE
    _write_log(path, text, how, what)
    with pytest.raises(ConfigError) as caught:
        bridge_run.resume(run, progress=False)
    message = str(caught.value)
    assert message.startswith(f"run_dir: {path}"), message
    assert len(message) <= 400, message
    if how == "cell":
        row, column, _ = what
        assert f"row {row + 1}" in message or "checkpoint rows" in message, message
        assert column in message or "checkpoint rows" in message, message
    record_property("outcome", "error")


def test_a_whole_log_resumes_as_written(finished: tuple[Path, str], tmp_path, record_property):
    source, text = finished
    run = tmp_path / "run"
    shutil.copytree(source, run)
    resumed = bridge_run.resume(run, progress=False)
    pd.testing.assert_frame_equal(resumed, pd.read_csv(source / bridge_run.LOG_FILE))
    assert (run / bridge_run.LOG_FILE).read_text() == text
    record_property("outcome", "accepted")
