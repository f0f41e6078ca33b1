"""The TD3 agent: training invariants, determinism, checkpoints and resume, and bad input."""

import json
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

from td3_steps import TD3, CheckpointError, ConfigError, Policy, SpaceError, TD3Config, TrainingError

SMALL = TD3Config(learning_starts=100, batch_size=32, buffer_size=5_000, net_arch=(32, 32))


def params(module: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


def same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


class ToyEnv(gym.Env):
    """A 5-step env with configurable spaces; the reward is -|action - 0.5|."""

    def __init__(self, observation_space=None, action_space=None, reward=None, terminate_at=None):
        self.observation_space = observation_space or spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = action_space or spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.fixed_reward, self.terminate_at, self.t = reward, terminate_at, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        self.t += 1
        reward = self.fixed_reward if self.fixed_reward is not None else -float(np.abs(np.asarray(action) - 0.5).sum())
        terminated = self.terminate_at is not None and self.t >= self.terminate_at
        return self.observation_space.sample(), reward, terminated, self.t >= 5, {}


# ---------------------------------------------------------------- the update schedule
def test_delay_counts_critic_updates_not_environment_steps():
    config = SMALL.replace(learning_starts=50, gradient_steps=2, policy_delay=2)
    model = TD3("Pendulum-v1", config, seed=0, device="cpu")
    model.learn(50)  # warm-up only: nothing trained yet
    assert model.critic_updates == 0
    actor_before = params(model.actor)
    model.learn(1)  # one env step, two critic updates: the second is a policy update
    assert model.critic_updates == 2
    assert not same(actor_before, params(model.actor))


def test_actor_and_targets_move_only_every_d_th_iteration():
    model = TD3("Pendulum-v1", SMALL.replace(policy_delay=3), seed=0, device="cpu")
    model.learn(100)
    for iteration in range(1, 7):
        before = [params(m) for m in (model.actor, model.actor_target, model.critic_targets)]
        critics_before = params(model.critics)
        model.train_step()
        moved = [
            not same(b, params(m)) for b, m in zip(before, (model.actor, model.actor_target, model.critic_targets))
        ]
        assert moved == [iteration % 3 == 0] * 3
        assert not same(critics_before, params(model.critics))  # the critics move every iteration


def test_gradients_never_reach_the_targets():
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu")
    model.learn(200)
    for target in (model.actor_target, model.critic_targets):
        assert all(p.grad is None and not p.requires_grad for p in target.parameters())
    optimized = {id(p) for group in model.critic_optimizer.param_groups for p in group["params"]}
    assert optimized == {id(p) for p in model.critics.parameters()}


def test_time_limits_are_stored_as_truncated_not_terminated():
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu")
    model.learn(400)  # two full Pendulum episodes, each cut at 200 steps by its time limit
    assert model.memory.terminated[:400].sum() == 0
    assert model.memory.truncated[:400, 0].nonzero().flatten().tolist() == [199, 399]


def test_termination_is_stored():
    model = TD3(ToyEnv(terminate_at=3), SMALL, seed=0, device="cpu")
    model.learn(6)
    assert model.memory.terminated[:6, 0].tolist() == [0, 0, 1, 0, 0, 1]


def test_exploration_stays_within_asymmetric_bounds():
    env = ToyEnv(action_space=spaces.Box(np.array([0.0, -1.0], np.float32), np.array([2.0, 3.0], np.float32)))
    model = TD3(env, SMALL.replace(learning_starts=20, exploration_noise=3.0), seed=0, device="cpu")
    model.learn(120)
    actions = model.memory.action[:120]
    assert torch.all(actions >= torch.tensor([0.0, -1.0])) and torch.all(actions <= torch.tensor([2.0, 3.0]))
    assert actions[:, 1].max() > 2.5  # the second dimension uses its own, wider range


# ---------------------------------------------------------------- determinism and resume
def test_one_seed_gives_the_same_run():
    a = TD3("Pendulum-v1", SMALL, seed=3, device="cpu").learn(300)
    b = TD3("Pendulum-v1", SMALL, seed=3, device="cpu").learn(300)
    c = TD3("Pendulum-v1", SMALL, seed=4, device="cpu").learn(300)
    assert same(params(a.actor), params(b.actor)) and same(params(a.critics), params(b.critics))
    assert not same(params(a.actor), params(c.actor))
    assert a.evaluate(2) == b.evaluate(2)


def test_construction_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(1)
    torch.manual_seed(123)
    TD3("Pendulum-v1", SMALL, seed=0, device="cpu")
    assert torch.equal(torch.rand(1), expected)


def test_resume_mid_episode_is_bit_identical(tmp_path):
    straight = TD3("Pendulum-v1", SMALL, seed=1, device="cpu").learn(650)

    first = TD3("Pendulum-v1", SMALL, seed=1, device="cpu").learn(330)  # mid-episode (episodes are 200)
    first.save(tmp_path / "ckpt", include_memory=True)
    resumed = TD3.load(tmp_path / "ckpt", device="cpu")
    assert resumed.num_steps == 330 and resumed.critic_updates == first.critic_updates
    resumed.learn(320)

    for name in ("actor", "actor_target", "critics", "critic_targets"):
        assert same(params(getattr(straight, name)), params(getattr(resumed, name))), name
    for name in ("actor_optimizer", "critic_optimizer"):
        a, b = getattr(straight, name).state_dict()["state"], getattr(resumed, name).state_dict()["state"]
        assert all(torch.equal(a[k]["exp_avg_sq"], b[k]["exp_avg_sq"]) for k in a)
    assert torch.equal(straight.memory.obs, resumed.memory.obs)
    assert (straight.episodes, straight.critic_updates) == (resumed.episodes, resumed.critic_updates)


def test_checkpoint_without_memory_still_loads(tmp_path):
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu").learn(150)
    model.save(tmp_path / "ckpt")
    assert not (tmp_path / "ckpt" / "replay_memory.pt").exists()
    loaded = TD3.load(tmp_path / "ckpt", device="cpu")
    assert len(loaded.memory) == 0
    obs = np.zeros(3, np.float32)
    assert np.array_equal(loaded.predict(obs)[0], model.predict(obs)[0])


def test_save_replaces_atomically(tmp_path):
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu")
    model.save(tmp_path / "ckpt")
    model.learn(120)
    model.save(tmp_path / "ckpt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]  # no .tmp or .old left behind
    assert TD3.load(tmp_path / "ckpt", device="cpu").num_steps == 120


def test_a_crash_between_the_renames_is_recovered(tmp_path):
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu").learn(10)
    model.save(tmp_path / "ckpt")
    (tmp_path / "ckpt").rename(tmp_path / "ckpt.old")  # as if the process died after the first rename
    assert TD3.load(tmp_path / "ckpt", device="cpu").num_steps == 10


def test_corrupt_and_foreign_checkpoints_get_clear_errors(tmp_path):
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu")
    model.save(tmp_path / "ckpt")
    with pytest.raises(CheckpointError, match="No checkpoint"):
        TD3.load(tmp_path / "missing")
    (tmp_path / "ckpt" / "state.pt").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="corrupt"):
        TD3.load(tmp_path / "ckpt")
    (tmp_path / "ckpt" / "meta.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(CheckpointError, match="not a td3_steps checkpoint"):
        TD3.load(tmp_path / "ckpt")
    (tmp_path / "ckpt" / "meta.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="corrupt"):
        TD3.load(tmp_path / "ckpt")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with pytest.raises(CheckpointError, match="no meta.json"):
        TD3.load(foreign)


def test_checkpoint_for_another_architecture_is_refused(tmp_path):
    TD3("Pendulum-v1", SMALL, seed=0, device="cpu").save(tmp_path / "ckpt")
    meta_file = tmp_path / "ckpt" / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["config"]["net_arch"] = [16]
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="does not fit"):
        TD3.load(tmp_path / "ckpt", device="cpu")


def test_checkpoints_load_with_weights_only(tmp_path, monkeypatch):
    calls = []
    original = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: calls.append(k.get("weights_only")) or original(*a, **k))
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu").learn(120)
    model.save(tmp_path / "ckpt", include_memory=True)
    TD3.load(tmp_path / "ckpt", device="cpu")
    model.save_policy(tmp_path / "policy.pt")
    Policy.load(tmp_path / "policy.pt")
    assert calls == [True, True, True]


# ---------------------------------------------------------------- predict, evaluate, policy
def test_predict_single_and_batched():
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu")
    action, state = model.predict(np.zeros(3))
    assert state is None and action.shape == (1,) and action.dtype == np.float32
    actions, _ = model.predict(np.zeros((5, 3)))
    assert actions.shape == (5, 1)
    assert np.allclose(actions[0], action)
    noisy, _ = model.predict(np.zeros((200, 3)), deterministic=False)
    assert noisy.std() > 0 and np.all(np.abs(noisy) <= 2.0)
    with pytest.raises(ValueError, match=r"shape \(3,\).*got an array of shape \(4,\)"):
        model.predict(np.zeros(4))


def test_evaluate_is_reproducible_and_leaves_training_alone():
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu").learn(150)
    first = model.evaluate(2)
    assert isinstance(first[0], float) and first[0] < 0
    assert model.evaluate(2) == first
    twin = TD3("Pendulum-v1", SMALL, seed=0, device="cpu").learn(150)
    model.learn(100)
    twin.learn(100)
    assert same(params(model.actor), params(twin.actor))  # the evaluation did not disturb training


def test_policy_file_round_trip(tmp_path):
    model = TD3("Pendulum-v1", SMALL, seed=0, device="cpu").learn(150)
    model.save_policy(tmp_path / "policy.pt")
    policy = Policy.load(tmp_path / "policy.pt")
    obs = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
    assert np.array_equal(policy.predict(obs)[0], model.predict(obs)[0])
    assert policy.evaluate(2) == model.evaluate(2)
    (tmp_path / "bad.pt").write_bytes(b"nope")
    with pytest.raises(CheckpointError):
        Policy.load(tmp_path / "bad.pt")


# ---------------------------------------------------------------- environments and spaces
def test_dict_and_discrete_observations_are_flattened():
    obs_space = spaces.Dict(
        {
            "position": spaces.Box(-1.0, 1.0, (2,), np.float32),
            "mode": spaces.Discrete(3),
            "switches": spaces.MultiBinary(2),
            "gear": spaces.MultiDiscrete([2, 3]),
        }
    )
    model = TD3(ToyEnv(observation_space=obs_space), SMALL.replace(learning_starts=10), seed=0, device="cpu")
    assert model.memory.obs.shape[1] == 2 + 3 + 2 + 5  # one-hot for the discrete parts
    model.learn(40)
    action, _ = model.predict(obs_space.sample())
    assert action.shape == (1,)


def test_discrete_actions_are_refused_clearly():
    with pytest.raises(SpaceError, match="bounded continuous actions"):
        TD3("CartPole-v1", SMALL)
    with pytest.raises(SpaceError, match="bounded continuous actions"):
        TD3(ToyEnv(action_space=spaces.MultiDiscrete([2, 2])), SMALL)


def test_unbounded_actions_are_refused_clearly():
    with pytest.raises(SpaceError, match="infinite bounds"):
        TD3(ToyEnv(action_space=spaces.Box(-np.inf, np.inf, (1,), np.float32)), SMALL)


def test_unflattenable_observations_are_refused_clearly():
    with pytest.raises(SpaceError, match="flatten"):
        TD3(ToyEnv(observation_space=spaces.Sequence(spaces.Discrete(2))), SMALL)
    with pytest.raises(SpaceError, match="flatten"):
        TD3(ToyEnv(observation_space=spaces.Graph(spaces.Box(0.0, 1.0, (2,)), None)), SMALL)


def test_nan_loss_names_the_step_and_iteration():
    model = TD3(ToyEnv(reward=float("nan")), SMALL.replace(learning_starts=10), seed=0, device="cpu")
    with pytest.raises(TrainingError, match=r"critic loss \(step 11\).*iteration 1 "):
        model.learn(20)


def test_bad_arguments():
    with pytest.raises(TypeError, match="TD3Config"):
        TD3("Pendulum-v1", config={"tau": 0.1})
    with pytest.raises(ValueError, match="device"):
        TD3("Pendulum-v1", SMALL, device="tpu")
    with pytest.raises(ValueError, match="Cannot make environment"):
        TD3("NoSuchEnv-v0", SMALL)
    model = TD3("Pendulum-v1", SMALL, device="cpu")
    with pytest.raises(ValueError, match="total_steps"):
        model.learn(-1)
    with pytest.raises(ValueError, match="n_episodes"):
        model.evaluate(0)


@pytest.mark.filterwarnings("ignore:mixed_precision=True")
def test_mixed_precision_keeps_values_and_weights_float32():
    model = TD3("Pendulum-v1", SMALL.replace(mixed_precision=True), seed=0, device="cpu").learn(150)
    assert model.critic_updates > 0
    obs = torch.zeros(4, 3)
    assert model.actor(obs).dtype == torch.float32
    assert model.critics(obs, torch.zeros(4, 1))[0].dtype == torch.float32
    assert all(p.dtype == torch.float32 for p in model.critics.parameters())


def test_mixed_precision_warns_where_bfloat16_is_emulated(monkeypatch):
    import td3_steps.agent

    monkeypatch.setattr(td3_steps.agent, "has_fast_bfloat16", lambda device: False)
    with pytest.warns(UserWarning, match="no native bfloat16.*Leave mixed_precision off"):
        TD3("Pendulum-v1", SMALL.replace(mixed_precision=True), device="cpu")
    monkeypatch.setattr(td3_steps.agent, "has_fast_bfloat16", lambda device: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TD3("Pendulum-v1", SMALL.replace(mixed_precision=True), device="cpu")
        TD3("Pendulum-v1", SMALL, device="cpu")


def test_n_critics_one_and_three_train():
    for n in (1, 3):
        model = TD3("Pendulum-v1", SMALL.replace(n_critics=n), seed=0, device="cpu").learn(130)
        assert len(model.critic_targets.members) == n and model.critic_updates == 30


@pytest.mark.parametrize(
    "field, value",
    [("tau", 0.0), ("tau", 1.5), ("target_policy_noise", -0.1), ("exploration_noise", -1.0), ("gamma", 1.2),
     ("batch_size", 0), ("learning_rate", 0.0), ("net_arch", ()), ("policy_delay", 0), ("n_critics", 0),
     ("tau", float("nan"))],
)  # fmt: skip
def test_invalid_config_names_the_field(field, value):
    with pytest.raises(ConfigError, match=rf"TD3Config\.{field}"):
        TD3Config(**{field: value})


def test_batch_larger_than_the_buffer_and_unknown_preset():
    with pytest.raises(ConfigError, match="batch_size.*buffer_size"):
        TD3Config(batch_size=512, buffer_size=256)
    with pytest.raises(ConfigError, match="unknown preset 'nope'.*pendulum"):
        TD3Config.from_preset("nope")
    with pytest.raises(ConfigError, match="no field"):
        SMALL.replace(learning_rat=1e-3)


def test_bullet_envs_by_name_without_native_noise():
    code = (
        "from td3_steps import TD3, TD3Config\n"
        "m = TD3('HopperBulletEnv-v0', TD3Config(buffer_size=1000, batch_size=10, learning_starts=5, net_arch=(8,)), device='cpu')\n"
        "m.learn(10)\n"
        "print('ok', m.memory.obs.shape[1])\n"
    )  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok 15\n"
    assert "argv[0]" not in result.stderr and "pybullet build time" not in result.stderr


def test_missing_pybullet_gets_the_install_command():
    code = (
        "import sys; sys.modules['pybullet_envs_gymnasium'] = None\n"
        "from td3_steps import TD3\n"
        "try:\n    TD3('Walker2DBulletEnv-v0')\nexcept ImportError as e:\n    print(e)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "pip install" in result.stdout and "pybullet" in result.stdout, result.stdout + result.stderr
