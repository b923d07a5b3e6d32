"""The docs' code blocks that marl-bgs-train claims run as written, every `marl-bgs-train` command
in the docs parses (docs/testing.md, "Code blocks in the docs"), and the hint for the missing
TensorBoard writer installs what the [tensorboard] extra does."""

from __future__ import annotations

import sys
from importlib.metadata import distribution

import pytest
from packaging.requirements import Requirement

from marl_bgs.core.errors import ConfigError
from marl_bgs.testing import doc_block_tests
from marl_bgs_train import runs
from marl_bgs_train.tdm.game import load_curriculum


def _training(namespace: dict) -> None:
    del namespace
    stages = load_curriculum("stages.json")  # the page's stage file, saved as written
    assert [s.winning_score for s in stages] == [5, 10]


CHECKS = {"docs/training.md": _training}

(
    test_page_runs,
    test_every_page_check_names_a_page_run_here,
    test_every_train_command_in_the_docs_parses,
) = doc_block_tests(__file__, "marl-bgs-train", CHECKS, min_commands=10)


def test_the_tensorboard_hint_installs_the_extra(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # as if it were not installed
    with pytest.raises(ConfigError, match="tensorboard: needs tensorboardX; pip install"):
        runs.tensorboard_writer(tmp_path)
    wanted = Requirement(runs.TENSORBOARD_INSTALL.split("'")[1])  # pip install 'tensorboardX...'
    extra = [Requirement(r) for r in distribution("marl-bgs-train").requires or []
             if "extra ==" in r and "tensorboard" in r.split(";")[1]]  # fmt: skip
    assert [(r.name.lower(), r.specifier) for r in extra] == [
        (wanted.name.lower(), wanted.specifier)
    ]
