"""Episode replays of single-team modes (Two-Bridge): a recorded game is the game evaluation
played, files round-trip exactly, and the engine's replay refuses any edit, naming where."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import jax
import numpy as np
import pandas as pd
import pytest

import marl_bgs
from marl_bgs.two_bridge import BridgeFacts, BridgeState
from marl_bgs_eval import EvalError, array_zip, episode_replays
from marl_bgs_eval import two_bridge as tb
from marl_bgs_eval.episodes import play_episodes

SETTINGS = {"variant": "V1_Navigate", "tick_limit": 120}


def _policy(env):
    return marl_bgs.random_policy(env.mode)


@pytest.fixture(scope="module")
def env():
    return marl_bgs.make("two-bridge", num_envs=6, **SETTINGS)


@pytest.fixture(scope="module")
def replays(env) -> list[array_zip.Replay]:
    return episode_replays.record(_policy(env), jax.random.key(7), mode="two-bridge",
                                  settings=SETTINGS, games=[5, 0, 2], system="random")  # fmt: skip


def test_a_recorded_game_is_the_evaluated_game(env, replays) -> None:
    played = play_episodes(env, _policy(env), jax.random.key(7))
    assert [r.header["game"] for r in replays] == [5, 0, 2]  # in the order asked
    for r in replays:
        g = r.header["game"]
        assert r.header["mode"] == "two-bridge-v1"
        assert (r.header["outcome"], r.ticks) == (played.outcome[g], played.ticks[g])
        assert r.arrays["reward"][:, 0].sum() == pytest.approx(played.returns[g], abs=1e-4)
        assert r.arrays["state.tick"].tolist() == list(range(r.ticks + 1))
        assert (r.arrays["state.outcome"][:-1] == 0).all()
        # Every recorded action was legal when it was chosen.
        chosen = np.take_along_axis(r.arrays["masks.flat"], r.arrays["actions"], axis=-1)
        assert chosen.all()


def test_a_game_is_the_same_whatever_the_batch(replays) -> None:
    alone = episode_replays.record(
        marl_bgs.random_policy(marl_bgs.make("two-bridge", **SETTINGS).mode),
        jax.random.key(7), mode="two-bridge", settings=SETTINGS, games=[2], system="random",
    )[0]  # fmt: skip
    assert alone == replays[2]


def test_files_round_trip_byte_for_byte(replays, tmp_path: Path) -> None:
    a = episode_replays.save(replays[0], tmp_path / "a.episode.zip")
    b = episode_replays.save(replays[0], tmp_path / "b.episode.zip")
    assert a.read_bytes() == b.read_bytes()
    back = episode_replays.load(a)
    assert back == replays[0]
    assert back.header["system"] == "random"
    with zipfile.ZipFile(a) as zf:
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in zf.infolist())


def test_history_is_the_modes_pytrees(replays) -> None:
    states, facts = episode_replays.history(replays[1])
    assert isinstance(states, BridgeState)
    assert isinstance(facts, BridgeFacts)
    assert states.friend_pos.shape == (replays[1].ticks + 1, 5, 2)
    assert facts.requested.shape == (replays[1].ticks, 5)
    np.testing.assert_array_equal(states.beacon, replays[1].arrays["state.beacon"])


def _edited(replay: array_zip.Replay, name: str, index: tuple, value) -> array_zip.Replay:
    arrays = {k: v.copy() for k, v in replay.arrays.items()}
    arrays[name][index] = value
    return array_zip.Replay(header=dict(replay.header), arrays=arrays)


@pytest.mark.parametrize(
    ("name", "index", "value", "where"),
    [
        ("state.friend_pos", (0, 1, 0), 3.0, "the start: state.friend_pos"),
        ("state.beacon", (4,), np.float32([1.0, 1.0]), "tick 3: state.beacon"),
        ("actions", (2, 0, 0), 0, "tick 2: "),
        ("reward", (1, 3), 9.0, "tick 1: reward"),
        ("masks.flat", (0, 0, 1), False, "tick 0: masks.flat"),
    ],
)
def test_any_edit_is_caught_where_it_is(replays, name, index, value, where) -> None:
    replay = replays[1]
    if name == "actions":  # a different legal action: the game takes another path
        value = int(replay.arrays["actions"][2, 0, 0] == 0)
    with pytest.raises(EvalError, match=rf"^replay: {where}"):
        episode_replays.verify(_edited(replay, name, index, value))


def test_the_header_must_say_what_happened(replays) -> None:
    r = replays[0]
    for field, value, message in [
        ("outcome", 3 if r.header["outcome"] != 3 else 1, "header says"),
        ("key", [0, 8], "the start: "),
        ("game", 1, "the start: "),
        ("ticks", r.ticks - 1, r"holds \(\d+, 5, 2\)|expected|differs"),
        ("mode", "two-bridge-v0", r"header.mode: recorded in 'two-bridge-v0', this engine plays"),
        ("mode", "two-bridge", r"header.mode: recorded in 'two-bridge'"),  # an alias: no id
        ("format", "marl-bgs-episode-replay-v1", "header: format is"),  # in memory: the new
    ]:
        edited = array_zip.Replay(header={**r.header, field: value}, arrays=r.arrays)
        with pytest.raises(EvalError, match=message):
            episode_replays.verify(edited)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"variant": "V9_Base"}, r"^settings: variant: "),
        ({"bogus": 1}, r"^settings: bogus: not a setting of two-bridge"),
        ({"num_envs": 4}, r"^settings.num_envs: a replay file cannot hold it"),
        ({"reward_fn": "x"}, r"^settings.reward_fn: a replay file cannot hold it"),
        ({"variant": object()}, r"^settings.variant: expected a text, number or boolean"),
        ({"weights": [float("nan")]}, r"^settings.weights: expected a text"),
    ],
)
def test_settings_a_file_cannot_hold_are_refused(env, settings, message) -> None:
    with pytest.raises(EvalError, match=message):
        episode_replays.record(
            _policy(env), jax.random.key(0), mode="two-bridge", settings=settings
        )


def test_a_recording_too_big_for_memory_is_refused(env) -> None:
    with pytest.raises(EvalError, match=r"^games: recording games 0-65535 for up to 100000 ticks"):
        episode_replays.record(_policy(env), jax.random.key(0), mode="two-bridge", games=[65_535],
                               settings={"variant": "V1_Base", "tick_limit": 100_000})  # fmt: skip


def test_tuples_are_recorded_as_lists(env) -> None:
    variants = ("V1_Base", "V1_Navigate")
    settings = {"variant": variants, "tick_limit": 5, "weights": (1, 1)}
    policy = marl_bgs.random_policy(marl_bgs.make("two-bridge", **settings).mode)
    (replay,) = episode_replays.record(
        policy, jax.random.key(0), mode="two-bridge", settings=settings
    )
    assert replay.header["settings"] == {"variant": list(variants), "tick_limit": 5,
                                         "weights": [1, 1]}  # fmt: skip
    episode_replays.verify(replay)


def test_only_episode_modes_one_policy_per_team_and_good_games(env) -> None:
    with pytest.raises(EvalError, match=r"tdm-v2 records its replays in a schema of its own"):
        episode_replays.record(_policy(env), jax.random.key(0), mode="tdm")
    for policies in ([], [_policy(env)] * 2, ["not a policy"]):
        with pytest.raises(EvalError, match=r"^policy: two-bridge-v1 has 1 team\(s\): give one"):
            episode_replays.record(policies, jax.random.key(0), mode="two-bridge",
                                   settings=SETTINGS)  # fmt: skip
    for games in ([], [-1], [1, 1], [70_000], [1.5], [True], ["0"]):
        with pytest.raises(EvalError, match=r"^games: expected distinct game indices"):
            episode_replays.record(
                _policy(env), jax.random.key(0), mode="two-bridge", settings=SETTINGS, games=games
            )


def test_a_saved_file_that_was_edited_is_refused(replays, tmp_path: Path) -> None:
    good = episode_replays.save(replays[0], tmp_path / "good.episode.zip")
    with zipfile.ZipFile(good) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    pos = np.load(io.BytesIO(members["state.friend_pos.npy"]))
    pos[-1, 0, 0] += 1.0
    blob = io.BytesIO()
    np.save(blob, pos, allow_pickle=False)
    members["state.friend_pos.npy"] = blob.getvalue()
    bad = tmp_path / "bad.episode.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    with pytest.raises(EvalError, match=r"^bad.episode.zip: state.friend_pos.npy: checksum"):
        episode_replays.load(bad)
    with pytest.raises(EvalError, match=r"^path: replay file .* does not exist"):
        episode_replays.load(tmp_path / "none.zip")


def test_rows_from_an_evaluation_replay_as_played() -> None:
    settings = {"tick_limit": 80}
    table = tb.evaluate_variants(_policy, variants=["V1_Combat", "V1_Navigate"], episodes=4,
                                 seed=1, **settings)  # fmt: skip
    rows = table.iloc[[6, 1, 2]]
    made = tb.record_rows(_policy, rows, seed=1, **settings)
    for replay, (_, row) in zip(made, rows.iterrows(), strict=True):
        assert replay.header["settings"] == {"variant": row["variant"], **settings}
        assert replay.header["game"] == row["game"]  # the evaluation's game number
        assert replay.arrays["reward"][:, 0].sum() == pytest.approx(row["return"], abs=1e-4)
    wrong = rows.iloc[[1]].assign(ticks=rows["ticks"].iloc[1] - 1)  # not what was played
    with pytest.raises(EvalError, match=r"^games: game 1 ended .* but its row says .* after"):
        tb.record_rows(_policy, wrong, seed=1, **settings)
    with pytest.raises(EvalError, match=r"^rows: missing column\(s\) \['ticks'\]"):
        tb.record_rows(_policy, pd.DataFrame(rows.drop(columns="ticks")), seed=1)
