"""The learners' arithmetic against small numpy references on fixed inputs: GAE and returns, the
PPO losses, value normalisation, TD(lambda) targets, VDN, QMIX's monotonic mixer,
epsilon-greedy choice, the masked heads, the networks' weight sharing."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from marl_bgs.tdm.actions import ActionMasks
from marl_bgs_train import heads, masking
from marl_bgs_train.losses import ValueNorm, gae, ppo_actor_loss, ppo_value_loss, td_lambda, vdn
from marl_bgs_train.networks import Network, _SequenceGRU, agent_groups, apply_team, init_groups
from marl_bgs_train.qmix import Mixer
from marl_bgs_train.tdm.actions import HEADS

RNG = np.random.default_rng(20261202)
apply = jax.jit(apply_team, static_argnums=0)  # one compiled program per network and shape


def numpy_gae(rewards, values, dones, last, gamma, lam):
    """Textbook backward recursion, one step at a time."""
    T = len(rewards)
    adv = np.zeros_like(rewards)
    running = np.zeros_like(last)
    for t in reversed(range(T)):
        next_value = last if t == T - 1 else values[t + 1]
        live = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * live - values[t]
        running = delta + gamma * lam * live * running
        adv[t] = running
    return adv, adv + values


def test_gae_matches_numpy_reference_across_episode_ends():
    T, B = 7, 5
    rewards = RNG.normal(size=(T, B)).astype(np.float32)
    values = RNG.normal(size=(T, B)).astype(np.float32)
    dones = (RNG.random((T, B)) < 0.3).astype(np.float32)
    dones[2, 0] = 1.0
    last = RNG.normal(size=B).astype(np.float32)
    adv, ret = gae(jnp.asarray(rewards), jnp.asarray(values), jnp.asarray(dones > 0),
                   jnp.asarray(last), 0.99, 0.95)  # fmt: skip
    ref_adv, ref_ret = numpy_gae(rewards, values, dones, last, 0.99, 0.95)
    np.testing.assert_allclose(adv, ref_adv, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ret, ref_ret, rtol=1e-5, atol=1e-5)
    # lambda = 1, gamma = 1 and no ends: the return is the plain sum of rewards plus the bootstrap
    _adv1, ret1 = gae(jnp.asarray(rewards), jnp.asarray(values), jnp.zeros((T, B), bool),
                     jnp.asarray(last), 1.0, 1.0)  # fmt: skip
    np.testing.assert_allclose(ret1[0], rewards.sum(0) + last, rtol=1e-5)


def numpy_td_lambda(rewards, dones, next_max, gamma, lam):
    """Peng's Q(lambda) as a sum: the lambda-weighted mix of n-step returns, cut at game ends."""
    T = len(rewards)
    targets = np.zeros_like(rewards)
    for t in range(T):
        for b in range(rewards.shape[1]):
            # n-step returns G(n) from t; the last available one bootstraps at the rollout's end
            total, weight_left, discount, value = 0.0, 1.0, 1.0, 0.0
            partial = 0.0
            for k in range(t, T):
                partial += discount * rewards[k, b]
                if dones[k, b]:  # the game ended: this n-step return is final, no bootstrap
                    value += weight_left * partial
                    weight_left = 0.0
                    break
                discount *= gamma
                n_step = partial + discount * next_max[k, b]
                share = weight_left if k == T - 1 else weight_left * (1 - lam)
                value += share * n_step
                weight_left -= share
                total += share
            targets[t, b] = value
    return targets


def test_td_lambda_matches_the_weighted_n_step_returns():
    T, B = 6, 4
    rewards = RNG.normal(size=(T, B)).astype(np.float32)
    dones = RNG.random((T, B)) < 0.25
    dones[3, 0] = True
    next_max = RNG.normal(size=(T, B)).astype(np.float32)
    got = td_lambda(jnp.asarray(rewards), jnp.asarray(dones), jnp.asarray(next_max), 0.99, 0.85)
    ref = numpy_td_lambda(rewards, dones, next_max, 0.99, 0.85)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    # lambda = 0: one-step Q-learning targets
    one = td_lambda(jnp.asarray(rewards), jnp.asarray(dones), jnp.asarray(next_max), 0.9, 0.0)
    np.testing.assert_allclose(one, rewards + 0.9 * (1 - dones) * next_max, rtol=1e-5, atol=1e-6)


