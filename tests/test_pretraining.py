"""td3_steps.pretraining: behaviour cloning of the actor, seeded, with clear errors for bad data."""

import math
import re

import numpy as np
import pytest
import torch
from gymnasium import spaces

from td3_steps import TD3


def expert_pairs(n=300, seed=0):
    obs = np.random.default_rng(seed).uniform(-1, 1, size=(n, 3)).astype(np.float32)
    return obs, np.clip(1.5 * obs[:, :1] - obs[:, 2:], -2, 2)  # a smooth expert within Pendulum's [-2, 2]


def test_pretrain_clones_the_expert(small_config, params, same):
    obs, actions = expert_pairs()
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    history = model.pretrain(obs, actions, epochs=10, batch_size=16)
    assert [row["epoch"] for row in history] == list(range(1, 11))
    assert history[-1]["val_loss"] < 0.1 * history[0]["val_loss"] and history[-1]["train_loss"] < 0.05
    assert same(params(model.actor), params(model.actor_target))
    assert model.actor_optimizer.state_dict()["state"] == {}  # training's optimizer untouched
    again = TD3("Pendulum-v1", small_config, seed=0, device="cpu").pretrain(obs, actions, epochs=2, batch_size=16)
    assert again == history[:2]  # seeded


def test_pretrain_refuses_bad_data(small_config):
    obs, actions = expert_pairs(20)
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    with pytest.raises(ValueError, match="outside the action bounds.*number 3"):
        model.pretrain(obs, np.where(np.arange(20)[:, None] == 3, 2.5, actions))
    with pytest.raises(ValueError, match=r"actions must be shaped \(20, 1\)"):
        model.pretrain(obs, actions[:10])
    with pytest.raises(ValueError, match="batch of observations"):
        model.pretrain(obs[0], actions[:1])
    with pytest.raises(ValueError, match=r"Expected one observation of shape \(3,\)"):
        model.pretrain(obs[:, :2], actions)
    with pytest.raises(ValueError, match="validation_fraction"):
        model.pretrain(obs, actions, validation_fraction=1.0)
    with pytest.raises(TypeError, match="epoch"):
        model.pretrain(obs, actions, epoch=3)  # the options are named
    for wrong in (actions.astype(str).astype(object) + "x", {"a": 1}, [[0.1], [0.2, 0.3]] * 10):
        with pytest.raises(ValueError, match=r"actions must be numbers in one array shaped \(n, 1\)"):
            model.pretrain(obs, wrong)
    with pytest.raises(ValueError, match=r"Expected one observation of shape \(3,\) or a batch .* inhomogeneous"):
        model.pretrain([[0.0, 0.0, 0.0], [0.0, 0.0]] * 10, actions)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"actions": "nan"}, "expert actions are NaN or inf"),  # NaN passed the bounds check and made the actor NaN
        ({"learning_rate": np.inf}, "learning_rate must be a positive number"),  # also a NaN actor, silently
        ({"learning_rate": "1e-3"}, "learning_rate must be a positive number"),
        ({"validation_fraction": "0.1"}, r"validation_fraction must be a number in \[0, 1\)"),
        ({"observations": "empty"}, "no pairs given"),  # was numpy's "cannot reshape array of size 0"
    ],
)
def test_pretrain_refuses_what_would_break_the_actor(small_config, params, same, change, message):
    obs, actions = expert_pairs(20)
    if change.pop("actions", None):
        actions = np.where(np.arange(20)[:, None] == 3, np.nan, actions)
    if change.pop("observations", None):
        obs, actions = obs[:0], actions[:0]
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    before = params(model.actor)
    with pytest.raises(ValueError, match=message):
        model.pretrain(obs, actions, **change)
    assert same(before, params(model.actor))


def test_pretrain_puts_back_an_actor_whose_loss_diverged(small_config, params, same, monkeypatch):
    obs, actions = expert_pairs(20)
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    before = params(model.actor)
    mse_loss, calls = torch.nn.functional.mse_loss, []

    def diverging(*args, **kwargs):  # steps on finite losses, then nan in the third epoch's
        calls.append(1)
        return mse_loss(*args, **kwargs) * (float("nan") if len(calls) > 2 else 1.0)

    monkeypatch.setattr(torch.nn.functional, "mse_loss", diverging)
    with pytest.raises(ValueError, match="the loss became nan in epoch .* put back as they were. Lower the learning"):
        model.pretrain(obs, actions, epochs=5, validation_fraction=0.0)
    monkeypatch.undo()
    assert same(before, params(model.actor))


