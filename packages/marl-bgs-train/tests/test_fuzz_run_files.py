"""Fuzz: malformed training-run files, a run's `config.json` (`checkpoints.load_config`),
curriculum files (`load_curriculum`), a batch's `batch.json` (`batch.load_batch`) and a validated
run's `validation.json` (`validation.read_settings`).

Every input is generated from real configs (each learner, with a curriculum; Two-Bridge's
presets for another mode's game section) by walking every
setting with its declared type: removing it, adding an unknown one, and writing a value of each
wrong kind (wrong type, NaN, a value outside a Literal's choices). Each must end in one outcome:
a `ConfigError` whose message names the setting's path (e.g. `curriculum[1].winning_score`), or,
for the valid edge cases (an integer where a number is expected, settings in another order), a
config equal to the one written. Nothing else may escape and nothing may be read silently.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

from marl_bgs import ConfigError
from marl_bgs_train import checkpoints
from marl_bgs_train.batch import BATCH_FILE, load_batch, plan
from marl_bgs_train.config import ValidationSettings, preset_of, to_dict
from marl_bgs_train.tdm.game import Stage, TDMGame, load_curriculum
from marl_bgs_train.testing import tiny_config
from marl_bgs_train.validation import SETTINGS_JSON, read_settings, record_settings

pytestmark = pytest.mark.fuzz_family("training run files")

STAGES = (
    Stage(maps=(0, 1), rosters=(("M", "W"),), winning_score=2, steps=16),
    Stage(maps=(3,), rosters=(("MW", "HR"),), winning_score=3, progress="win_rate", threshold=0.6),
)
BASES = {
    "ppo": tiny_config("mappo-rnn", curriculum=STAGES),
    "pqn": tiny_config("pqn-vdn"),
    "qmix": tiny_config("qmix"),
    "two-bridge-maskppo": preset_of("two-bridge", "maskppo"),  # another mode's game section
    "two-bridge-qmix": preset_of("two-bridge", "qmix"),
}
WRONG: dict[str, list[Any]] = {
    "bool": [1, "true", None],
    "int": [1.5, "3", True, None, [1]],
    "float": ["x", True, None, float("nan"), {}],
    "str": [3, None, ["a"]],
    "literal": ["bogus", 0, None],
    "list": [7, "0,1", {}, None],
    "object": [[], "x", None, 3],
}


def _kind(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint):
        return "object"
    if origin is tuple:
        return "list"
    if origin is Literal:
        return "literal"
    return {bool: "bool", int: "int", float: "float", str: "str"}[hint]


def _fields(
    cls: Any, data: Any, path: str, game: type = TDMGame
) -> Iterator[tuple[str, Any, dict, str]]:
    """(path, hint, the dict holding it, key) for every setting, nested ones included (`game`:
    the class of the config's mode's game section)."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        hint, here = hints[f.name], f"{path}.{f.name}" if path else f.name
        if f.name == "game":  # the mode's own section
            hint = game
        yield here, hint, data, f.name
        if dataclasses.is_dataclass(hint):
            yield from _fields(hint, data[f.name], here)
        elif typing.get_origin(hint) is tuple and dataclasses.is_dataclass(
            typing.get_args(hint)[0]
        ):
            for i, item in enumerate(data[f.name]):
                yield from _fields(typing.get_args(hint)[0], item, f"{here}[{i}]")


def _cases() -> Iterator[Any]:
    for base_id, config in BASES.items():
        data = json.loads(json.dumps(to_dict(config)))
        for path, hint, _holder, _key in _fields(type(config), data, "", type(config.game)):
            game_added = getattr(type(config.game), "ADDED_SETTINGS", {})
            added = {**game_added, **type(config).ADDED_SETTINGS}  # (test_runs)
            if path.removeprefix("game.") not in added:
                yield pytest.param(base_id, path, "drop", None, id=f"{base_id}:{path}:drop")
            for k, value in enumerate(WRONG[_kind(hint)]):
                yield pytest.param(base_id, path, "set", value, id=f"{base_id}:{path}:wrong{k}")
        yield pytest.param(base_id, "", "extra", None, id=f"{base_id}:extra")
        if isinstance(config.game, TDMGame):
            yield pytest.param(base_id, "curriculum", "extra", None, id=f"{base_id}:stage-extra")