def test_vdn_sums_the_real_agents_values():
    values = RNG.normal(size=(3, 4, 5)).astype(np.float32)
    weight = (RNG.random((3, 4, 5)) < 0.7).astype(np.float32)
    got = vdn(jnp.asarray(values), jnp.asarray(weight))
    np.testing.assert_allclose(got, (values * weight).sum(-1), rtol=1e-6)


def numpy_mixer(p, values, state):
    """QMIX's mixing network written out: hypernetworks of the state, absolute weights."""
    relu = lambda z: np.maximum(z, 0.0)  # noqa: E731
    elu = lambda z: np.where(z > 0, z, np.expm1(np.minimum(z, 0.0)))  # noqa: E731
    dense = lambda name, z: z @ np.asarray(p[name]["kernel"]) + np.asarray(p[name]["bias"])  # noqa: E731
    hyper = lambda name, z: dense(f"{name}_1", relu(dense(f"{name}_0", z)))  # noqa: E731
    w1 = np.abs(hyper("w1", state)).reshape(*state.shape[:-1], 5, -1)
    hidden = elu(np.einsum("na,nae->ne", values, w1) + dense("b1", state))
    w2 = np.abs(hyper("w2", state))
    return (hidden * w2).sum(-1) + hyper("b2", state)[..., 0]


def test_qmix_mixer_matches_numpy_and_is_monotonic_in_every_agent():
    mixer = Mixer(embed=6, hidden=7, agents=5)
    state = jnp.asarray(RNG.normal(size=(64, 11)), jnp.float32)
    values = jnp.asarray(RNG.normal(size=(64, 5)) * 3, jnp.float32)
    params = mixer.init(jax.random.key(0), values[0], state[0])
    got = mixer.apply(params, values, state)
    ref = numpy_mixer(params["params"], np.asarray(values), np.asarray(state))
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    for seed in range(5):  # random networks and states: d team / d agent value >= 0 everywhere
        params = mixer.init(jax.random.key(seed), values[0], state[0])
        grads = jax.vmap(jax.grad(mixer.apply, argnums=1), in_axes=(None, 0, 0))(
            params, values, state
        )
        assert float(grads.min()) >= 0.0
        assert float(grads.max()) > 0.0


def test_epsilon_greedy_picks_legal_actions_greedily_or_uniformly():
    n, k = 4000, 7
    values = jnp.asarray(RNG.normal(size=(n, k)), jnp.float32)
    mask = jnp.asarray(RNG.random((n, k)) < 0.5).at[:, 2].set(True)
    best = np.where(np.asarray(mask), np.asarray(values), -np.inf).argmax(-1)
    greedy = masking.epsilon_greedy(jax.random.key(0), values, mask, jnp.float32(0.0))
    np.testing.assert_array_equal(greedy, best)
    np.testing.assert_allclose(
        masking.greedy_value(values, mask), np.asarray(values)[np.arange(n), best], rtol=1e-6
    )
    explore = np.asarray(masking.epsilon_greedy(jax.random.key(1), values, mask, jnp.float32(1.0)))
    assert np.asarray(mask)[np.arange(n), explore].all()  # never an illegal action
    only = np.zeros((n, k), bool)
    only[:, [1, 4]] = True  # two legal choices: half each when exploring
    picks = np.asarray(masking.epsilon_greedy(jax.random.key(2), values, jnp.asarray(only), 1.0))
    assert set(np.unique(picks)) == {1, 4}
    assert abs(np.mean(picks == 1) - 0.5) < 0.03
    half = np.asarray(masking.epsilon_greedy(jax.random.key(3), values, mask, jnp.float32(0.5)))
    assert 0.5 < np.mean(half == best) < 0.5 + 0.5 / 2 + 0.05  # greedy half, plus lucky draws


