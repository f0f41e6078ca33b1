"""Beyond the course: the options that Stable-Baselines and prt_rl offer, each plugged into the named steps."""

import copy
import json
import math
import sys
import types

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch import nn

import td3_steps.agent
from td3_steps import (
    TD3,
    CheckpointError,
    ConfigError,
    EvalCallback,
    GaussianNoise,
    LinearSchedule,
    NatureCNN,
    OrnsteinUhlenbeckNoise,
    Policy,
    ReplayMemory,
    SpaceError,
    TD3Config,
    actor_update,
)

SMALL = TD3Config(learning_starts=100, batch_size=32, buffer_size=5_000, net_arch=(32, 32))
IMAGE_ENV_ID = "td3_steps_test/Image-v0"


def params(module: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


def same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


class ToyEnv(gym.Env):
    """5-step episodes of random observations; the reward is -|action - 0.5|."""

    def __init__(self, observation_space=None, action_space=None):
        self.observation_space = observation_space or spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = action_space or spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        self.t += 1
        reward = -float(np.abs(np.asarray(action) - 0.5).sum())
        return self.observation_space.sample(), reward, False, self.t >= 5, {}


class ImageEnv(gym.Env):
    """36x36x3 uint8 frames of one grey level; the reward asks for the action that matches the level."""

    observation_space = spaces.Box(0, 255, (36, 36, 3), np.uint8)
    action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)

    def __init__(self, render_mode=None):
        self.render_mode = render_mode

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.level = 0, int(self.np_random.integers(0, 256))
        return np.full((36, 36, 3), self.level, np.uint8), {}

    def step(self, action):
        self.t += 1
        reward = -abs(float(action[0]) - (self.level / 127.5 - 1))
        self.level = int(self.np_random.integers(0, 256))
        return np.full((36, 36, 3), self.level, np.uint8), reward, False, self.t >= 5, {}


if IMAGE_ENV_ID not in gym.registry:
    gym.register(IMAGE_ENV_ID, entry_point=ImageEnv)

TOY = SMALL.replace(learning_starts=10, batch_size=8)  # for the 5-step ToyEnv
IMAGES = TD3Config(learning_starts=20, batch_size=8, buffer_size=200, net_arch=(16,))


# ---------------------------------------------------------------- more than two critics
def test_three_critics_target_is_the_minimum_of_all_three(monkeypatch):
    model = TD3(ToyEnv(), TOY.replace(n_critics=3), seed=0, device="cpu").learn(10)
    assert len(model.critics.members) == len(model.critic_targets.members) == 3
    model.critic_targets.members[2].net.out.bias.fill_(-1000.0)  # the third target critic is the lowest
    seen = {}
    original_target_q_values, original_bellman_target = td3_steps.agent.target_q_values, td3_steps.agent.bellman_target

    def spy_target_q_values(*args):
        seen["qs"] = original_target_q_values(*args)
        return seen["qs"]

    def spy_bellman_target(reward, terminated, next_q, gamma):
        seen["next_q"] = next_q
        return original_bellman_target(reward, terminated, next_q, gamma)

    monkeypatch.setattr(td3_steps.agent, "target_q_values", spy_target_q_values)
    monkeypatch.setattr(td3_steps.agent, "bellman_target", spy_bellman_target)
    model.train_step()
    assert len(seen["qs"]) == 3
    assert torch.equal(seen["next_q"], torch.minimum(torch.minimum(*seen["qs"][:2]), seen["qs"][2]))
    assert torch.equal(seen["next_q"], seen["qs"][2])  # the third one decided the target


def test_one_critic_gives_the_ddpg_target():
    model = TD3(ToyEnv(), TOY.replace(n_critics=1), seed=0, device="cpu").learn(15)
    assert len(model.critics.members) == 1 and model.critic_updates == 5


# ---------------------------------------------------------------- network choices
def test_activation_and_layer_norm_shape_the_mlps():
    model = TD3(ToyEnv(), TOY.replace(activation="tanh", layer_norm=True), seed=0, device="cpu")
    for mlp in (model.actor.net, model.critics.members[0].net, model.critics.members[1].net):
        kinds = [type(layer) for layer in mlp.hidden]
        assert kinds == [nn.Linear, nn.LayerNorm, nn.Tanh] * 2
    model.learn(15)
    assert model.critic_updates == 5


