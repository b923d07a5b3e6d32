"""Write the scenario page (`docs/scenarios.md`); a docs tool of the repository, not part of the
engine's wheel (it needs marl-bgs-engine installed).

    python ci/docs_pages/scenarios_page.py --doc docs/scenarios.md
    python ci/docs_pages/scenarios_page.py --check docs/scenarios.md   # exit 1 if out of date

The page is generated from the scenario files alone: every winning line and every variant is
replayed against the scenario's controller (`play`) and the page shows what the replay gives,
score by score, so it cannot claim a win the engine does not reproduce. The page links one picture
per scenario, `<images>/scenario_<id>.png`; package marl-bgs-clients draws them with its renderer
(`python -m marl_bgs_clients.tdm.atlas scenarios --out docs/scenarios`).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from marl_bgs.core.arena import MOVE_NAMES
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.actions import COMBAT_NAMES
from marl_bgs.tdm.authoring import UnitSpec
from marl_bgs.tdm.config import RuleValues
from marl_bgs.tdm.constants import A_WINS, B_WINS, DRAW, ONGOING, TEAM_SIZE
from marl_bgs.tdm.scenarios.env import MAX_TICKS, REPLAY_BATCH, padded_plans, play
from marl_bgs.tdm.scenarios.files import (
    AGENT_NAMES,
    FORMAT,
    SKILLS,
    Action,
    Scenario,
    shipped,
)

_COMMAND = "python ci/docs_pages/scenarios_page.py --doc docs/scenarios.md"
_PICTURES = "python -m marl_bgs_clients.tdm.atlas scenarios --out docs/scenarios"
_NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_ENDED = {A_WINS: "A wins", B_WINS: "B wins", DRAW: "draw"}
_RESULT = {A_WINS: "win", B_WINS: "loss", DRAW: "draw", ONGOING: "unfinished"}


# -- units ---------------------------------------------------------------------------------------


def _cls(unit: UnitSpec) -> int:
    return C.class_id(unit.cls, "cls")


def agent_label(slot: int, cls: int) -> str:
    """'a_0 (Mage)': the agent name and its class."""
    return f"{AGENT_NAMES[slot]} ({C.CLASS_NAMES[cls].capitalize()})"


def _health(unit: UnitSpec) -> tuple[float, float]:
    max_h = float(C.MAX_HEALTH[_cls(unit)])
    return (max_h if unit.health is None else float(unit.health)), max_h


def statuses(unit: UnitSpec, counts: bool = False) -> list[str]:
    """A unit's statuses in short words ("cd 2", "trap 4", "slow", ...); `counts` adds the
    ticks left to slow, shield and freedom too."""
    out = []
    for field, word in (("cooldown", "cd"), ("stun", "stun"), ("trap", "trap"),
                        ("burst", "burst"), ("antiheal", "antiheal")):  # fmt: skip
        if getattr(unit, field):
            out.append(f"{word} {getattr(unit, field)}")
    slow = max(unit.slow_charge, unit.slow_hunter, unit.slow_poison)
    for word, ticks in (("slow", slow), ("shield", unit.shield), ("freedom", unit.freedom)):
        if ticks:
            out.append(f"{word} {ticks}" if counts else word)
    return out


def _slot_classes(scenario: Scenario) -> dict[int, int]:
    return {u.slot: _cls(u) for u in scenario.units}


# -- replays -------------------------------------------------------------------------------------


def replay(scenario: Scenario) -> dict[str, np.ndarray]:
    """Play every line, then every variant, of `scenario` in one batch: `outcome` [MAX_TICKS, n]
    and `score` [MAX_TICKS, n, 2] per tick, n = lines + variants (one program per controller)."""
    plans = [line.actions() for line in scenario.lines]
    plans += [v.actions(scenario.lines) for v in scenario.variants]
    batch = np.concatenate([padded_plans(p[None]) for p in plans])
    fill = np.repeat(batch[:1], max(0, REPLAY_BATCH - len(batch)), axis=0)
    out = play(scenario, plans=np.concatenate([batch, fill]))
    n = len(plans)
    return {"outcome": out["outcome"][:, :n], "score": out["score"][:, :n]}


def _ending(outcome: np.ndarray, score: np.ndarray, i: int) -> tuple[int, int | None, str]:
    """(final outcome, tick it ended on or None, final score 'A-B') of game i."""
    ended = np.flatnonzero(outcome[:, i] != ONGOING)
    tick = int(ended[0]) + 1 if len(ended) else None
    a, b = score[-1, i]
    return int(outcome[-1, i]), tick, f"{a}-{b}"


def _result_text(result: int, tick: int | None, score: str) -> str:
    if tick is None:
        return f"{_RESULT[result]} after {MAX_TICKS} ticks ({score})"
    return f"{_RESULT[result]}, {score} on tick {tick}"


# -- page ----------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _anchor(text: str) -> str:
    return re.sub(r"[^\w\- ]", "", text.lower()).strip().replace(" ", "-")


def _heading(sc: Scenario) -> str:
    return f"Scenario {sc.id}: {sc.challenge}"


def _count(n: int, noun: str) -> str:
    word = _NUMBERS[n] if n < len(_NUMBERS) else str(n)
    return f"{word} {noun}{'s' * (n != 1)}"


def _combat(action: Action, classes: dict[int, int]) -> str:
    name = COMBAT_NAMES[action.target][action.ultimate]
    match = re.fullmatch(r"(ally|enemy)_(\d)_\w+", name)
    if match is None:
        return f"`{name}`"
    slot = int(match[2]) + (TEAM_SIZE if match[1] == "enemy" else 0)
    return f"`{name}` on {agent_label(slot, classes.get(slot, 0))}"


def _move_combat(action: Action, classes: dict[int, int]) -> str:
    return f"{MOVE_NAMES[action.move]}, {_combat(action, classes)}"


def _fill(text: str, indent: str = "") -> str:
    """One prose paragraph wrapped at 100 columns (never inside a word or at a hyphen)."""
    return textwrap.fill(" ".join(text.split()), 100, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)  # fmt: skip


def _intro(scenarios: list[Scenario]) -> str:
    rules = RuleValues()
    first = scenarios[0].id if scenarios else 6
    id_list = ", ".join(str(s.id) for s in scenarios)
    ids_word = "id" if len(scenarios) == 1 else "ids"
    what = f"""A scenario freezes a game of Team Deathmatch a few ticks before its end, in a
    position team A has all but lost, on an arena made for it (not one of the shipped maps), and
    team B is played by a scripted controller. Team A must win within the ticks left, that is reach
    {rules.winning_score} points with more than team B has; when the clock runs out the game is a
    draw. The positions are built so that only a precise, coordinated plan wins: each one below
    comes with its winning line(s), replayed here against the controller tick by tick, and with
    variants in which one changed move throws the win away. The engine ships
    {_count(len(scenarios), "scenario")} ({ids_word} {id_list})."""
    files = f"""Files. Each scenario is a JSON file in format `{FORMAT}` under
    `packages/marl-bgs-engine/src/marl_bgs/tdm/scenarios/data/`: its id, name, challenge,
    description and skills, the controller of team B, the arena (a `marl-bgs-map-v1` map of split
    `custom`), the score, ticks left and both wave countdowns, every unit (agent, class, position,
    health and statuses, checked like any authored state), team A's winning lines (per tick, each
    listed agent's move and combat pair by name, in its own frame, with the reason) and the
    variants (one action of a line changed, and the draw or loss it leads to). A bad field is
    refused on load with its name."""
    tools = f"""Tools. `python -m marl_bgs.tdm.scenarios.search {first}` searches team A's joint
    actions against the controller for winning lines (it reports the shortest it finds and whether
    the designed line wins). `marl-bgs-eval scenarios SYSTEM` plays a registered System as team A
    in every scenario, from the snapshot and its mirror image, and compares its wins with random
    play's."""
    pictures = f"""Pictures: the start of each scenario as the clients draw it (`{_PICTURES}`,
    package marl-bgs-clients), team A blue and team B red. Each living unit has its class letter
    (M Mage, W Warrior, H Hunter, R Rogue, P Priest), its health bar above it, its status badges
    (S stun, T trap, B burst, A anti-heal, F freedom; c, h, p slowed by a Charge, a Hunter,
    Poison) and agent name below it, and its Ultimate cooldown in ticks beside it; a gold ring is
    the spawn shield, dashed circles the Mage and Warrior auras, arrows the last actions (red
    damage, green healing, grey the move). Red Zones (x <= 5, x >= 15) are shaded; dead units are
    not drawn."""
    code = f"""<!-- runs-in: marl-bgs-engine -->
```python
import marl_bgs
from marl_bgs.tdm import scenarios

env = marl_bgs.make_scenario({first}, num_envs=256)  # team A's env; the controller plays B
sc = scenarios.load({first})  # the validated data: arena, units, score, lines, variants
```"""
    head = f"# Endgame scenarios\n\n<!-- Generated by `{_COMMAND}`; do not edit by hand. -->"
    parts = [head, _fill(what), code, _fill(files), _fill(tools), _fill(pictures)]
    return "\n\n".join(parts) + "\n"