def test_ppo_actor_loss_matches_numpy_reference():
    n = 64
    logp, old = RNG.normal(size=n) * 0.3, RNG.normal(size=n) * 0.3
    adv, ent = RNG.normal(size=n), RNG.random(n)
    weight = (RNG.random(n) < 0.8).astype(np.float64)
    arrays = (jnp.asarray(a, jnp.float32) for a in (logp, old, adv, ent, weight))
    loss, stats = ppo_actor_loss(*arrays, clip=0.2, entropy_coef=0.01)
    live = weight > 0
    a = adv[live]
    a = (a - a.mean()) / (a.std() + 1e-8)
    ratio = np.exp(logp[live] - old[live])
    surrogate = np.minimum(ratio * a, np.clip(ratio, 0.8, 1.2) * a)
    expected = -surrogate.mean() - 0.01 * ent[live].mean()
    np.testing.assert_allclose(loss, expected, rtol=1e-4)
    np.testing.assert_allclose(stats["clip_fraction"], np.mean(np.abs(ratio - 1) > 0.2), rtol=1e-5)


def test_ppo_value_loss_matches_numpy_reference():
    n = 32
    v, old, target = RNG.normal(size=n), RNG.normal(size=n), RNG.normal(size=n)
    weight = np.ones(n)
    weight[:4] = 0
    loss = ppo_value_loss(
        *(jnp.asarray(a, jnp.float32) for a in (v, old, target, weight)), clip=0.2
    )
    clipped = old + np.clip(v - old, -0.2, 0.2)
    err = np.maximum((v - target) ** 2, (clipped - target) ** 2)
    np.testing.assert_allclose(loss, 0.5 * err[4:].mean(), rtol=1e-5)


def test_value_norm_tracks_debiased_moments():
    norm = ValueNorm.create()
    x = jnp.asarray([1.0, 2.0, 3.0])
    np.testing.assert_allclose(norm.normalize(x), x)  # identity before any data
    batches = [RNG.normal(5.0, 3.0, size=50) for _ in range(4)]
    beta, mean, sq, debias = 0.9, 0.0, 0.0, 0.0
    for b in batches:
        norm = norm.update(jnp.asarray(b, jnp.float32), jnp.ones(50), beta)
        mean = beta * mean + (1 - beta) * b.mean()
        sq = beta * sq + (1 - beta) * (b**2).mean()
        debias = beta * debias + (1 - beta)
    m, s = mean / debias, np.sqrt(sq / debias - (mean / debias) ** 2)
    np.testing.assert_allclose(norm.stats(), (m, s), rtol=1e-4)
    np.testing.assert_allclose(norm.denormalize(norm.normalize(x)), x, rtol=1e-5)


def _masks(move: np.ndarray, pair: np.ndarray) -> ActionMasks:
    """Engine-style masks of one slot per row from move [n, 9] and pair [n, 11, 2] masks."""
    move, pair = jnp.asarray(move), jnp.asarray(pair)
    return ActionMasks(move=move, pair=pair, target=pair.any(-1), ultimate=pair.any(-2))


@pytest.mark.parametrize("kind", list(HEADS))
def test_masked_sampling_never_picks_an_illegal_action(kind):
    n = 4000
    move = RNG.random((n, 9)) < 0.3
    move[:, 0] = True  # stay is always legal in the engine
    pair = RNG.random((n, 11, 2)) < 0.2
    pair[:, 0, 0] = True  # so is (no target, no Ultimate)
    masks = HEADS[kind].masks(_masks(move, pair))
    logits = tuple(jnp.asarray(RNG.normal(size=(n, s)) * 5, jnp.float32) for s in HEADS[kind].sizes)
    sample = jax.jit(heads.sample, static_argnums=3)
    picked = sample(jax.random.key(0), logits, masks, False)
    actions = np.asarray(HEADS[kind].to_env(picked.choices))
    rows = np.arange(n)
    assert move[rows, actions[:, 0]].all()
    assert pair[rows, actions[:, 1], actions[:, 2]].all()
    greedy = np.asarray(HEADS[kind].to_env(sample(jax.random.key(1), logits, masks, True).choices))
    assert move[rows, greedy[:, 0]].all()
    assert pair[rows, greedy[:, 1], greedy[:, 2]].all()
    # the two head kinds round-trip through the engine's actions
    back = HEADS[kind].from_env(jnp.asarray(actions))
    np.testing.assert_array_equal(back, picked.choices)