@pytest.mark.parametrize(
    "field, value",
    [("activation", "swish"), ("layer_norm", 1), ("features_extractor", "resnet"), ("share_features_extractor", "no"),
     ("noise_type", "pink"), ("random_exploration", 1.5), ("ou_theta", -0.1), ("train_freq", (1, "epoch")),
     ("train_freq", 0), ("gradient_steps", 0), ("gradient_steps", -2), ("learning_rate", LinearSchedule(1e-3, -1e-4)),
     ("exploration_noise", lambda progress: -0.1), ("learning_rate", "fast")],
)  # fmt: skip
def test_invalid_new_fields_name_the_field(field, value):
    with pytest.raises(ConfigError, match=rf"TD3Config\.{field}"):
        TD3Config(**{field: value})


def test_images_are_stored_as_uint8_and_read_by_the_nature_cnn(tmp_path):
    model = TD3(IMAGE_ENV_ID, IMAGES, seed=0, device="cpu")
    assert model.memory.obs.dtype == torch.uint8 and model.memory.obs.shape == (200, 36, 36, 3)
    assert isinstance(model.actor.features, NatureCNN) and isinstance(model.critics.features, NatureCNN)
    assert model.actor.features is not model.critics.features  # separate by default
    model.learn(30)
    assert model.critic_updates == 10
    assert model.memory.obs[:30].float().std() > 0  # raw pixels, not scaled
    frame = np.full((36, 36, 3), 200, np.uint8)
    action, _ = model.predict(frame)
    assert action.shape == (1,) and model.predict(np.stack([frame, frame]))[0].shape == (2, 1)
    model.save_policy(tmp_path / "policy.pt")
    policy = Policy.load(tmp_path / "policy.pt")
    assert np.array_equal(policy.predict(frame)[0], action)
    model.save(tmp_path / "ckpt", include_memory=True)
    assert torch.equal(TD3.load(tmp_path / "ckpt", device="cpu").memory.obs, model.memory.obs)


def test_nature_cnn_needs_images_of_36_pixels():
    with pytest.raises(SpaceError, match="features_extractor = 'nature_cnn' needs image observations"):
        TD3("Pendulum-v1", SMALL.replace(features_extractor="nature_cnn"), device="cpu")
    small_images = ToyEnv(observation_space=spaces.Box(0, 255, (3, 20, 20), np.uint8))
    with pytest.raises(SpaceError, match="at least 36x36 pixels, got 20x20"):
        TD3(small_images, SMALL, device="cpu")
    flat = TD3(small_images, SMALL.replace(features_extractor="flatten"), device="cpu")  # channels first, flattened
    assert flat.memory.obs.shape[1:] == (3, 20, 20) and flat.actor.net.hidden[0].in_features == 1200


def test_a_shared_features_extractor_is_trained_by_the_critic_loss_only():
    model = TD3(IMAGE_ENV_ID, IMAGES.replace(share_features_extractor=True, policy_delay=1), seed=0, device="cpu")
    assert model.actor.features is model.critics.features
    assert model.actor_target.features is not model.critic_targets.features  # each target is its own copy
    shared = {id(p) for p in model.critics.features.parameters()}
    assert not shared & {id(p) for group in model.actor_optimizer.param_groups for p in group["params"]}
    assert shared <= {id(p) for group in model.critic_optimizer.param_groups for p in group["params"]}
    model.learn(20)  # warm-up only
    batch = model.memory.sample(8)
    before, actor_before = params(model.critics.features), params(model.actor.net)
    actor_update(model.actor, model.critics, batch.obs, model.actor_optimizer)
    assert same(before, params(model.critics.features)) and not same(actor_before, params(model.actor.net))
    model.train_step()  # the critic update moves the shared extractor
    assert not same(before, params(model.critics.features))


class ActorNet(nn.Module):
    def __init__(self, in_dim=3, out_dim=1):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, 16), nn.Tanh(), nn.Linear(16, out_dim))

    def forward(self, x):
        return 10 * self.body(x)  # large outputs: the Actor's tanh must still keep the bounds


