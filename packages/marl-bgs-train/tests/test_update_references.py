"""Each learner's update turns a trajectory into its learning targets as written in a plain
numpy reference, on hand-made trajectories: three games of a few ticks, one ending mid-way, one
ending on its last tick, one with an empty roster slot (weight 0). These check the wiring the
loss pieces' own tests (test_learning_math.py) cannot see: which tick bootstraps which, which
network selects and which evaluates, where the done masks and the weights apply.

Tolerance: the learners compute in float32 and the references in float64 from the same float32
inputs, so the results agree to float32 rounding: rtol 1e-5, atol 1e-6 (wiring bugs injected
into the learners moved them by 1% or more)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from marl_bgs_train.learners import make_train
from marl_bgs_train.losses import ValueNorm
from marl_bgs_train.policy import team_forward
from marl_bgs_train.ppo import Transition
from marl_bgs_train.qmix import Replay
from marl_bgs_train.qnet import QTransition
from marl_bgs_train.testing import tiny_config

RNG = np.random.default_rng(44)
TOL = {"rtol": 1e-5, "atol": 1e-6}
T, N = 4, 3  # ticks, games


def _ends() -> np.ndarray:
    """Where the three games end [T, N]: game 0 at tick 1 (it restarts), game 1 never, game 2
    on the last tick."""
    done = np.zeros((T, N), bool)
    done[1, 0] = done[T - 1, 2] = True
    return done


def _episodes(agents: int) -> dict[str, np.ndarray]:
    """Rewards, ends and roster weights [T, N, ...] of the three games of `_ends`; game 1's last
    slot is empty."""
    weight = np.ones((T, N, agents), np.float32)
    weight[:, 1, -1] = 0.0
    reward = RNG.normal(size=(T, N, agents)).astype(np.float32)
    reward[:, 1, -1] = 50.0  # an empty slot's reward must not count
    return {"reward": reward, "done": _ends(), "weight": weight}


def _trajectory(kind: type, **arrays: np.ndarray) -> tuple:
    """A trajectory with only `arrays` filled: a seam that reads any other field fails."""
    fields = dict.fromkeys(kind._fields)
    return kind(**{**fields, **{k: jnp.asarray(v) for k, v in arrays.items()}})


# ------------------------------------------------------------------------------- PQN-VDN
def reference_pqn_targets(reward, done, weight, greedy, last_team, gamma, lam):
    """Peng's Q(lambda) on VDN's team value, game by game, tick by tick: the team's reward is
    the mean over real slots; the bootstrap after tick t is the greedy team value (the sum over
    real slots of each agent's best value) of tick t + 1's state, `last_team` after the last."""
    targets = np.zeros((T, N))
    for n in range(N):
        later = 0.0
        for t in reversed(range(T)):
            real = weight[t, n] > 0
            team_reward = reward[t, n][real].sum() / max(real.sum(), 1)
            if t == T - 1:
                bootstrap = float(last_team[n])
            else:
                bootstrap = greedy[t + 1, n][weight[t + 1, n] > 0].sum()
            if done[t, n]:
                later = team_reward
            elif t == T - 1:
                later = team_reward + gamma * bootstrap
            else:
                later = team_reward + gamma * ((1 - lam) * bootstrap + lam * later)
            targets[t, n] = later
    return targets


def test_pqn_targets_bootstrap_from_the_next_tick():
    trainer = make_train(tiny_config("pqn-vdn"))
    cfg, episodes = trainer.config, _episodes(trainer.team_size)
    greedy = RNG.normal(size=(T, N, trainer.team_size)).astype(np.float32)
    greedy[:, 1, -1] = -30.0  # an empty slot's value must not count either
    last_team = RNG.normal(size=N).astype(np.float32)
    traj = _trajectory(QTransition, greedy=greedy, **episodes)
    got = jax.jit(trainer.targets)(traj, jnp.asarray(last_team))
    want = reference_pqn_targets(
        greedy=greedy, last_team=last_team, gamma=cfg.gamma, lam=cfg.td_lambda, **episodes
    )
    np.testing.assert_allclose(got, want, **TOL)


# ----------------------------------------------------------------------------------- PPO
def _norm_stats(mean: float, mean_sq: float, debias: float) -> tuple[float, float]:
    """MAPPO's running statistics after bias correction (mean 0, std 1 before any data; the
    variance floored at 1e-2)."""
    if debias <= 0:
        return 0.0, 1.0
    m = mean / max(debias, 1e-5)
    return m, float(np.sqrt(max(mean_sq / max(debias, 1e-5) - m * m, 1e-2)))


def reference_ppo_targets(reward, done, weight, value, last_value, norm, cfg):
    """GAE as the discounted sum of TD errors up to the game's end, per game and agent, on the
    critic's values in returns' units; with value normalisation the returns' weighted moments
    are folded into the running statistics and the targets normalised by the new ones.
    `norm` is (mean, mean square, debias); returns (advantages, targets, new norm)."""
    m, s = _norm_stats(*norm) if cfg.value_norm else (0.0, 1.0)
    v = value.astype(np.float64) * s + m
    after = last_value.astype(np.float64) * s + m
    delta = np.zeros_like(v)
    for t in range(T):
        following = after if t == T - 1 else v[t + 1]
        live = ~done[t][:, None]
        delta[t] = reward[t] + cfg.gamma * following * live - v[t]
    advantages = np.zeros_like(v)
    for t in range(T):
        for k in range(t, T):
            going_on = ~done[t:k].any(axis=0)[:, None]  # no TD error after the game's end
            advantages[t] += (cfg.gamma * cfg.gae_lambda) ** (k - t) * going_on * delta[k]
    returns = advantages + v
    if not cfg.value_norm:
        return advantages, returns, norm
    real = weight > 0
    beta = cfg.value_norm_beta
    new = (
        beta * norm[0] + (1 - beta) * returns[real].mean(),
        beta * norm[1] + (1 - beta) * np.square(returns[real]).mean(),
        beta * norm[2] + (1 - beta),
    )
    m, s = _norm_stats(*new)
    return advantages, (returns - m) / s, new


@pytest.mark.parametrize(
    ("value_norm", "norm"),
    [(True, (0.3, 2.0, 0.5)), (True, (0.0, 0.0, 0.0)), (False, (0.3, 2.0, 0.5))],
    ids=["value-norm", "value-norm-first-update", "no-value-norm"],
)
def test_ppo_advantages_and_targets(value_norm, norm):
    trainer = make_train(tiny_config("ippo-rnn", value_norm=value_norm))
    cfg, episodes = trainer.config, _episodes(trainer.team_size)
    value = RNG.normal(size=(T, N, trainer.team_size)).astype(np.float32)
    last_value = RNG.normal(size=(N, trainer.team_size)).astype(np.float32)
    traj = _trajectory(Transition, value=value, **episodes)
    running = ValueNorm(*(jnp.float32(x) for x in norm))
    advantages, targets, new = jax.jit(trainer.targets)(traj, jnp.asarray(last_value), running)
    want = reference_ppo_targets(value=value, last_value=last_value, norm=norm, cfg=cfg, **episodes)
    np.testing.assert_allclose(advantages, want[0], **TOL)
    np.testing.assert_allclose(targets, want[1], **TOL)
    np.testing.assert_allclose((new.mean, new.mean_sq, new.debias), want[2], **TOL)


# ---------------------------------------------------------------------------------- QMIX
@pytest.fixture(scope="module")
def qmix():
    """The tiny QMIX trainer, random networks of its own shapes (the target copies perturbed
    away from the online ones, as between two target copies) and a hand-made replay batch of
    three sequences."""
    trainer = make_train(tiny_config("qmix"))
    like = jax.eval_shape(trainer.init, jax.random.key(0))  # the learner's own shapes
    random = lambda tree, scale: jax.tree_util.tree_map(  # noqa: E731
        lambda a: np.asarray(scale * RNG.normal(size=a.shape), a.dtype), tree
    )
    online = random((like.actor, like.mixer), 0.1)
    nudge = random(online, 0.05)
    target = jax.tree_util.tree_map(lambda p, d: p + d, online, nudge)
    return trainer, online, target, _replay_batch(trainer, like.replay)


def _replay_batch(trainer, like: Replay) -> Replay:
    """Three stored sequences in the replay's layout (`like`'s shapes, T + 1 ticks): the games
    of `_ends`, so sequence 0 restarts at tick 2, sequence 2's tick T starts a new game and
    sequence 1 goes on from a memory of earlier ticks, its last slot empty; random legal masks
    and choices."""
    b, ticks, agents, flat = N, like.x.shape[1], like.x.shape[2], like.mask.shape[-1]
    done = _ends().T
    mask = RNG.random((b, ticks, agents, flat)) < 0.3
    mask[..., 0] = True  # staying is always legal
    choice = np.zeros((b, T, agents), np.int32)
    for s, t, a in np.ndindex(choice.shape):
        choice[s, t, a] = RNG.choice(np.flatnonzero(mask[s, t, a]))
    start = np.zeros((b, ticks), bool)
    start[0, 0] = start[2, 0] = True
    start[:, 1:] = done  # the tick after an end starts a game
    weight = np.ones((b, ticks, agents), np.float32)
    weight[1, :, -1] = 0.0
    filled = {
        "shared": RNG.normal(size=(b, ticks, like.shared.shape[-1])),
        "x": RNG.normal(size=(b, ticks, agents, like.x.shape[-1])),
        "mask": mask,
        "team_state": RNG.normal(size=(b, ticks, like.team_state.shape[-1])),
        "group": RNG.integers(0, trainer.groups, (b, ticks, agents)),
        "weight": weight,
        "start": start,
        "carry": RNG.normal(size=(b, *like.carry.shape[1:])),
        "choice": choice,
        "reward": RNG.normal(size=(b, T)),
        "done": done,
        "size": b,
        "next": 0,
    }
    leaves = {k: getattr(like, k) for k in filled}
    assert all(np.shape(v)[1:] == leaves[k].shape[1:] for k, v in filled.items())
    return Replay(**{k: jnp.asarray(v, leaves[k].dtype) for k, v in filled.items()})


def reference_qmix_loss(q_online, q_target, mix, mixer, target_mixer, batch, gamma):
    """One-step double-Q QMIX, sequence by sequence, tick by tick: each real agent's value of
    its chosen action under the online network, mixed by the online mixer; the target is the
    reward plus, unless the game ended, gamma times the target mixer's mix of the TARGET
    network's values at the ONLINE network's best legal actions of the next tick. Returns
    (loss, mean team value, the greedy next actions)."""
    weight, mask, choice = (np.asarray(a) for a in (batch.weight, batch.mask, batch.choice))
    b, agents = weight.shape[0], weight.shape[-1]
    chosen, following = np.zeros((b, T, agents)), np.zeros((b, T, agents))
    best = np.zeros((b, T, agents), int)
    for s in range(b):
        for t in range(T):
            for a in range(agents):
                chosen[s, t, a] = q_online[s, t, a, choice[s, t, a]] * weight[s, t, a]
                legal = np.flatnonzero(mask[s, t + 1, a])
                best[s, t, a] = legal[np.argmax(q_online[s, t + 1, a, legal])]
                following[s, t, a] = q_target[s, t + 1, a, best[s, t, a]] * weight[s, t + 1, a]
    state = np.asarray(batch.team_state)
    team = mix(mixer, chosen, state[:, :T])
    next_team = mix(target_mixer, following, state[:, 1:])
    live = ~np.asarray(batch.done)
    target = np.asarray(batch.reward) + gamma * live * next_team
    return 0.5 * np.mean(np.square(team - target)), team.mean(), best


def test_qmix_loss_bootstraps_from_the_target_networks_at_online_choices(qmix):
    trainer, (actor, mixer), (target_actor, target_mixer), batch = qmix
    forward = jax.jit(
        lambda p: team_forward(
            trainer.q_net, p, batch.carry, batch.inputs(), batch.start, batch.group, False
        )[1][0]
    )
    q_online, q_target = np.asarray(forward(actor)), np.asarray(forward(target_actor))
    mix = lambda p, v, s: np.asarray(  # noqa: E731
        trainer.mixer_net.apply(p, jnp.asarray(v, jnp.float32), jnp.asarray(s, jnp.float32))
    )
    loss, team = jax.jit(trainer._loss)((actor, mixer), (target_actor, target_mixer), batch)
    gamma = trainer.config.gamma
    want_loss, want_team, best = reference_qmix_loss(
        q_online, q_target, mix, mixer, target_mixer, batch, gamma
    )
    np.testing.assert_allclose(loss, want_loss, **TOL)
    np.testing.assert_allclose(team, want_team, **TOL)
    # the batch can tell the wirings apart: masks change the online choice, and the target
    # network would choose differently (plain, not double, Q-learning)
    legal_best = np.take_along_axis(q_online[:, 1:], best[..., None], -1)[..., 0]
    assert (legal_best < q_online[:, 1:].max(-1)).any()
    target_best = np.where(np.asarray(batch.mask[:, 1:]), q_target[:, 1:], -np.inf).argmax(-1)
    assert (target_best != best).any()