def _edit(data: dict, config: Any, path: str, how: str, value: Any) -> None:
    if how == "extra":
        game = data["game"]
        target = game["curriculum"][0] if path == "curriculum" and game["curriculum"] else data
        target["surprise"] = 1
        return
    for p, _hint, holder, key in _fields(type(config), data, "", type(config.game)):
        if p == path:
            if how == "drop":
                del holder[key]
            else:
                holder[key] = value
            return
    raise AssertionError(path)


@pytest.mark.parametrize(("base_id", "path", "how", "value"), list(_cases()))
def test_a_malformed_run_config_is_refused_naming_the_setting(
    tmp_path: Path, record_property: Any, base_id: str, path: str, how: str, value: Any
) -> None:
    config = BASES[base_id]
    data = json.loads(json.dumps(to_dict(config)))
    if how == "extra" and path == "curriculum" and not data["game"]["curriculum"]:
        data["game"]["curriculum"] = json.loads(json.dumps(to_dict(BASES["ppo"])))["game"][
            "curriculum"
        ]
    _edit(data, config, path, how, value)
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError) as caught:
        checkpoints.load_config(tmp_path)
    message = str(caught.value)
    where = path.rsplit(".", 1)[0] if how == "drop" and "." in path else path
    if how == "drop" and "." not in path:
        where = "config"
    if how == "extra":
        where = "game.curriculum[0]" if path == "curriculum" else "config"
    assert where in message, message
    record_property("outcome", "error")


@pytest.mark.parametrize("base_id", list(BASES))
def test_valid_edge_cases_load_as_written(tmp_path: Path, record_property: Any, base_id: str):
    config = BASES[base_id]
    data = json.loads(json.dumps(to_dict(config)))
    data["gamma"] = 1  # an integer where a number is expected
    shuffled = dict(reversed(list(data.items())))  # settings in another order
    (tmp_path / "config.json").write_text(json.dumps(shuffled))
    loaded = checkpoints.load_config(tmp_path)
    assert loaded == dataclasses.replace(config, gamma=1.0)
    assert isinstance(loaded.gamma, float)
    record_property("outcome", "accepted")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "as JSON"),
        ("[1, 2", "as JSON"),
        (b"\xff\xfe\x00", "as JSON"),
        ("{}", "non-empty list of stages"),
        ("[]", "non-empty list of stages"),
        ('"builtin"', "non-empty list of stages"),
        ("[1]", "curriculum[0]"),
        ('[{"maps": [0]}]', "curriculum[0]: expected the settings"),
        ("[" + json.dumps({**to_dict(STAGES[0]), "maps": [49]}) + "]", "test map 49"),
        ("[" + json.dumps({**to_dict(STAGES[0]), "rosters": [["M"]]}) + "]", "rosters[0]"),
        ("[" + json.dumps({**to_dict(STAGES[0]), "steps": -1}) + "]", "curriculum[0]: steps"),
    ],
)
def test_a_malformed_curriculum_file_is_refused(tmp_path, record_property, text, message):
    path = tmp_path / "stages.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_curriculum(str(path))
    record_property("outcome", "error")