def test_custom_modules_for_actor_and_critics(tmp_path):
    critic_net = nn.Sequential(nn.Linear(3 + 1, 16), nn.ReLU(), nn.Linear(16, 1))
    model = TD3(
        "Pendulum-v1", SMALL.replace(n_critics=3), seed=0, device="cpu", actor_net=ActorNet(), critic_net=critic_net
    )
    weights = [m.net[0].weight for m in model.critics.members]
    assert not torch.equal(weights[0], weights[1]) and not torch.equal(weights[1], weights[2])
    assert not torch.equal(weights[0], critic_net[0].weight)  # re-initialised copies
    model.learn(110)
    actions, _ = model.predict(np.random.default_rng(0).normal(size=(50, 3)) * 10)
    assert np.all(np.abs(actions) <= 2.0)
    model.save(tmp_path / "ckpt")
    with pytest.raises(CheckpointError, match="custom actor_net: pass the same module"):
        TD3.load(tmp_path / "ckpt", device="cpu", critic_net=critic_net)
    loaded = TD3.load(tmp_path / "ckpt", device="cpu", actor_net=ActorNet(), critic_net=critic_net)
    assert same(params(loaded.critics), params(model.critics))
    model.save_policy(tmp_path / "policy.pt")
    with pytest.raises(CheckpointError, match="Policy.load\\(path, actor_net=...\\)"):
        Policy.load(tmp_path / "policy.pt")
    assert np.array_equal(Policy.load(tmp_path / "policy.pt", actor_net=ActorNet()).predict(np.ones(3))[0],
                          model.predict(np.ones(3))[0])  # fmt: skip


def test_custom_modules_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match=r"actor_net must map \(B, 3\) \(features\) to \(B, 1\).*\(2, 2\)"):
        TD3("Pendulum-v1", SMALL, device="cpu", actor_net=ActorNet(out_dim=2))
    with pytest.raises(ValueError, match=r"critic_net must take \(B, 4\) inputs"):
        TD3("Pendulum-v1", SMALL, device="cpu", critic_net=nn.Linear(3, 1))
    with pytest.raises(TypeError, match="critic_net must be a torch.nn.Module"):
        TD3("Pendulum-v1", SMALL, device="cpu", critic_net=lambda x: x)


# ---------------------------------------------------------------- exploration noise
def test_gaussian_noise_draws_what_the_agent_always_drew():
    scale = torch.tensor([0.2, 0.4])
    a, b = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    assert torch.equal(GaussianNoise()(scale, a), torch.randn(2, generator=b) * scale)


def test_ornstein_uhlenbeck_noise_is_correlated_and_resets():
    noise, generator = OrnsteinUhlenbeckNoise(4000, theta=0.15), torch.Generator().manual_seed(0)
    scale = torch.full((4000,), 0.5)
    x = torch.stack([noise(scale, generator) for _ in range(100)])  # 4000 independent processes, 100 steps
    assert torch.corrcoef(torch.stack([x[:-1, 0], x[1:, 0]]))[0, 1] > 0.9  # Gaussian noise would give about 0
    a = 1 - 0.15 * 0.01  # x_t = a x_(t-1) + sqrt(dt) eps: Var x_100 = dt (1 - a^200) / (1 - a^2)
    assert abs(x[-1].std() - 0.5 * math.sqrt(0.01 * (1 - a**200) / (1 - a**2))) < 0.03
    noise.reset()
    assert torch.equal(noise.x, torch.zeros(4000))


def test_random_exploration_replaces_that_share_of_actions():
    # No updates (train_freq beyond the run) and no noise: every non-random action is the actor's.
    config = SMALL.replace(learning_starts=0, train_freq=10_000, exploration_noise=0.0)
    shares = []
    for p in (0.0, 0.5, 1.0):
        model = TD3(ToyEnv(), config.replace(random_exploration=p), seed=0, device="cpu").learn(200)
        with torch.no_grad():
            policy_actions = model.actor(model.memory.obs[:200])
        shares.append((~torch.isclose(model.memory.action[:200], policy_actions, atol=1e-6)).float().mean().item())
    assert shares[0] == 0.0 and 0.35 < shares[1] < 0.65 and shares[2] == 1.0


# ---------------------------------------------------------------- update schedules
def test_train_at_the_end_of_each_episode_as_many_steps_as_collected():
    config = SMALL.replace(learning_starts=7, batch_size=4, train_freq=(1, "episode"), gradient_steps=-1)
    model = TD3(ToyEnv(), config, seed=0, device="cpu")  # episodes of 5 steps
    updates = []
    for _ in range(4):
        model.learn(5)
        updates.append(model.critic_updates)
    assert updates == [0, 3, 8, 13]  # only the 3 steps after learning_starts count in the second episode