def _summary(scenarios: list[Scenario]) -> str:
    rows = [
        "| id | challenge | A v B (living) | ticks left | score A-B | opponent | line length "
        "| skills |",
        "|---:|---|---|---:|---:|---|---:|---:|",
    ]
    for sc in scenarios:
        a, b = sc.rosters
        lengths = ", ".join(str(len(line.ticks)) for line in sc.lines)
        rows.append(
            f"| {sc.id} | [{_cell(sc.challenge)}](#{_anchor(_heading(sc))}) | {a} v {b} "
            f"| {sc.ticks_left} | {sc.score[0]}-{sc.score[1]} | `{sc.opponent}` | {lengths} "
            f"| {len(sc.skills)} |"
        )
    return "## Summary\n\n" + "\n".join(rows) + "\n"


def _skills(scenarios: list[Scenario]) -> str:
    head = "| scenario | " + " | ".join(SKILLS) + " |"
    rows = [head, "|---:|" + ":---:|" * len(SKILLS)]
    for sc in scenarios:
        rows.append(f"| {sc.id} | " + " | ".join("●" if s in sc.skills else "" for s in SKILLS)
                    + " |")  # fmt: skip
    totals = [sum(s in sc.skills for sc in scenarios) for s in SKILLS]
    rows.append("| total | " + " | ".join(str(t) for t in totals) + " |")
    return "## Skills\n\nThe team skills each scenario tests.\n\n" + "\n".join(rows) + "\n"