def test_pretrain_puts_back_an_actor_that_fails_on_a_batch_and_says_why(small_config, params, same):
    """A custom actor with batch norm failed inside torch ("Expected more than 1 value per channel") on the last
    batch, of one pair, with its weights changed by the batches before it."""
    obs, actions = expert_pairs(73)  # 8 held out, 65 to train on: batches of 64 and 1
    actor_net = lambda: torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 1))  # noqa: E731
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu", actor_net=actor_net)
    before = params(model.actor)
    with pytest.raises(
        ValueError,
        match=r"failed in epoch 1 \(65 pairs to train on leave a last batch of one, .*, choose another batch_size\)",
    ):
        model.pretrain(obs, actions, batch_size=64)
    assert same(before, params(model.actor))
    model.pretrain(obs, actions, batch_size=65, epochs=1)

    class FailsInEvalMode(torch.nn.Linear):  # as a network may where its validation pass goes wrong
        broken = False

        def forward(self, x):
            if self.broken and not self.training:
                raise RuntimeError("no eval mode here")
            return super().forward(x)

    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu", actor_net=lambda: FailsInEvalMode(3, 1))
    model.actor.net.broken = True
    before = params(model.actor)
    with pytest.raises(ValueError, match=r"failed in epoch 1: no eval mode here\. Its weights are put back"):
        model.pretrain(*expert_pairs(20))  # after the epoch's training steps, at its validation
    assert same(before, params(model.actor))


def test_pretrain_refuses_a_learning_rate_above_1(small_config, params, same):
    """lr=1e38 (Adam's first step 1e39, beyond float32) raised from inside Adam where it is not fused (torch < 2.4);
    lr=1e30 sent the weights to 1e30 while the loss, through tanh, stayed small: refused before the actor moves."""
    obs, actions = expert_pairs(20)
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    before = params(model.actor)
    for rate in (1e38, 1e30, 1.5):
        with pytest.raises(
            ValueError,
            match=rf"^pretrain: learning_rate must be a positive number at most 1, .*{re.escape(repr(rate))}",
        ):
            model.pretrain(obs, actions, learning_rate=rate, epochs=5)
    assert same(before, params(model.actor))


def test_pretrain_takes_tensors_and_a_batch_larger_than_the_data(small_config):
    obs, actions = expert_pairs(20)
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    history = model.pretrain(torch.tensor(obs), torch.tensor(actions, requires_grad=True), batch_size=10**30, epochs=1)
    assert np.isfinite(history[0]["train_loss"])


def test_pretrain_names_meta_tensors_and_complex_observations_and_reads_bfloat16(small_config, params, same):
    """A meta tensor raised torch's NotImplementedError ("Cannot copy out of meta tensor; no data!"), a bfloat16 one
    "Got unsupported ScalarType BFloat16", and complex observations trained on their real parts, silently."""
    obs, actions = expert_pairs(20)
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    before = params(model.actor)
    for wrong_obs, wrong_actions, name in ((torch.zeros(20, 3, device="meta"), actions, "observations"),
                                           (obs, torch.zeros(20, 1, device="meta"), "actions")):  # fmt: skip
        with pytest.raises(ValueError, match=f"pretrain: {name} is a tensor on the 'meta' device, which holds a shape"):
            model.pretrain(wrong_obs, wrong_actions)
    with pytest.raises(ValueError, match=r"(?s)of numbers, got ndarray .*\(complex64 values are not real numbers\)"):
        model.pretrain(obs + 1j, actions)
    assert same(params(model.actor), before)
    assert len(model.pretrain(torch.tensor(obs, dtype=torch.bfloat16), actions, epochs=1)) == 1


def test_pretrain_takes_dict_observations_as_a_list_or_as_one_batch_and_names_a_bad_one(toy_env, small_config):
    """A batch of Dict observations, as predict takes it, gave "string indices must be integers"; a missing key a bare
    KeyError; a category out of range gymnasium's IndexError."""
    space = spaces.Dict({"a": spaces.Box(-1.0, 1.0, (3,), np.float32), "b": spaces.Discrete(4)})
    space.seed(0)
    observations = [space.sample() for _ in range(20)]
    batch = {"a": np.stack([o["a"] for o in observations]), "b": np.array([o["b"] for o in observations])}
    actions = np.linspace(-1, 1, 20, dtype=np.float32)[:, None]
    trained = []
    for given in (observations, batch):
        model = TD3(toy_env(observation_space=space), small_config, seed=0, device="cpu")
        model.pretrain(given, actions, epochs=2)
        trained.append(model.actor.state_dict())
    assert all(torch.equal(trained[0][k], trained[1][k]) for k in trained[0]), "the same data, either way"
    for bad, words in [
        ([{"a": np.zeros(3, np.float32)}] * 20, r"Expected one observation of Dict"),
        ([{"a": np.zeros(3, np.float32), "b": 7}] * 20, r"obs\['b'\] \(Discrete\(4\)\) must hold whole numbers from 0"),
    ]:
        with pytest.raises(ValueError, match=words):
            model.pretrain(bad, actions)


