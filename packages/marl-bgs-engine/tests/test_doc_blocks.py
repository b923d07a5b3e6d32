"""The docs' code blocks that marl-bgs-engine claims run as written, at the tiny sizes of
`marl_bgs.doc_blocks.TINY` (docs/testing.md, "Code blocks in the docs")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from marl_bgs import doc_blocks
from marl_bgs.testing import doc_block_tests

ROOT = Path(__file__).resolve().parents[3]
PAGES = doc_blocks.claimed_by(ROOT, "marl-bgs-engine") if (ROOT / "docs").is_dir() else {}


def _api(namespace: dict) -> None:
    assert namespace["rewards"]["a_0"].shape == (3, 4)  # length=3 ticks of num_envs=4 games


def _maps(namespace: dict) -> None:
    assert namespace["spec"].name == "Two Pillars and a Wall"  # the page's JSON, saved and read


CHECKS = {"docs/api.md": _api, "docs/maps.md": _maps}

(test_page_runs, test_every_page_check_names_a_page_run_here) = doc_block_tests(
    __file__, "marl-bgs-engine", CHECKS
)


def test_the_demo_hint_says_how_to_get_marl_bgs_eval(tmp_path: Path, monkeypatch) -> None:
    """The demo's closing hint: this environment's marl-bgs-eval where it is installed (under
    `nox -s demo`: .nox/demo/bin/), else the install from the clone's root (the packages are not
    on PyPI). marl-bgs-eval's tests parse the command it names."""
    from marl_bgs.tdm import demo

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "env" / "bin" / "python"))
    (tmp_path / "env" / "bin").mkdir(parents=True)
    hint = demo.next_steps()
    assert f"`{demo.EVAL_INSTALL}` from the clone's root" in hint
    assert "marl-bgs-eval play tdm-alpha random --maps test" in hint
    folders = [a for a in demo.EVAL_INSTALL.split() if a.startswith("./packages/")]
    assert folders == ["./packages/marl-bgs-engine", "./packages/marl-bgs-eval"]
    assert all((ROOT / folder).is_dir() for folder in folders) or not PAGES
    (tmp_path / "env" / "bin" / "marl-bgs-eval").touch()
    assert "`env/bin/marl-bgs-eval play tdm-alpha random --maps test`" in demo.next_steps()
    monkeypatch.chdir(tmp_path / "env")
    assert "`bin/marl-bgs-eval play" in demo.next_steps()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # outside: the whole path, no ../
    assert f"`{tmp_path / 'env' / 'bin' / 'marl-bgs-eval'} play" in demo.next_steps()


def test_the_demo_answers_version(capsys) -> None:
    """`python -m marl_bgs.tdm.demo --version`: the line every command line's `--version` starts
    with (the engine has no typer; the other command lines print it through marl_bgs_eval)."""
    import marl_bgs
    from marl_bgs.tdm import demo

    with pytest.raises(SystemExit) as stop:
        demo.main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"marl-bgs-engine {marl_bgs.__version__}\n"


def test_the_demos_old_path_warns_and_forwards(monkeypatch) -> None:
    """`marl_bgs.demo` moved to `marl_bgs.tdm.demo`: the old path warns, naming the new one,
    and its names are the new module's."""
    from marl_bgs.tdm import demo

    monkeypatch.delitem(sys.modules, "marl_bgs.demo", raising=False)
    with pytest.warns(FutureWarning, match=r"marl_bgs.demo moved to marl_bgs.tdm.demo: run python"):
        import marl_bgs.demo as old
    assert old.main is demo.main
