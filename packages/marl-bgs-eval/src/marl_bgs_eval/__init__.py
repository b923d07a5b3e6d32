"""Evaluation for MARL-BattleGrounds: Systems, evaluate, metrics, cross-play, Elo with intervals.

Metrics at three levels (`find("heal")` searches the 2,740 full columns), analysis
measures per System from its own side (`system_metrics`), zero-shot coordination (`zero_shot`),
the endgame scenarios against random play (`evaluate_scenarios`).

import marl_bgs_eval as ev
games = ev.evaluate(ev.random_system(), "idle", maps=[47, 48], games_per_map=4)
ratings = ev.rate(games, bootstrap=1000, seed=0)
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from marl_bgs_eval.lazy import export_lazily
from marl_bgs_eval.moved import install as _install

if TYPE_CHECKING:  # the exports, each imported on first use (marl_bgs_eval.lazy)
    from marl_bgs import TeamInputs
    from marl_bgs_eval.compare import plot_measure_vs_elo, system_metrics
    from marl_bgs_eval.crossplay import cross_play
    from marl_bgs_eval.distinct import distinct_games, mirror_pairs
    from marl_bgs_eval.errors import EvalError
    from marl_bgs_eval.evaluate import evaluate, resolve_maps
    from marl_bgs_eval.game_replays import record_games
    from marl_bgs_eval.measures import Measure
    from marl_bgs_eval.modes import EvalParts
    from marl_bgs_eval.ratings import BTDFit, fit_btd, rate
    from marl_bgs_eval.registry import get_system, register, register_prefix
    from marl_bgs_eval.results import combine, load, save, validate
    from marl_bgs_eval.systems import System, idle_system, random_system, system
    from marl_bgs_eval.tdm.compose import pool, team
    from marl_bgs_eval.tdm.metrics import base_columns, find, priority_columns, schema
    from marl_bgs_eval.tdm.metrics.analysis import MEASURES
    from marl_bgs_eval.tdm.scenarios import SCRIPTED_TEAMS, evaluate_scenarios, scenario_games
    from marl_bgs_eval.tdm.zero_shot import plot_zero_shot, zero_shot
    from marl_bgs_eval.tiers import TIERS, division, tier, win_chance

__version__ = _version("marl-bgs-eval")
__all__ = [
    "MEASURES",
    "SCRIPTED_TEAMS",
    "TIERS",
    "BTDFit",
    "EvalError",
    "EvalParts",
    "Measure",
    "System",
    "TeamInputs",
    "__version__",
    "base_columns",
    "combine",
    "cross_play",
    "distinct_games",
    "division",
    "evaluate",
    "evaluate_scenarios",
    "find",
    "fit_btd",
    "get_system",
    "idle_system",
    "load",
    "mirror_pairs",
    "plot_measure_vs_elo",
    "plot_zero_shot",
    "pool",
    "priority_columns",
    "random_system",
    "rate",
    "record_games",
    "register",
    "register_prefix",
    "resolve_maps",
    "save",
    "scenario_games",
    "schema",
    "system",
    "system_metrics",
    "team",
    "tier",
    "validate",
    "win_chance",
    "zero_shot",
]

export_lazily(__name__)
# Old paths of moved modules (old -> new): they still import, with a DeprecationWarning.
MOVED = {
    "marl_bgs_eval.legend": "marl_bgs_eval.tdm.legend",
    "marl_bgs_eval.compose": "marl_bgs_eval.tdm.compose",
    "marl_bgs_eval.zero_shot": "marl_bgs_eval.tdm.zero_shot",
    "marl_bgs_eval.opponents": "marl_bgs_eval.tdm.opponents",
    "marl_bgs_eval.scenarios": "marl_bgs_eval.tdm.scenarios",
    "marl_bgs_eval.replays": "marl_bgs_eval.tdm.replays",
    "marl_bgs_eval.metrics": "marl_bgs_eval.tdm.metrics",
    "marl_bgs_eval.metrics.analysis": "marl_bgs_eval.tdm.metrics.analysis",
    "marl_bgs_eval.metrics.axes": "marl_bgs_eval.tdm.metrics.axes",
    "marl_bgs_eval.metrics.families": "marl_bgs_eval.tdm.metrics.families",
    "marl_bgs_eval.metrics.priority": "marl_bgs_eval.tdm.metrics.priority",
    "marl_bgs_eval.metrics.timing": "marl_bgs_eval.tdm.metrics.timing",
    "marl_bgs_eval.metrics.compare": "marl_bgs_eval.compare",
}
_install(MOVED)
