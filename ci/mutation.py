"""Mutation run: small deliberate bugs injected into the rules and the rating code, one at a time.

    python ci/mutation.py                      # every mutant (about half an hour on 2 cores)
    python ci/mutation.py --check              # apply and restore every mutant, no tests (fast)
    python ci/mutation.py --only ID,ID --json /tmp/m.json --markdown /tmp/m.md
    python ci/mutation.py --list

A mutant is a copy of one source file with one small bug: a `<=` turned into `<`, a duration or a
constant off by one, a dropped condition, a wrong team index. For each mutant the script checks
that its original snippet occurs exactly once in the file, writes the mutated file, runs the few
test files that own that code (`pytest -x -q -m "not slow"`, JAX on CPU) and restores the original
bytes (and modification time), also on Ctrl-C or SIGTERM, and checks that they are back. Outcomes:
killed (pytest exit 1: a test failed), survived (exit 0: a missing test), timeout, and error (any
other exit code, e.g. 2: the tests could not even be collected); only "killed" counts as a kill.

While a mutant is in place the working tree holds the bug: run it on a checkout nobody is editing
or testing. A file left mutated by a killed run (SIGKILL) is refused by the next run, because its
original snippet is gone. Results go to `--json` (default ci/mutation_results.json, read by
ci/reliability.py for docs/reliability.md) and, as a markdown section, to `--markdown`.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTCOMES = ("killed", "survived", "timeout", "error")
AREAS = ("engine rules", "eval ratings")

TDM = "packages/marl-bgs-engine/src/marl_bgs/tdm/"
CORE = "packages/marl-bgs-engine/src/marl_bgs/core/"
EVAL = "packages/marl-bgs-eval/src/marl_bgs_eval/"
T_ENG = "packages/marl-bgs-engine/tests/"
T_EVAL = "packages/marl-bgs-eval/tests/"


class MutationError(RuntimeError):
    """A mutant cannot be applied or its file cannot be restored."""


@dataclass(frozen=True)
class Mutant:
    """One bug: replace `original` (exactly once in `file`) with `mutated`; `tests` should fail."""

    id: str
    file: str  # relative to the repository root
    original: str
    mutated: str
    description: str
    tests: tuple[str, ...]

    @property
    def area(self) -> str:
        """The area whose kill rate the mutant counts in: engine rules or eval ratings."""
        return AREAS[0] if self.file.startswith("packages/marl-bgs-engine/") else AREAS[1]


def _m(id: str, file: str, original: str, mutated: str, description: str, *tests: str) -> Mutant:
    return Mutant(id, file, original, mutated, description, tests)


# fmt: off
MUTANTS: tuple[Mutant, ...] = (
    # --- statuses ---------------------------------------------------------------------------------
    _m("statuses-trap-reapply-lost", f"{TDM}statuses.py",
       ("trap = jnp.where(new_trap, C.TRAP_TICKS, "
        "jnp.where(broken, 0, jnp.maximum(units.trap - 1, 0)))"),
       ("trap = jnp.where(broken, 0, "
        "jnp.where(new_trap, C.TRAP_TICKS, jnp.maximum(units.trap - 1, 0)))"),
       "a Trap re-applied on a running Trap is lost: the break by its own damage wins over it",
       f"{T_ENG}test_combat.py"),
    _m("statuses-no-refresh", f"{TDM}statuses.py",
       "return jnp.where(new, duration, jnp.maximum(current - 1, 0)).astype(jnp.int32)",
       ("return jnp.where(new & (current == 0), duration, "
        "jnp.maximum(current - 1, 0)).astype(jnp.int32)"),
       "a new hit no longer refreshes a running status (slow, stun, anti-heal, Freedom)",
       f"{T_ENG}test_combat.py"),
    _m("statuses-stun-minimum", f"{TDM}statuses.py",
       "stun_ticks = jnp.maximum(",
       "stun_ticks = jnp.minimum(",
       "`jnp.maximum` -> `jnp.minimum` on the stun length: a lone Charge or Poison stuns 0 ticks",
       f"{T_ENG}test_combat.py"),
    _m("statuses-heal-breaks-trap", f"{TDM}statuses.py",
       "taken = jnp.sum(combat.damage_basic + combat.damage_ultimate, axis=0)",
       "taken = jnp.sum(combat.damage_basic + combat.damage_ultimate + combat.heal_basic, axis=0)",
       "a Lesser Heal breaks a running Trap as damage does",
       f"{T_ENG}test_combat.py"),
    _m("statuses-salvation-frees", f"{TDM}statuses.py",
       "freed=basic & (cls == C.PRIEST),",
       "freed=(basic | ult) & (cls == C.PRIEST),",
       "Salvation (the Priest's Ultimate) also grants Freedom, not only the Lesser Heal",
       f"{T_ENG}test_combat.py"),
    # --- combat -----------------------------------------------------------------------------------
    _m("combat-aura-radius-strict", f"{TDM}combat.py",
       "& (dist <= C.AURA_RADIUS)",
       "& (dist < C.AURA_RADIUS)",
       "`<=` -> `<` on the aura radius: a teammate exactly 2 units away is not covered",
       f"{T_ENG}test_combat.py"),
    _m("combat-aura-cap-dropped", f"{TDM}combat.py",
       "return jnp.minimum(jnp.sum(covered, axis=0), C.AURA_STACK_CAP).astype(jnp.int32)",
       "return jnp.sum(covered, axis=0).astype(jnp.int32)",
       "auras of one class stack without the cap of two",
       f"{T_ENG}test_combat.py"),
    _m("combat-burst-one-tick-short", f"{TDM}combat.py",
       "burst = u.burst > 0",
       "burst = u.burst > 1",
       "off by one: Burst raises damage on 4 ticks, not 5",
       f"{T_ENG}test_combat.py"),
    _m("combat-death-at-zero", f"{TDM}combat.py",
       "died = u.alive & (health <= 0.0)",
       "died = u.alive & (health < 0.0)",
       "`<=` -> `<`: an agent left at exactly 0 health survives",
       f"{T_ENG}test_combat.py"),
    _m("combat-warrior-aura-wrong-side", f"{TDM}combat.py",
       "full = pre_aura * mage_mult[:, None] * warrior_mult[None, :]",
       "full = pre_aura * mage_mult[:, None] * warrior_mult[:, None]",
       "wrong index: the attacker's Warrior auras cut its damage instead of the recipient's",
       f"{T_ENG}test_combat.py"),
    # --- class table ------------------------------------------------------------------------------
    _m("classes-rogue-cooldown-29", f"{TDM}classes.py",
       "ULT_COOLDOWN = np.array([0, 30, 30, 30, 30, 30], np.int32)",
       "ULT_COOLDOWN = np.array([0, 30, 30, 30, 29, 30], np.int32)",
       "Rogue Ultimate cooldown 30 -> 29",
       f"{T_ENG}test_combat.py"),
    _m("classes-hunter-cooldown-29", f"{TDM}classes.py",
       "ULT_COOLDOWN = np.array([0, 30, 30, 30, 30, 30], np.int32)",
       "ULT_COOLDOWN = np.array([0, 30, 30, 29, 30, 30], np.int32)",
       "Hunter Ultimate cooldown 30 -> 29",
       f"{T_ENG}test_combat.py"),
    _m("classes-trap-ticks-3", f"{TDM}classes.py",
       "TRAP_TICKS = 4",
       "TRAP_TICKS = 3",
       "off by one: the Trap holds 3 ticks, not 4",
       f"{T_ENG}test_combat.py"),
    _m("classes-charge-slow-ticks-4", f"{TDM}classes.py",
       "CHARGE_SLOW_TICKS = 5",
       "CHARGE_SLOW_TICKS = 4",
       "off by one: the Charge slow lasts 4 ticks, not 5",
       f"{T_ENG}test_combat.py"),
    _m("classes-rogue-basic-damage-11", f"{TDM}classes.py",
       "BASIC_DAMAGE = np.array([0.0, 13.0, 8.0, 6.0, 12.0, 0.0], _C)",
       "BASIC_DAMAGE = np.array([0.0, 13.0, 8.0, 6.0, 11.0, 0.0], _C)",
       "Rogue Basic damage 12 -> 11",
       f"{T_ENG}test_combat.py"),
    _m("classes-warrior-aura-0.80", f"{TDM}classes.py",
       "WARRIOR_AURA_MULT = 0.85",
       "WARRIOR_AURA_MULT = 0.8",
       "Warrior aura multiplier 0.85 -> 0.8",
       f"{T_ENG}test_combat.py"),
    # --- deaths, points, waves, end ---------------------------------------------------------------
    _m("lifecycle-red-zone-points-1", f"{TDM}lifecycle.py",
       "RED_ZONE_DEATH_POINTS = 2",
       "RED_ZONE_DEATH_POINTS = 1",
       "a death in one's own Red Zone gives 1 point, not 2",
       f"{T_ENG}test_lifecycle.py"),
    _m("lifecycle-red-zone-boundary", f"{TDM}lifecycle.py",
       "x <= depth, x >= MAP_WIDTH - depth",
       "x < depth, x >= MAP_WIDTH - depth",
       "`<=` -> `<`: a death exactly on team A's Red Zone boundary gives 1 point",
       f"{T_ENG}test_lifecycle.py"),
    _m("lifecycle-points-to-own-team", f"{TDM}lifecycle.py",
       "[jnp.sum(jnp.where(team == 1, pts, 0)), jnp.sum(jnp.where(team == 0, pts, 0))]",
       "[jnp.sum(jnp.where(team == 0, pts, 0)), jnp.sum(jnp.where(team == 1, pts, 0))]",
       "wrong team index: a death scores for the victim's own team",
       f"{T_ENG}test_lifecycle.py"),
    _m("lifecycle-wave-period-6", f"{TDM}lifecycle.py",
       "next_wave = jnp.where(due, rules.wave_period - 1, wave - 1)",
       "next_wave = jnp.where(due, rules.wave_period, wave - 1)",
       "off by one: respawn waves come every 6 ticks, not 5",
       f"{T_ENG}test_lifecycle.py"),
    _m("lifecycle-reward-skips-dead", f"{TDM}lifecycle.py",
       "per_slot = jnp.where(team == 0, sign, -sign) * (state.units.class_id > 0)",
       "per_slot = jnp.where(team == 0, sign, -sign) * state.units.alive",
       "agents dead on the last tick get no win/loss reward (only padded slots should get none)",
       f"{T_ENG}test_lifecycle.py"),
    _m("lifecycle-tick-limit-one-late", f"{TDM}lifecycle.py",
       "timed_out = tick >= rules.tick_limit",
       "timed_out = tick > rules.tick_limit",
       "off by one: a game runs one tick past tick_limit",
       f"{T_ENG}test_lifecycle.py"),
    # --- actions and masks ------------------------------------------------------------------------
    _m("actions-trapped-may-move", f"{TDM}actions.py",
       "return u.alive & (u.stun == 0) & (u.trap == 0) & ~state.done",
       "return u.alive & (u.stun == 0) & ~state.done",
       "dropped condition: trapped agents may move and act",
       f"{T_ENG}test_movement.py"),
    _m("actions-basic-range-strict", f"{TDM}actions.py",
       "& (seen.dist <= lookup(C.BASIC_RANGE, u.class_id)[:, None])",
       "& (seen.dist < lookup(C.BASIC_RANGE, u.class_id)[:, None])",
       "`<=` -> `<`: a Basic at exactly its range is illegal",
       f"{T_ENG}test_masks.py"),
    _m("actions-ultimate-ignores-cooldown", f"{TDM}actions.py",
       "ult_ready = actor & (u.cooldown == 0)",
       "ult_ready = actor",
       "dropped condition: the Ultimate is legal while it cools down",
       f"{T_ENG}test_masks.py"),
    _m("actions-flat-198-decoded", f"{TDM}actions.py",
       "outside = (flat < 0) | (flat >= NUM_MOVES * NUM_TARGETS * NUM_ULTIMATE)",
       "outside = (flat < 0) | (flat > NUM_MOVES * NUM_TARGETS * NUM_ULTIMATE)",
       "`>=` -> `>`: flat action 198 (one past the end) is decoded, not refused in every head",
       f"{T_ENG}test_fuzz_actions.py"),
    # --- perception -------------------------------------------------------------------------------
    _m("perception-shielded-enemies-seen", f"{TDM}perception.py",
       "& clear & ~hidden",
       "& clear",
       "dropped condition (`& ~hidden`): shielded enemies are seen",
       f"{T_ENG}test_sight.py"),
    _m("perception-sight-radius-strict", f"{TDM}perception.py",
       "(dist <= radius)",
       "(dist < radius)",
       "`<=` -> `<`: a unit at exactly the sight radius is not seen",
       f"{T_ENG}test_sight.py"),
    # --- one tick ---------------------------------------------------------------------------------
    _m("transition-speed-after-aging", f"{TDM}transition.py",
       "speed = movement_speed(u0, state.rules.shield_speed)",
       "speed = movement_speed(units, state.rules.shield_speed)",
       "movement speed read from the already aged statuses: every slow ends a tick early",
       f"{T_ENG}test_combat.py"),
    _m("transition-shield-ends-early", f"{TDM}transition.py",
       "ending = units.alive & (u0.shield == 1)",
       "ending = units.alive & (u0.shield == 2)",
       "off by one: bodies are cleared a tick before the spawn shield ends, not when it ends",
       f"{T_ENG}test_lifecycle.py"),
    # --- movement and geometry --------------------------------------------------------------------
    _m("movement-contact-0.9", f"{CORE}movement.py",
       "CONTACT = 2.0 * BODY_RADIUS",
       "CONTACT = 1.8 * BODY_RADIUS",
       "bodies may overlap: contact distance 0.9 instead of two radii (1.0)",
       f"{T_ENG}test_movement.py"),
    _m("movement-shielded-blocked", f"{CORE}movement.py",
       "blocks = solid[:, None] & solid[None, :] & ~jnp.eye(n, dtype=bool)",
       "blocks = solid[None, :] & ~jnp.eye(n, dtype=bool)",
       "dropped condition: a shielded mover is blocked by solid bodies",
       f"{T_ENG}test_movement.py"),
    _m("movement-no-sweep", f"{CORE}movement.py",
       "    0.25, 1.0, 4, dtype=np.float32",
       "    1.0, 1.0, 1, dtype=np.float32",
       "simultaneous moves compared only at their end points: head-on bodies pass through",
       f"{T_ENG}test_movement.py"),
    _m("movement-clear-order", f"{CORE}movement.py",
       "order = jnp.lexsort((pos[:, 1], pos[:, 0], ~needs))",
       "order = jnp.lexsort((pos[:, 1], pos[:, 0], needs))",
       "`~needs` -> `needs`: clearing visits the wrong agents, a shield ends inside a body",
       f"{T_ENG}test_movement.py"),
    _m("geometry-top-border", f"{CORE}geometry.py",
       "(y <= MAP_HEIGHT - r)",
       "(y <= MAP_HEIGHT)",
       "a body may stick out through the top border (radius dropped)",
       f"{T_ENG}test_movement.py"),
    _m("geometry-parallel-wall-side", f"{CORE}geometry.py",
       "jnp.where(jnp.abs(l) < h - EPS, -jnp.inf, jnp.inf)",
       "jnp.where(jnp.abs(l) > h - EPS, -jnp.inf, jnp.inf)",
       "`<` -> `>` in the slab test: a wall across an axis-aligned sight line is seen through",
       f"{T_ENG}test_sight.py"),
    # --- ratings ----------------------------------------------------------------------------------
    _m("ratings-elo-410", f"{EVAL}ratings.py",
       "ELO_PER_LOGIT = 400.0 / math.log(10.0)",
       "ELO_PER_LOGIT = 410.0 / math.log(10.0)",
       "the Elo scale constant 400 -> 410",
       f"{T_EVAL}test_ratings.py"),
    _m("ratings-bootstrap-games-not-pairs", f"{EVAL}ratings.py",
       "np.stack([p_game, maps, pairs], axis=1)",
       "np.stack([p_game, maps, np.arange(len(pairs))], axis=1)",
       "the bootstrap resamples single games, not spawn-swapped pairs",
       f"{T_EVAL}test_ratings.py"),
    _m("ratings-bootstrap-strata-ignore-map", f"{EVAL}ratings.py",
       "strata = np.unique(unit_keys[:, :2], axis=0, return_inverse=True)[1].ravel()",
       "strata = np.unique(unit_keys[:, :1], axis=0, return_inverse=True)[1].ravel()",
       "the bootstrap resamples pairs within each pairing across maps, not within pairing and map",
       f"{T_EVAL}test_ratings.py"),
    _m("ratings-gradient-sign", f"{EVAL}ratings.py",
       "g_d = 0.5 * (W - L) - 0.5 * N * (pw - pl)",
       "g_d = 0.5 * (W - L) - 0.5 * N * (pw + pl)",
       "wrong sign in the likelihood's gradient (the fit stops at a wrong point)",
       f"{T_EVAL}test_ratings.py"),
    _m("ratings-interval-90", f"{EVAL}ratings.py",
       "q = 100 * (1 - level) / 2",
       "q = 100 * (1 - level)",
       "the 95% interval is cut at the 5th and 95th percentiles (a 90% interval)",
       f"{T_EVAL}test_ratings.py"),
    _m("ratings-wins-as-team-b", f"{EVAL}ratings.py",
       'wins = int(np.sum(a_res == "win") + np.sum(b_res == "loss"))',
       'wins = int(np.sum(a_res == "win") + np.sum(b_res == "win"))',
       "W-D-L tally: a System's losses as team B count as wins",
       f"{T_EVAL}test_ratings.py"),
    # --- tiers ------------------------------------------------------------------------------------
    _m("tiers-boundary-side", f"{EVAL}tiers.py",
       "if lo <= elo < hi:",
       "if lo < elo <= hi:",
       "tier boundaries belong to the tier below: 1,400 is Gold 1, not Platinum 5",
       f"{T_EVAL}test_tiers.py"),
    _m("tiers-gold-at-1250", f"{EVAL}tiers.py",
       '("Silver", 1000.0, 1200.0),\n    ("Gold", 1200.0, 1400.0),',
       '("Silver", 1000.0, 1250.0),\n    ("Gold", 1250.0, 1400.0),',
       "tier boundary shifted: Gold starts at 1,250, not at the field's mean 1,200",
       f"{T_EVAL}test_tiers.py"),
    _m("tiers-win-chance-sign", f"{EVAL}tiers.py",
       "10.0 ** (-(elo - against) / 400.0)",
       "10.0 ** ((elo - against) / 400.0)",
       "win_chance sign flipped: the stronger System gets the lower chance",
       f"{T_EVAL}test_tiers.py"),
    # --- results files and metrics ----------------------------------------------------------------
    _m("results-ticks-check-loose", f"{EVAL}results.py",
       '_fail_rows(df, ticks > df["tick_limit"], source, "ticks exceed tick_limit")',
       '_fail_rows(df, ticks > df["tick_limit"] + 1, source, "ticks exceed tick_limit")',
       "content check loosened: a game one tick past its tick_limit loads",
       f"{T_EVAL}test_fuzz_results_files.py"),
    _m("results-pair-spawn-check-off", f"{EVAL}results.py",
       "_fail_rows(df, (size == 2) & (ends != 2), source,",
       "_fail_rows(df, (size > 2) & (ends != 2), source,",
       "content check disabled: both games of a pair may have the same a_spawn",
       f"{T_EVAL}test_fuzz_results_files.py"),
    _m("results-time-limit-check-inverted", f"{EVAL}results.py",
       'early = ~reached & (ticks != df["tick_limit"])',
       'early = ~reached & (ticks == df["tick_limit"])',
       "content check inverted: valid draws at tick_limit are refused, early endings load",
       f"{T_EVAL}test_fuzz_results_files.py"),
    _m("metrics-kills-are-own-deaths", f"{EVAL}metrics.py",
       "cols += [deaths[1 - t], deaths[t], _team_sum(rejected, t)]",
       "cols += [deaths[t], deaths[1 - t], _team_sum(rejected, t)]",
       "wrong team index in the tally: a team's kills are its own deaths",
       f"{T_EVAL}test_play.py"),
)
# fmt: on


# --- checking, applying, restoring ----------------------------------------------------------------


def problems(mutant: Mutant, root: Path = ROOT) -> list[str]:
    """What keeps a mutant from running (empty when it is ready): its file, its snippet (exactly
    once), a mutated file that still compiles, and its test files."""
    out: list[str] = []
    path = root / mutant.file
    if not path.is_file():
        return [f"{mutant.id}: file {mutant.file} does not exist"]
    text = path.read_bytes().decode("utf-8")
    n = text.count(mutant.original)
    if n != 1:
        hint = ""
        if n == 0 and text.count(mutant.mutated) == 1:
            hint = " and the mutated snippet is there: left mutated by an interrupted run?"
        out.append(f"{mutant.id}: original snippet occurs {n} times in {mutant.file}{hint}")
    elif mutant.original == mutant.mutated:
        out.append(f"{mutant.id}: the mutated snippet equals the original")
    else:
        try:
            compile(text.replace(mutant.original, mutant.mutated), mutant.file, "exec")
        except SyntaxError as err:
            out.append(f"{mutant.id}: the mutated file does not compile: {err}")
    if not mutant.tests:
        out.append(f"{mutant.id}: no test files")
    missing = [t for t in mutant.tests if not (root / t).is_file()]
    out += [f"{mutant.id}: test file {t} does not exist" for t in missing]
    return out


def _restore(
    path: Path, original: bytes, mutated: bytes, mutant: Mutant, stat: os.stat_result
) -> None:
    """Put the original bytes (and modification time) back and verify them."""
    current = path.read_bytes()
    if current in (mutated, original):
        path.write_bytes(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        if path.read_bytes() != original:
            raise MutationError(f"{mutant.file}: restore failed (bytes differ after writing)")
        return
    # Someone edited the file while the mutant was in place: undo only the mutation.
    text = current.decode("utf-8")
    if text.count(mutant.mutated) == 1 and text.count(mutant.original) == 0:
        path.write_bytes(text.replace(mutant.mutated, mutant.original).encode("utf-8"))
        print(f"warning: {mutant.file} was edited during the run; only the mutation was undone")
        return
    backup = Path(tempfile.mkdtemp(prefix="mutation-")) / path.name
    backup.write_bytes(original)
    raise MutationError(
        f"{mutant.file} was edited during the run and the mutation cannot be undone; "
        f"the original bytes are in {backup}"
    )


@contextlib.contextmanager
def applied(mutant: Mutant, root: Path = ROOT) -> Iterator[None]:
    """The mutant written into its file for the duration of the block; always restored after."""
    path = root / mutant.file
    stat = path.stat()
    original = path.read_bytes()
    text = original.decode("utf-8")
    if text.count(mutant.original) != 1:
        raise MutationError(f"{mutant.id}: original snippet not exactly once in {mutant.file}")
    mutated = text.replace(mutant.original, mutant.mutated).encode("utf-8")
    try:
        path.write_bytes(mutated)
        yield
    finally:
        _restore(path, original, mutated, mutant, stat)


# --- running --------------------------------------------------------------------------------------


def _detail(output: str) -> str:
    """The line that says what happened: the first failed or errored test, else the last line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for prefix in ("FAILED ", "ERROR "):
        for ln in lines:
            if ln.startswith(prefix):
                return ln[:240]
    return lines[-1][:240] if lines else ""