def test_head_log_prob_and_entropy_match_numpy_reference():
    move = np.array([[True, False, True] + [False] * 6])
    pair = np.zeros((1, 11, 2), bool)
    pair[0, 0, 0] = pair[0, 3, 1] = True
    logits = (jnp.asarray([[0.5, 9.0, -1.0] + [3.0] * 6]), jnp.arange(22.0)[None] / 10)
    masks = HEADS["factored"].masks(_masks(move, pair))
    logp, ent = heads.evaluate(logits, masks, jnp.asarray([[2, 7]]))  # move 2, pair (3, 1)
    pm = np.exp([0.5, -1.0]) / np.exp([0.5, -1.0]).sum()
    pp = np.exp([0.0, 0.7]) / np.exp([0.0, 0.7]).sum()
    np.testing.assert_allclose(logp, np.log(pm[1]) + np.log(pp[1]), rtol=1e-5)
    np.testing.assert_allclose(ent, -(pm * np.log(pm)).sum() - (pp * np.log(pp)).sum(), rtol=1e-5)
    flat = HEADS["flat"].masks(_masks(move, pair))[0]
    assert int(flat.sum()) == 4  # 2 legal moves x 2 legal pairs, exactly


def test_weight_sharing_runs_each_agent_on_its_group():
    net = Network(hidden=8, outputs=(3,), recurrent=True)
    params = init_groups(net, jax.random.key(0), 5, input_size=6)
    x = jnp.asarray(RNG.normal(size=(4, 5, 6)), jnp.float32)
    start = jnp.asarray([True, False, True, False])
    classes = jnp.asarray([3, 1, 5, 2, 4])
    group = jnp.broadcast_to(agent_groups("class", classes), (4, 5))
    carry, (out,) = apply(net, params, jnp.zeros((5, 8)), x, start, group)
    for a in range(5):  # agent a alone, on the parameters of its class
        own = jax.tree_util.tree_map(lambda p, g=int(classes[a]) - 1: p[g : g + 1], params)
        c1, (o1,) = apply(net, own, jnp.zeros((5, 8)), x, start, jnp.zeros((4, 5), jnp.int32))
        np.testing.assert_allclose(out[:, a], o1[:, a], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(carry[a], c1[a], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(agent_groups("all", classes), np.zeros(5))
    np.testing.assert_array_equal(agent_groups("none", classes), np.arange(5))


def test_recurrent_memory_restarts_where_an_episode_starts():
    net = Network(hidden=8, outputs=(2,), recurrent=True)
    params = init_groups(net, jax.random.key(1), 1, input_size=6)
    x = jnp.asarray(RNG.normal(size=(6, 5, 6)), jnp.float32)
    start = jnp.asarray([True, False, False, True, False, False])
    group = jnp.zeros((6, 5), jnp.int32)
    _, (whole,) = apply(net, params, jnp.ones((5, 8)), x, start, group)
    _, (second,) = apply(net, params, jnp.ones((5, 8)) * 7, x[3:], start[3:], group[3:])
    np.testing.assert_allclose(whole[3:], second, rtol=1e-5, atol=1e-6)


def test_sequence_gru_equals_flax_gru_cell_tick_by_tick():
    """The network's fused GRU against `flax.linen.GRUCell` on the same parameters, one tick at
    a time with the memory zeroed where an episode starts (a numpy-free independent reference)."""
    net = Network(hidden=8, outputs=(2,), recurrent=True)
    params = init_groups(net, jax.random.key(2), 1, input_size=6)
    gru = jax.tree_util.tree_map(lambda p: p[0], params["params"]["Scan_ResetGRU_0"])
    assert set(gru["GRUCell_0"]) == {"ir", "iz", "in", "hr", "hz", "hn"}
    for name in ("ir", "iz", "in", "hn"):  # give the biases values so a missing one shows
        gru["GRUCell_0"][name]["bias"] = jnp.asarray(RNG.normal(size=8), jnp.float32)
    h = jnp.asarray(RNG.normal(size=(7, 5, 8)), jnp.float32)  # the GRU's inputs
    start = np.asarray([False, False, True, False, False, True, False])
    carry = jnp.asarray(RNG.normal(size=(5, 8)), jnp.float32)
    last, outs = _SequenceGRU(8).apply(
        {"params": gru}, carry, h, jnp.broadcast_to(jnp.asarray(start)[:, None], (7, 5))
    )
    cell = nn.GRUCell(8)
    ref = carry
    for t in range(7):
        ref = jnp.zeros_like(ref) if start[t] else ref
        ref, y = cell.apply({"params": gru["GRUCell_0"]}, ref, h[t])
        np.testing.assert_allclose(outs[t], y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(last, ref, rtol=1e-5, atol=1e-6)