def pairs(n=40, seed=0):
    obs = np.random.default_rng(seed).uniform(-1, 1, size=(n, 3)).astype(np.float32)
    return obs, np.clip(1.5 * obs[:, :1] - obs[:, 2:], -2, 2)


def record_batches(model):
    """The observations the actor sees, as (training mode?, rows as tuples)."""
    seen = []
    model.actor.register_forward_pre_hook(
        lambda module, args: seen.append((module.training, [tuple(r.tolist()) for r in args[0]]))
    )
    return seen


def test_a_small_validation_fraction_still_holds_out_one_pair(small_config):
    obs, actions = pairs(5)
    history = TD3("Pendulum-v1", small_config, seed=0, device="cpu").pretrain(obs, actions, epochs=1)
    assert math.isfinite(history[0]["val_loss"])  # ceil(5 * 0.1) = 1 pair held out


def test_pairs_that_leave_nothing_to_train_on_are_refused(small_config):
    obs, actions = pairs(1)
    with pytest.raises(ValueError, match="nothing to train on"):
        TD3("Pendulum-v1", small_config, seed=0, device="cpu").pretrain(obs, actions, validation_fraction=0.5)


def test_validation_pairs_are_never_trained_on_and_batches_are_shuffled_each_epoch(small_config):
    obs, actions = pairs(40)
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    seen = record_batches(model)
    model.pretrain(obs, actions, epochs=2, batch_size=8, validation_fraction=0.25)
    train = [rows for training, rows in seen if training]
    val = {r for training, rows in seen if not training for r in rows}
    assert len(train) == 8 and len(val) == 10  # 30 pairs in 4 batches per epoch, 10 held out
    epoch1, epoch2 = [r for b in train[:4] for r in b], [r for b in train[4:] for r in b]
    assert set(epoch1) == set(epoch2) and not val & set(epoch1)
    assert epoch1 != epoch2  # reshuffled


def test_losses_are_per_action_value_means(toy_env, small_config):
    """With a learning rate too small to move the actor and expert actions 0.1 off its own, both losses are 0.01."""
    env = toy_env(spaces.Box(-1.0, 1.0, (3,), np.float32), spaces.Box(-1.0, 1.0, (2,), np.float32))
    model = TD3(env, small_config, seed=0, device="cpu")
    obs = np.random.default_rng(1).uniform(-1, 1, size=(50, 3)).astype(np.float32)
    with torch.no_grad():
        own = model.actor(torch.as_tensor(obs)).numpy()
    expert = own - 0.1 * np.sign(own)
    history = model.pretrain(obs, expert, epochs=1, learning_rate=1e-30, validation_fraction=0.2)
    assert history[0]["val_loss"] == pytest.approx(0.01, rel=1e-3)
    assert history[0]["train_loss"] == pytest.approx(0.01, rel=1e-3)


def test_expert_actions_below_the_bounds_are_refused(small_config):
    obs, actions = pairs(20)
    actions[4] = -2.5
    with pytest.raises(ValueError, match="outside the action bounds.*number 4"):
        TD3("Pendulum-v1", small_config, seed=0, device="cpu").pretrain(obs, actions)


def test_the_default_learning_rate_is_the_configs(small_config):
    obs, actions = pairs(40)
    config = small_config.replace(learning_rate=3e-3)
    by_default = TD3("Pendulum-v1", config, seed=0, device="cpu").pretrain(obs, actions, epochs=2)
    given = TD3("Pendulum-v1", config, seed=0, device="cpu").pretrain(obs, actions, epochs=2, learning_rate=3e-3)
    assert by_default == given


def test_a_shared_features_extractor_leaves_the_critic_targets_equal_to_the_critics(image_env_id, image_config):
    model = TD3(image_env_id, image_config.replace(share_features_extractor=True), seed=0, device="cpu")
    obs = np.random.default_rng(0).integers(0, 256, size=(12, 36, 36, 3), dtype=np.uint8)
    actions = np.random.default_rng(1).uniform(-1, 1, size=(12, 1)).astype(np.float32)
    model.pretrain(obs, actions, epochs=1, batch_size=4)
    for a, b in zip(model.critics.state_dict().values(), model.critic_targets.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    for a, b in zip(model.actor.state_dict().values(), model.actor_target.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_the_split_is_drawn_from_the_agents_seed(small_config):
    obs, actions = pairs(40)
    held_out = []
    for seed in (0, 0, 1):
        model = TD3("Pendulum-v1", small_config, seed=seed, device="cpu")
        seen = record_batches(model)
        model.pretrain(obs, actions, epochs=1, batch_size=8, validation_fraction=0.25)
        held_out.append({r for training, rows in seen if not training for r in rows})
    assert held_out[0] == held_out[1] != held_out[2]