def test_a_curriculum_file_loads_as_written(tmp_path, record_property):
    path = tmp_path / "stages.json"
    path.write_text(json.dumps([to_dict(stage) for stage in STAGES]))
    assert load_curriculum(str(path)) == STAGES
    record_property("outcome", "accepted")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(runs=[]), "runs: expected a non-empty list"),
        (lambda d: d.update(runs="s0"), "runs: expected a non-empty list"),
        (lambda d: d.pop("runs"), "runs: expected a non-empty list"),
        (lambda d: d["runs"][0].update(name="../s1"), r"runs\[0\].name"),
        (lambda d: d["runs"][0].update(name=7), r"runs\[0\].name"),
        (lambda d: d["runs"][0].update(name=".."), r"runs\[0\].name"),
        (lambda d: d["runs"][1].update(seed=-1), r"runs\[1\].seed"),
        (lambda d: d["runs"][1].update(seed=True), r"runs\[1\].seed"),
        (lambda d: d["runs"][1].update(seed=1.5), r"runs\[1\].seed"),
        (lambda d: d["runs"][1].update(extra=1), r"runs\[1\]: expected an object"),
        (lambda d: d["runs"][1].pop("seed"), r"runs\[1\]: expected an object"),
        (lambda d: d["runs"].append(dict(d["runs"][0])), "names repeat"),
        (lambda d: d["runs"][0].update(name="s9"), "config.json not found"),
    ],
)
def test_a_malformed_batch_file_is_refused_naming_the_field(tmp_path, record_property, edit,
                                                             message):  # fmt: skip
    runs = plan(BASES["ppo"], [0, 1])
    for r in runs:
        checkpoints.save_config(tmp_path / r.name, r.config)
    data = {"runs": [{"name": r.name, "seed": r.seed} for r in runs]}
    (tmp_path / BATCH_FILE).write_text(json.dumps(data))
    assert load_batch(tmp_path) == runs  # the file as written loads
    edit(data)
    (tmp_path / BATCH_FILE).write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=message):
        load_batch(tmp_path)
    for text in ("{", "[1]", ""):
        (tmp_path / BATCH_FILE).write_text(text)
        with pytest.raises(ConfigError, match="batch"):
            load_batch(tmp_path)
    record_property("outcome", "error")


VALIDATION = ValidationSettings(maps=(42, 44), panel=("idle",), games_per_map=2, tick_limit=6)
_VALIDATION_WRONG: dict[str, list[Any]] = {  # per field: values of a wrong kind or size
    "maps": [7, "42", [True], [None], [1.5], [47], [99], ["no-such.json"]],
    "panel": ["idle", [3], [None], ["no-such-system"], ["ckpt:/no/such/run"]],
    "games_per_map": [3, 0, -2, 2.0, True, None, "4", 2**40],
    "seed": [1.5, "0", None, False, -1, 2**63, 2**70],
    "batch_size": [0, -1, 2.5, None],
    "tick_limit": [0, -6, 6.5, "6", False, 10**6, 2**70],
    "greedy": [0, "true", None],
}


def _validation_cases() -> Iterator[Any]:
    for name, values in _VALIDATION_WRONG.items():
        yield pytest.param(name, "drop", None, id=f"{name}:drop")
        for k, value in enumerate(values):
            yield pytest.param(name, "set", value, id=f"{name}:wrong{k}")
    yield pytest.param("surprise", "set", 1, id="extra")


@pytest.mark.parametrize(("name", "how", "value"), list(_validation_cases()))
def test_a_malformed_validation_file_is_refused_naming_the_field(
    tmp_path: Path, record_property: Any, name: str, how: str, value: Any
) -> None:
    checkpoints.save_config(tmp_path, BASES["ppo"])
    record_settings(tmp_path, VALIDATION)
    assert read_settings(tmp_path) == VALIDATION  # the file as written loads
    data = json.loads((tmp_path / SETTINGS_JSON).read_text())
    if how == "drop":
        del data[name]
    else:
        data[name] = value
    (tmp_path / SETTINGS_JSON).write_text(json.dumps(data))
    where = "validation" if how == "drop" or name == "surprise" else name
    with pytest.raises(ConfigError, match=re.escape(where)) as caught:
        read_settings(tmp_path)
    if name == "maps" and value in ([47], [99], ["no-such.json"]):
        assert any(str(v) in str(caught.value) for v in value)  # the map named, not the field
    record_property("outcome", "error")


def test_a_validation_file_that_is_not_json_is_refused(tmp_path, record_property):
    checkpoints.save_config(tmp_path, BASES["ppo"])
    assert read_settings(tmp_path) is None  # a run trained without validation
    for text in ("", "{", "[1]", "null", '"x"', "[" * 100_000, '{"maps": ' * 50_000):
        (tmp_path / SETTINGS_JSON).write_text(text)
        with pytest.raises(ConfigError, match="validation"):
            read_settings(tmp_path)
    (tmp_path / SETTINGS_JSON).write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="validation"):
        read_settings(tmp_path)
    record_property("outcome", "error")