def _units(sc: Scenario) -> str:
    rows = ["| agent | health | position | statuses |", "|---|---:|---|---|"]
    for u in sorted(sc.units, key=lambda u: u.slot):
        if u.alive:
            health, max_h = _health(u)
            rows.append(
                f"| {agent_label(u.slot, _cls(u))} | {health:g}/{max_h:g} "
                f"| ({float(u.x):g}, {float(u.y):g}) | {', '.join(statuses(u, True)) or '-'} |"
            )
    return "\n".join(rows) + "\n"


def _dead(sc: Scenario) -> str:
    rules = RuleValues()
    parts = ["Dead units (not drawn) return to their pads with their team's next wave:", ""]
    for team, letter in enumerate("AB"):
        dead = sorted((u.slot, _cls(u)) for u in sc.units
                      if not u.alive and u.slot // TEAM_SIZE == team)  # fmt: skip
        if not dead:
            continue
        names = ", ".join(agent_label(s, c) for s, c in dead)
        due = sc.wave[team] + 1
        if due >= sc.ticks_left:
            when = f"the wave comes at the end of tick {due}, too late to play again"
        else:
            when = (f"they return at the end of tick {due}, shielded for {rules.shield_ticks} "
                    "ticks")  # fmt: skip
        text = f"- Team {letter}: {names}. Wave countdown {sc.wave[team]}: {when}."
        parts.append(_fill(text, "  "))
    if len(parts) == 2:
        return "Every unit is alive."
    return "\n".join(parts)


def _line_table(sc: Scenario, index: int, outcome: np.ndarray, score: np.ndarray) -> list[str]:
    classes, line = _slot_classes(sc), sc.lines[index]
    rows = ["| tick | agent | move | combat | why | score after |", "|---:|---|---|---|---|---:|"]
    for t, tick in enumerate(line.ticks):
        a, b = score[t, index]
        ended = outcome[t, index] != ONGOING and (t == 0 or outcome[t - 1, index] == ONGOING)
        state = f", {_ENDED[int(outcome[t, index])]}" if ended else ""
        entries = sorted(tick.items()) or [(None, None)]
        for j, (k, action) in enumerate(entries):
            cells = [str(t + 1) if j == 0 else ""]
            if k is None or action is None:
                cells += ["all", "stay", "`no_combat`", ""]
            else:
                cells += [agent_label(k, classes[k]), MOVE_NAMES[action.move],
                          _combat(action, classes), _cell(action.why)]  # fmt: skip
            cells.append(f"{a}-{b}{state}" if j == 0 else "")
            rows.append("| " + " | ".join(cells) + " |")
    return rows


def _scenario(sc: Scenario, image_dir: str, games: dict[str, np.ndarray]) -> str:
    rules = RuleValues()
    outcome, score = games["outcome"], games["score"]
    classes = _slot_classes(sc)
    a, b = sc.score
    need_a = max(rules.winning_score, b + 1) - a
    need_b = max(rules.winning_score, a + 1) - b
    out = [
        f"## {_heading(sc)}",
        "",
        f"![Scenario {sc.id}: {_cell(sc.challenge)}]({image_dir}/scenario_{sc.id}.png)",
        "",
    ]
    if sc.description:
        out += [_fill(sc.description), ""]
    out += [
        _fill(
            f"Score {a}-{b} with {_count(sc.ticks_left, 'tick')} left: team A needs {need_a} "
            f"more point{'s' * (need_a != 1)}, team B {need_b}. Team B is played by "
            f"`{sc.opponent}`. Skills: {', '.join(sc.skills)}."
        ),
        "",
        _units(sc),
        _dead(sc),
        "",
    ]
    for i, line in enumerate(sc.lines):
        result, tick, final = _ending(outcome, score, i)
        if result == A_WINS:
            verdict = f"**team A wins {final} on tick {tick}**"
        else:
            verdict = f"**the line does not win**: {_result_text(result, tick, final)}"
        out += [f"### Line {i + 1}: {_cell(line.name)}", ""]
        out += _line_table(sc, i, outcome, score)
        out += ["", f"Replayed against `{sc.opponent}`: {verdict}.", ""]
        variants = [(j, v) for j, v in enumerate(sc.variants) if v.line == i]
        if not variants:
            continue
        out += [
            "Variants: one action of this line changed, replayed the same way.",
            "",
            "| tick | agent | changed action | line's action | replayed | why |",
            "|---:|---|---|---|---|---|",
        ]
        for j, v in variants:
            n = len(sc.lines) + j
            result, tick, final = _ending(outcome, score, n)
            got = _result_text(result, tick, final)
            if _RESULT[result] != v.outcome:
                got += f" (the file expects a {v.outcome})"
            original = line.ticks[v.tick - 1].get(v.agent, Action(0, 0, 0))
            out.append(
                f"| {v.tick} | {agent_label(v.agent, classes[v.agent])} "
                f"| {_move_combat(v.action, classes)} | {_move_combat(original, classes)} "
                f"| {got} | {_cell(v.why)} |"
            )
        out.append("")
    return "\n".join(out)


RESULTS_LINK = (
    "How random play and the scripted teams fare as team A in every scenario (256 random games\n"
    "per scenario; wins, draws and losses): [scenarios/results.md](scenarios/results.md), by\n"
    "`python -m marl_bgs_eval.tdm.scenarios --doc docs/scenarios/results.md` (marl-bgs-eval).\n"
    "What the line search finds in every scenario (wins by length, the shortest line, how many\n"
    "first-tick joint actions still win): [scenarios/search.md](scenarios/search.md), by\n"
    "`python ci/docs_pages/search_page.py --doc docs/scenarios/search.md`."
)


def markdown(
    scenarios: Iterable[Scenario], image_dir: str = "scenarios", results: str | None = None
) -> str:
    """The text of docs/scenarios.md for `scenarios`, each line and variant replayed with `play`;
    pictures linked as `<image_dir>/scenario_<id>.png`; `results` (a markdown table), if given,
    becomes a final "Results" section as it stands."""
    scenarios = list(scenarios)
    parts = [_intro(scenarios), _summary(scenarios), _skills(scenarios)]
    parts += [_scenario(sc, image_dir, replay(sc)) for sc in scenarios]
    parts.append(
        "## Results\n\n" + (results.strip() if results is not None else RESULTS_LINK) + "\n"
    )
    return "\n".join(parts).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line: `--doc PAGE` writes the page (its picture links point into `--images DIR`);
    `--check PAGE` exits 1 if the page on disk differs from what would be generated."""
    parser = argparse.ArgumentParser(description="Write docs/scenarios.md.")
    parser.add_argument("--doc", type=Path, default=None, help="write the page here")
    parser.add_argument("--images", type=Path, default=Path("docs/scenarios"),
                        help="the linked pictures' folder (default docs/scenarios)")  # fmt: skip
    parser.add_argument("--check", type=Path, default=None, help="compare this page, write nothing")
    parser.add_argument("--results", type=Path, default=None,
                        help="a markdown file whose text becomes the Results section")  # fmt: skip
    args = parser.parse_args(argv)
    page = args.check or args.doc
    if page is None:
        parser.error("give --doc PAGE (with --images DIR) or --check PAGE")
    image_dir = Path(os.path.relpath(args.images, page.parent)).as_posix()
    results = None if args.results is None else args.results.read_text(encoding="utf-8")
    scenarios = list(shipped().values())
    text = markdown(scenarios, image_dir, results)
    if args.check is not None:
        if not args.check.exists() or args.check.read_text(encoding="utf-8") != text:
            print(f"{args.check} is out of date: run `{_COMMAND}`", file=sys.stderr)
            return 1
        print(f"{args.check} is up to date")
        return 0
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text, encoding="utf-8")
    print(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