def test_train_every_n_steps_with_gradient_steps_minus_one():
    model = TD3(ToyEnv(), SMALL.replace(learning_starts=10, batch_size=4, train_freq=(4, "step"), gradient_steps=-1),
                seed=0, device="cpu").learn(21)  # fmt: skip
    assert model.critic_updates == 2 + 4 + 4  # at steps 12 (steps 11, 12), 16 and 20


def test_train_freq_survives_json():
    config = SMALL.replace(train_freq=(2, "episode"), gradient_steps=-1)
    assert TD3Config.from_dict(json.loads(json.dumps(config.to_dict()))) == config


# ---------------------------------------------------------------- schedules
def test_linear_schedule_values():
    schedule = LinearSchedule(1.0, 0.0, end_fraction=0.5)
    assert [schedule(p) for p in (1.0, 0.75, 0.5, 0.0)] == [1.0, 0.5, 0.0, 0.0]


def test_learning_rate_schedule_reaches_the_optimizers():
    model = TD3(ToyEnv(), TOY.replace(learning_rate=LinearSchedule(1e-3, 1e-4)), seed=0, device="cpu")
    assert model.actor_optimizer.param_groups[0]["lr"] == 1e-3
    model.learn(50)
    assert model.progress_remaining == 0.0
    assert model.actor_optimizer.param_groups[0]["lr"] == model.critic_optimizer.param_groups[0]["lr"] == 1e-4


def test_exploration_noise_schedule():
    # No updates: once the noise has decayed to 0 (half-way), the stored actions are the actor's.
    schedule = LinearSchedule(0.5, 0.0, end_fraction=0.5)
    config = SMALL.replace(learning_starts=0, train_freq=10_000, exploration_noise=schedule)
    model = TD3(ToyEnv(), config, seed=0, device="cpu").learn(100)
    with torch.no_grad():
        noiseless = torch.isclose(model.memory.action[:100], model.actor(model.memory.obs[:100]), atol=1e-6).flatten()
    assert not noiseless[:40].any() and noiseless[50:].all()  # step i acts at progress_remaining 1 - i / 100


def test_a_plain_callable_schedule_saves_and_asks_for_the_config_on_load(tmp_path):
    config = TOY.replace(learning_rate=lambda progress: 1e-3 * progress + 1e-5)
    model = TD3(ToyEnv(), config, seed=0, device="cpu").learn(12)
    model.save(tmp_path / "ckpt")  # never fails: the work is saved
    with pytest.raises(CheckpointError, match=r"learning_rate was a Python callable.*config="):
        TD3.load(tmp_path / "ckpt", env=ToyEnv(), device="cpu")
    assert TD3.load(tmp_path / "ckpt", env=ToyEnv(), device="cpu", config=config).num_steps == 12


def test_resume_is_bit_identical_with_the_stateful_options(tmp_path):
    config = SMALL.replace(
        learning_starts=30, noise_type="ornstein-uhlenbeck", train_freq=(1, "episode"), gradient_steps=-1,
        learning_rate=LinearSchedule(1e-3, 1e-4), exploration_noise=LinearSchedule(0.3, 0.05), random_exploration=0.2,
    )  # fmt: skip
    straight = TD3(ToyEnv(), config, seed=2, device="cpu").learn(63)
    first = TD3(ToyEnv(), config, seed=2, device="cpu")
    first.learn(63, callback=lambda m: m.num_steps < 33)  # stopped mid-episode: OU state and steps pending
    first.save(tmp_path / "ckpt", include_memory=True)
    resumed = TD3.load(tmp_path / "ckpt", env=ToyEnv(), device="cpu").learn(30)
    assert torch.equal(resumed.noise.x, straight.noise.x)
    for name in ("actor", "critics", "actor_target", "critic_targets"):
        assert same(params(getattr(straight, name)), params(getattr(resumed, name))), name
    assert torch.equal(straight.memory.action, resumed.memory.action)


# ---------------------------------------------------------------- callbacks
def test_a_callback_sees_every_step_and_stops_training():
    seen = []
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu")
    model.learn(100, callback=lambda m: seen.append(m.num_steps) or m.num_steps < 30)
    assert model.num_steps == 30 and seen == list(range(1, 31))