def run_tests(
    tests: Sequence[str], timeout: float, root: Path = ROOT
) -> tuple[str, int | None, str]:
    """Run pytest on `tests` (its own session, killed on timeout or interrupt); return (outcome,
    exit code, detail)."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow"]
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen(
        [*cmd, *tests], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        return "timeout", None, f"no result after {timeout:.0f} s"
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    rc = proc.returncode
    outcome = "killed" if rc == 1 else "survived" if rc == 0 else "error"
    return outcome, rc, _detail(output)


def run_mutant(mutant: Mutant, timeout: float, root: Path = ROOT) -> dict[str, object]:
    """Apply one mutant, run its tests, restore the file; the mutant's result record."""
    start = time.perf_counter()
    with applied(mutant, root):
        outcome, rc, detail = run_tests(mutant.tests, timeout, root)
    return {
        "id": mutant.id,
        "area": mutant.area,
        "file": mutant.file,
        "description": mutant.description,
        "tests": list(mutant.tests),
        "outcome": outcome,
        "exit_code": rc,
        "seconds": round(time.perf_counter() - start, 1),
        "detail": detail,
    }


def _sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # so that the `finally` blocks restore the file


# --- report ---------------------------------------------------------------------------------------


def _git(*args: str, root: Path = ROOT) -> str:
    run = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    return run.stdout.strip()


