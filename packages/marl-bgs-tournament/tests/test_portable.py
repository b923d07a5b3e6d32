"""Portable System files: what they hold, that they play as exported, and what is refused."""

from __future__ import annotations

import json
import zipfile

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import marl_bgs_eval as ev
from marl_bgs_eval.tdm.replay import mode_id
from marl_bgs_tournament import TournamentError, export_system, load_system, read_manifest
from marl_bgs_tournament.portable import input_spec
from marl_bgs_tournament.portable.format import inputs_example


def _rewrite(src, dst, edit=None, extra=None):
    """Copy a System file, editing its manifest with `edit(dict)` and adding members."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "manifest.json" and edit is not None:
                manifest = json.loads(data)
                edit(manifest)
                data = json.dumps(manifest).encode()
            zout.writestr(info.filename, data)
        for name, data in (extra or {}).items():
            zout.writestr(name, data)
    return dst


def test_the_manifest_describes_the_file(mix_files) -> None:
    m = read_manifest(mix_files["mix5"])
    assert m["name"] == "mix5"
    assert m["team"] == "team-mix5"
    assert m["mode"] == mode_id()
    assert m["batch_sizes"] == [1, 16]
    assert m["inputs"] == input_spec()
    assert m["params"] == [[[], "float32"]]
    assert m["training"] == {"maps": [0, 1, 2], "scenarios": []}
    with zipfile.ZipFile(mix_files["mix5"]) as zf:
        names = set(zf.namelist())
    assert names == {"manifest.json", *m["members"]}
    assert "param-0000.npy" in names
    assert "act-16.jaxexport" in names


def test_files_of_one_architecture_share_their_programs(mix_files) -> None:
    a, b = load_system(mix_files["mix0"]), load_system(mix_files["mix9"])
    assert a.program_key() == b.program_key()  # one compiled program per pairing shape
    assert float(a.params[0]) == 0.0
    assert float(b.params[0]) == pytest.approx(0.9)
    assert a.program_key() != ev.get_system("tdm-beta").program_key()


def test_a_scripted_team_survives_export_with_its_memory(tmp_path) -> None:
    beta = ev.get_system("tdm-beta")
    path = export_system(beta, tmp_path / "beta.mbgs", team="organisers", batch_sizes=(1, 4))
    assert len(path["memory"]) > 0
    loaded = load_system(tmp_path / "beta.mbgs")
    keys = jax.random.split(jax.random.key(3), 3)
    want = jax.vmap(beta.bind(beta.params).init)(keys)  # its style's numbers are its weights
    got = jax.vmap(loaded.bind(loaded.params).init)(keys)  # 3 games: the size-4 program, padded
    for x, y in zip(jax.tree.leaves(want), got, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    with pytest.raises(ev.EvalError, match="at most 4 games"):
        jax.vmap(loaded.bind(loaded.params).init)(jax.random.split(jax.random.key(3), 5))


def test_host_systems_and_bad_names_are_refused(tmp_path) -> None:
    host = ev.system(lambda k, m, i: (np.zeros((len(k), 5, 3), np.int32), m), name="h", host=True)
    with pytest.raises(TournamentError, match="host System"):
        export_system(host, tmp_path / "h.mbgs", team="lab")
    with pytest.raises(TournamentError, match="team"):
        export_system(ev.idle_system(), tmp_path / "i.mbgs", team="../etc")
    with pytest.raises(TournamentError, match="batch_sizes"):
        export_system(ev.idle_system(), tmp_path / "i.mbgs", team="lab", batch_sizes=(0,))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(mode="tdm-v0"), "manifest.mode"),
        (lambda m: m.update(mode="tdm"), "manifest.mode"),  # an alias: not a versioned id
        (lambda m: m.update(mode=["tdm-v2"]), "manifest.mode"),
        (lambda m: m.update(mode="two-bridge-v1"), "manifest.inputs"),  # another mode's shapes
        (lambda m: m.update(format="other"), "manifest.format"),
        (lambda m: m["inputs"][0][0].append(3), "manifest.inputs"),
        (lambda m: m.update(memory=[[[1 << 20], "float32"]]), "manifest.memory"),
        (lambda m: m.update(batch_sizes=[16, 1]), "manifest.batch_sizes"),
        (lambda m: m.update(classes=[0]), "manifest.classes"),
        (lambda m: m.update(training={"maps": ["47"]}), "manifest.training.maps"),
        (lambda m: m.pop("members"), "missing"),
        (lambda m: m["members"].update({"param-0000.npy": "0" * 64}), "sha256 differs"),
        (lambda m: m.update(name="a/b"), "manifest.name"),
    ],
)
def test_edited_manifests_are_refused(mix_files, tmp_path, edit, message) -> None:
    bad = _rewrite(mix_files["mix5"], tmp_path / "bad.mbgs", edit)
    with pytest.raises(TournamentError, match=message):
        read_manifest(bad)


def test_changed_members_extra_members_and_big_files_are_refused(mix_files, tmp_path) -> None:
    with zipfile.ZipFile(mix_files["mix5"]) as zf:
        weights = zf.read("param-0000.npy")
    changed = bytearray(weights)
    changed[-1] ^= 0x40  # another weight, same shape
    tampered = tmp_path / "tampered.mbgs"
    with zipfile.ZipFile(mix_files["mix5"]) as zin, zipfile.ZipFile(tampered, "w") as zout:
        for info in zin.infolist():
            body = bytes(changed) if info.filename == "param-0000.npy" else zin.read(info)
            zout.writestr(info.filename, body)
    for read in (read_manifest, load_system):
        with pytest.raises(TournamentError, match="changed after export"):
            read(tampered)
    extra = _rewrite(mix_files["mix5"], tmp_path / "extra.mbgs", extra={"run.py": b"print(1)"})
    with pytest.raises(TournamentError, match="extra"):
        read_manifest(extra)
    with pytest.raises(TournamentError, match="more than the limit"):
        read_manifest(mix_files["mix5"], max_bytes=1000)
    (tmp_path / "junk.mbgs").write_bytes(b"not a zip at all")
    with pytest.raises(TournamentError, match="not a System file"):
        load_system(tmp_path / "junk.mbgs")
    with pytest.raises(TournamentError, match="does not exist"):
        load_system(tmp_path / "missing.mbgs")


@pytest.mark.parametrize(
    ("body", "disabled", "message"),
    [
        (lambda: jnp.linalg.qr(jnp.eye(4))[0].sum(), False, r"refused: custom calls \['lapack"),
        (lambda: jnp.float32(0), True, "refused: disabled safety checks"),
    ],
)
def test_programs_that_could_do_more_than_compute_are_refused(
    mix_files, system_zip, tmp_path, body, disabled, message
) -> None:
    from jax import export

    def hostile(p, key_data):
        del p, key_data
        return [jnp.zeros((16,), jnp.float32) + body()]

    checks = [export.DisabledSafetyCheck.platform()] if disabled else []
    ex = export.export(jax.jit(hostile), disabled_checks=checks)(
        [jax.ShapeDtypeStruct((), jnp.float32)], jax.ShapeDtypeStruct((16, 2), jnp.uint32)
    )
    bad = tmp_path / "hostile.mbgs"  # everything the loader hashes agrees; no memory
    bad.write_bytes(system_zip(mix_files["mix5"], {"init-16.jaxexport": bytes(ex.serialize())},
                               lambda m: m.update(memory=[])))  # fmt: skip
    with pytest.raises(TournamentError, match=message):
        load_system(bad)


def test_sizes_that_overflow_and_odd_weight_dtypes_are_refused(mix_files, tmp_path) -> None:
    huge = _rewrite(mix_files["mix5"], tmp_path / "huge.mbgs",
                    lambda m: m.update(memory=[[[65536] * 4, "float32"]]))  # fmt: skip
    with pytest.raises(TournamentError, match=r"manifest\.memory"):
        read_manifest(huge)
    import jax.numpy as jnp

    wide = ev.system(lambda p, k, m, i: (jnp.zeros((i.obs.shape[0], 5, 3), jnp.int32), m),
                     name="wide", params={"w": jnp.zeros(3, jnp.bfloat16)})  # fmt: skip
    with pytest.raises(TournamentError, match="bfloat16"):
        export_system(wide, tmp_path / "wide.mbgs", team="lab", batch_sizes=(1,))
    assert not (tmp_path / "wide.mbgs.part").exists()


def test_a_per_agent_system_starts_its_memory_from_one_key_a_game(tmp_path) -> None:
    import jax.numpy as jnp

    def act(keys, memory, inputs):
        assert keys.shape == (inputs.obs.shape[0], 5)
        return jnp.zeros((inputs.obs.shape[0], 5, 3), jnp.int32), memory + 1

    sys = ev.system(act, name="per-agent", per_agent=True, init=lambda k: jnp.zeros(2))
    export_system(sys, tmp_path / "pa.mbgs", team="lab", batch_sizes=(1, 4))
    loaded = load_system(tmp_path / "pa.mbgs")
    assert loaded.per_agent
    memory = jax.vmap(loaded.bind(loaded.params).init)(jax.random.split(jax.random.key(0), 3))
    assert memory[0].shape == (3, 2)


def test_a_two_bridge_system_exports_loads_and_plays_as_the_original(tmp_path) -> None:
    original = ev.random_system("two-bridge")
    m = export_system(original, tmp_path / "tb.mbgs", team="lab", batch_sizes=(2,),
                      layout="V1_Base")  # fmt: skip
    assert m["mode"] == original.mode == "two-bridge-v1"
    assert m["inputs"] == input_spec("two-bridge", "V1_Base") != input_spec("two-bridge", "V2")
    loaded = load_system(tmp_path / "tb.mbgs")
    assert loaded.mode == original.mode
    # the settings of eval's Two-Bridge tests: the original's program is likely compiled already
    play = {"mode": "two-bridge", "maps": "V1_Base", "games_per_map": 2, "tick_limit": 20,
            "metrics": "none", "batch_size": 2}  # fmt: skip
    want = ev.evaluate(original, **play)
    assert len(want) == 2
    assert set(want["mode"]) == {"two-bridge-v1"}
    pd.testing.assert_frame_equal(ev.evaluate(loaded, **play), want)
    with pytest.raises(ev.EvalError, match="plays two-bridge-v1, not tdm-v2"):
        ev.evaluate(loaded, ev.random_system(), maps=[47], games_per_map=2, batch_size=2)
    v2 = [jnp.zeros((2, *shape), dtype) for shape, dtype in input_spec("two-bridge", "V2_Base")]
    inputs = jax.tree.unflatten(jax.tree.structure(inputs_example("two-bridge")), v2)
    with pytest.raises(ev.EvalError, match="exported for layouts of other shapes"):
        loaded.act(loaded.params, jax.random.split(jax.random.key(0), 2), [], inputs)
    as_tdm = _rewrite(tmp_path / "tb.mbgs", tmp_path / "as-tdm.mbgs",
                      lambda m: m.update(mode="tdm-v2"))  # fmt: skip
    with pytest.raises(TournamentError, match=r"manifest\.inputs"):
        load_system(as_tdm)