def test_eval_callback_keeps_the_best_model(tmp_path):
    best = EvalCallback(eval_freq=10, n_episodes=2, best_model_path=tmp_path / "best")
    model = TD3(ToyEnv(), TOY, seed=0, device="cpu").learn(40, callback=best)
    assert [row["step"] for row in best.evaluations] == [10, 20, 30, 40]
    returns = [row["eval_return"] for row in best.evaluations]
    assert len(set(returns)) > 1 and best.best_mean_return == max(returns)
    loaded = TD3.load(tmp_path / "best", env=ToyEnv(), device="cpu")
    assert loaded.num_steps == best.best_step and loaded.evaluate(2)[0] == best.best_mean_return
    assert model.num_steps == 40
    with pytest.raises(ValueError, match="eval_freq"):
        EvalCallback(eval_freq=0)


# ---------------------------------------------------------------- TensorBoard
def test_tensorboard_gets_the_csv_column_names(tmp_path, monkeypatch):
    scalars = []

    class FakeWriter:
        def __init__(self, log_dir):
            self.log_dir = log_dir

        def add_scalar(self, name, value, step):
            scalars.append((name, step))

        def flush(self):
            scalars.append(("flushed", None))

    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", types.SimpleNamespace(SummaryWriter=FakeWriter))
    model = TD3(ToyEnv(), TOY.replace(learning_starts=7), seed=0, device="cpu", tensorboard_log=tmp_path / "tb")
    model.learn(10, eval_freq=10, eval_episodes=1)
    names = {name for name, _ in scalars}
    assert {"episode", "episode_return", "critic_loss", "actor_loss", "q1_mean", "q2_mean", "eval_return"} <= names
    assert ("episode_return", 5) in scalars and ("eval_return", 10) in scalars and ("critic_loss", 10) in scalars
    assert ("critic_loss", 5) not in scalars  # NaN (no update yet in the warm-up) is left out
    assert scalars[-1] == ("flushed", None)


def test_missing_tensorboard_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    with pytest.raises(ImportError, match="pip install tensorboard"):
        TD3("Pendulum-v1", SMALL, device="cpu", tensorboard_log=tmp_path / "tb")


def test_tensorboard_event_files_hold_the_csv_metrics(tmp_path):
    pytest.importorskip("tensorboard")  # in the dev extra, so CI runs this
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: PLC0415

    rows = []
    model = TD3(ToyEnv(), TOY, seed=0, device="cpu", tensorboard_log=tmp_path / "tb")
    model.learn(20, eval_freq=10, eval_episodes=1, log=rows.append)
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    for name in ("episode_return", "critic_loss", "eval_return"):
        logged = [(e.step, e.value) for e in events.Scalars(name)]
        expected = [(r["step"], r[name]) for r in rows if name in r and not math.isnan(r[name])]
        assert logged and [s for s, _ in logged] == [s for s, _ in expected]
        assert [v for _, v in logged] == pytest.approx([v for _, v in expected], rel=1e-6)


# ---------------------------------------------------------------- parameters and environment
def test_get_and_set_parameters():
    model = TD3(ToyEnv(), TOY, seed=0, device="cpu").learn(20)
    other = TD3(ToyEnv(), TOY, seed=1, device="cpu")
    other.set_parameters(copy.deepcopy(model.get_parameters()))
    for name in ("actor", "actor_target", "critics", "critic_targets"):
        assert same(params(getattr(model, name)), params(getattr(other, name)))
    assert other.actor_optimizer.state_dict()["state"].keys() == model.actor_optimizer.state_dict()["state"].keys()
    with pytest.raises(ValueError, match=r"missing \['critic_optimizer'\], unexpected \['extra'\]"):
        other.set_parameters(
            {**{k: v for k, v in model.get_parameters().items() if k != "critic_optimizer"}, "extra": {}}
        )
    third = TD3(ToyEnv(), TOY, seed=2, device="cpu")
    third.set_parameters({"actor": model.actor.state_dict()}, exact_match=False)
    assert same(params(third.actor), params(model.actor)) and not same(params(third.critics), params(model.critics))
    wide = TD3(ToyEnv(), TOY.replace(net_arch=(8,)), device="cpu")
    with pytest.raises(ValueError, match="'actor' does not fit"):
        wide.set_parameters({"actor": model.actor.state_dict()}, exact_match=False)