def _counts(records: Sequence[dict[str, object]]) -> dict[str, object]:
    c = Counter(str(r["outcome"]) for r in records)
    n = len(records)
    return {
        "mutants": n,
        **{o: c[o] for o in OUTCOMES},
        "kill_rate": round(c["killed"] / n, 3) if n else None,
        "seconds": round(sum(float(r["seconds"]) for r in records), 1),  # type: ignore[arg-type]
    }


def report(records: list[dict[str, object]], selected: Sequence[Mutant], **extra: object) -> dict:
    """The JSON document: per mutant, totals, the kill rate per area, commit, date and machine."""
    files = sorted({m.file for m in selected})
    machine = f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    return {
        "format": "marl-bgs-mutation-v1",
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_targets": _git("status", "--porcelain", "--", *files).splitlines(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "command": "python ci/mutation.py " + " ".join(sys.argv[1:]),
        **extra,
        "summary": _counts(records),
        "areas": {a: _counts([r for r in records if r["area"] == a]) for a in AREAS},
        "mutants": records,
    }


def markdown(data: dict) -> str:
    """The markdown section: what a mutant is, how to run, kill rate per area, the mutants
    (survivors first, each with its bug)."""
    s = data["summary"]
    lines = [
        "## Mutation run",
        "",
        "A mutant is a copy of the code with one small deliberate bug: a `<=` turned into `<`, a "
        "duration or constant off by one, a dropped condition, a wrong team index. "
        "`python ci/mutation.py` injects each mutant below in turn into the engine's rule modules "
        "or the evaluation's rating code, runs the test files that own that code "
        '(`pytest -x -m "not slow"`) and restores the file. A mutant is killed when a test fails; '
        "one that survives names a missing test. Timeouts and errors (the tests could not run at "
        "all) are counted apart and are not kills. `python ci/mutation.py --check` only verifies "
        "that every mutant still applies.",
        "",
        f"Commit `{str(data.get('commit', '?'))[:12]}`, {data.get('date', '?')}, "
        f"{data.get('machine', '?')}: {s['mutants']} mutants in {s['seconds']:.0f} s.",
        "",
        "| area | mutants | killed | survived | timeout | error | kill rate |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, c in [*data["areas"].items(), ("**all**", s)]:
        if not c["mutants"]:
            continue
        cells = [c["mutants"], *(c[o] for o in OUTCOMES)]
        rate = f"{c['kill_rate']:.0%}"
        lines.append(f"| {name} | " + " | ".join(map(str, cells)) + f" | {rate} |")
    lines += ["", "| mutant | bug | file | tests | outcome | s |", "|---|---|---|---|---|---:|"]
    order = {"survived": 0, "timeout": 1, "error": 2, "killed": 3}
    for r in sorted(data["mutants"], key=lambda r: (order.get(r["outcome"], 4), r["area"])):
        tests = ", ".join(Path(t).name for t in r["tests"])
        outcome = r["outcome"] if r["outcome"] == "killed" else f"**{r['outcome']}**"
        lines.append(
            f"| `{r['id']}` | {r['description']} | `{Path(r['file']).name}` | {tests} "
            f"| {outcome} | {r['seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


# --- command line ---------------------------------------------------------------------------------


def select(only: str | None, limit: int | None) -> list[Mutant]:
    """The mutants named by `--only` (all by default), the first `--limit` of them."""
    chosen = list(MUTANTS)
    if only:
        names = [n.strip() for n in only.split(",") if n.strip()]
        known = {m.id: m for m in MUTANTS}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise SystemExit(f"--only: unknown mutant(s) {unknown}; see --list")
        chosen = [known[n] for n in names]
    return chosen[:limit] if limit is not None else chosen


def main(argv: list[str] | None = None) -> int:
    """Check or run the selected mutants; exit 0 when every mutant was killed (or, with --check,
    applied and restored), 1 otherwise, 2 when a mutant cannot be applied."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--only", help="comma-separated mutant ids")
    p.add_argument("--limit", type=int, help="run only the first N selected mutants")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant (600)")
    p.add_argument("--check", action="store_true", help="apply and restore each mutant, no tests")
    p.add_argument("--list", action="store_true", help="print the mutants and exit")
    p.add_argument("--json", type=Path, default=ROOT / "ci" / "mutation_results.json")
    p.add_argument("--markdown", type=Path, help="write the markdown section here ('-': stdout)")
    args = p.parse_args(argv)

    ids = [m.id for m in MUTANTS]
    if len(set(ids)) != len(ids):
        raise SystemExit(f"duplicate mutant ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    chosen = select(args.only, args.limit)
    if args.list:
        for m in chosen:
            print(f"{m.id:40} {m.file.split('/src/')[-1]:28} {m.description}")
        per_file = Counter(Path(m.file).name for m in chosen)
        print(f"{len(chosen)} mutants: " + ", ".join(f"{f} {n}" for f, n in per_file.items()))
        return 0
    bad = [msg for m in chosen for msg in problems(m)]
    if bad:
        print("refusing to run:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 2

    signal.signal(signal.SIGTERM, _sigterm)
    if args.check:
        for m in chosen:
            with applied(m):
                pass
        print(f"{len(chosen)} mutants apply to their files exactly once, compile, and restore")
        return 0

    records: list[dict[str, object]] = []
    interrupted = False
    start = time.perf_counter()
    try:
        for k, m in enumerate(chosen, 1):
            print(f"[{k}/{len(chosen)}] {m.id} ...", end=" ", flush=True)
            r = run_mutant(m, args.timeout)
            records.append(r)
            print(f"{r['outcome']} ({r['seconds']} s) {r['detail']}", flush=True)
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: the mutated file was restored; writing the results so far")
    data = report(records, chosen, timeout_s=args.timeout, interrupted=interrupted)
    args.json.write_text(json.dumps(data, indent=2) + "\n")
    text = markdown(data)
    if args.markdown is None or str(args.markdown) == "-":
        print(text)
    else:
        args.markdown.write_text(text)
    s = data["summary"]
    print(
        f"{s['killed']}/{s['mutants']} killed, {s['survived']} survived, {s['timeout']} timeout, "
        f"{s['error']} error in {time.perf_counter() - start:.0f} s; wrote {args.json}"
    )
    return 130 if interrupted else 0 if s["killed"] == s["mutants"] else 1


if __name__ == "__main__":
    sys.exit(main())