def test_set_env_checks_the_spaces_and_restarts_the_episode():
    model = TD3(ToyEnv(), SMALL.replace(learning_starts=5), seed=0, device="cpu").learn(3)
    new_env = ToyEnv()
    model.set_env(new_env)
    assert model.env is new_env and model._obs is None
    model.learn(4)
    assert model.episodes == 0 and new_env.t == 4  # a fresh episode in the new env
    with pytest.raises(SpaceError, match="observation space"):
        model.set_env(ToyEnv(observation_space=spaces.Box(-1.0, 1.0, (3,), np.float32)))
    with pytest.raises(SpaceError, match="action space"):
        model.set_env(ToyEnv(action_space=spaces.Box(-2.0, 2.0, (1,), np.float32)))


# ---------------------------------------------------------------- behaviour cloning
def expert_pairs(n=300, seed=0):
    obs = np.random.default_rng(seed).uniform(-1, 1, size=(n, 3)).astype(np.float32)
    return obs, np.clip(1.5 * obs[:, :1] - obs[:, 2:], -2, 2)  # a smooth expert within Pendulum's [-2, 2]


def test_pretrain_clones_the_expert():
    obs, actions = expert_pairs()
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu")
    history = model.pretrain(obs, actions, epochs=10, batch_size=16)
    assert [row["epoch"] for row in history] == list(range(1, 11))
    assert history[-1]["val_loss"] < 0.1 * history[0]["val_loss"] and history[-1]["train_loss"] < 0.05
    assert same(params(model.actor), params(model.actor_target))
    assert model.actor_optimizer.state_dict()["state"] == {}  # training's optimizer untouched
    again = TD3("Pendulum-v1", SMALL, seed=0, device="cpu").pretrain(obs, actions, epochs=2, batch_size=16)
    assert again == history[:2]  # seeded


def test_pretrain_refuses_bad_data():
    obs, actions = expert_pairs(20)
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu")
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


# ---------------------------------------------------------------- replay memory files, and old checkpoints
def test_save_and_load_the_replay_memory(tmp_path):
    model = TD3(ToyEnv(), TOY, seed=0, device="cpu").learn(20)
    model.save_replay_memory(tmp_path / "memory.pt")
    fresh = TD3(ToyEnv(), TOY, seed=1, device="cpu")
    fresh.load_replay_memory(tmp_path / "memory.pt")
    assert len(fresh.memory) == 20 and torch.equal(fresh.memory.obs, model.memory.obs)
    with pytest.raises(ValueError, match="does not fit"):
        ReplayMemory(10, 2, 1).load_state_dict(fresh.memory.state_dict())


def test_checkpoints_and_policies_of_the_course_version_still_load(tmp_path):
    model = TD3(ToyEnv(), TOY, seed=1, device="cpu").learn(13)  # mid-episode
    model.save(tmp_path / "ckpt", include_memory=True)
    meta_file, state_file = tmp_path / "ckpt" / "meta.json", tmp_path / "ckpt" / "state.pt"
    meta = json.loads(meta_file.read_text())  # remove what this version added
    for name in ("custom_networks", "steps_since_training"):
        del meta[name]
    meta["config"] = {k: v for k, v in meta["config"].items() if k in {
        "learning_rate", "buffer_size", "learning_starts", "batch_size", "tau", "gamma", "train_freq", "gradient_steps",
        "policy_delay", "target_policy_noise", "target_noise_clip", "exploration_noise", "net_arch", "n_critics",
        "mixed_precision"}}  # fmt: skip
    meta_file.write_text(json.dumps(meta))
    state = torch.load(state_file, weights_only=True)
    del state["noise"]
    torch.save(state, state_file)
    resumed = TD3.load(tmp_path / "ckpt", env=ToyEnv(), device="cpu")
    assert same(params(resumed.learn(7).actor), params(model.learn(7).actor))

    model = TD3("Pendulum-v1", SMALL, seed=1, device="cpu")
    v1 = {"format": "td3_steps policy", "version": 1, "env_id": "Pendulum-v1", "net_arch": [32, 32],
          "mixed_precision": False, "obs_dim": 3, "actor": model.actor.state_dict()}  # fmt: skip
    torch.save(v1, tmp_path / "policy_v1.pt")
    obs = np.ones((4, 3), np.float32)
    assert np.array_equal(Policy.load(tmp_path / "policy_v1.pt").predict(obs)[0], model.predict(obs)[0])
