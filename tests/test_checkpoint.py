"""td3_steps.checkpoint: what a checkpoint holds, resume bit for bit, atomic writes, clear errors."""

import copy
import json

import numpy as np
import pytest
import torch

from td3_steps import TD3, CheckpointError, LinearSchedule, Policy, ReplayMemory


# ---------------------------------------------------------------- resume
def test_resume_mid_episode_is_bit_identical(tmp_path, small_config, params, same):
    straight = TD3("Pendulum-v1", small_config, seed=1, device="cpu").learn(650)

    first = TD3("Pendulum-v1", small_config, seed=1, device="cpu").learn(330)  # mid-episode (episodes are 200)
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


def test_resume_is_bit_identical_with_the_stateful_options(tmp_path, small_config, toy_env, params, same):
    config = small_config.replace(
        learning_starts=30, noise_type="ornstein-uhlenbeck", train_freq=(1, "episode"), gradient_steps=-1,
        learning_rate=LinearSchedule(1e-3, 1e-4), exploration_noise=LinearSchedule(0.3, 0.05), random_exploration=0.2,
    )  # fmt: skip
    straight = TD3(toy_env(), config, seed=2, device="cpu").learn(63)
    first = TD3(toy_env(), config, seed=2, device="cpu")
    first.learn(63, callback=lambda m: m.num_steps < 33)  # stopped mid-episode: OU state and steps pending
    first.save(tmp_path / "ckpt", include_memory=True)
    resumed = TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu").learn(30)
    assert torch.equal(resumed.noise.x, straight.noise.x)
    for name in ("actor", "critics", "actor_target", "critic_targets"):
        assert same(params(getattr(straight, name)), params(getattr(resumed, name))), name
    assert torch.equal(straight.memory.action, resumed.memory.action)


def test_checkpoints_of_the_course_version_still_load(tmp_path, toy_env, toy_config, params, same):
    model = TD3(toy_env(), toy_config, seed=1, device="cpu").learn(13)  # mid-episode
    model.save(tmp_path / "ckpt", include_memory=True)
    meta_file, state_file = tmp_path / "ckpt" / "meta.json", tmp_path / "ckpt" / "state.pt"
    meta = json.loads(meta_file.read_text())  # remove what later versions added
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
    resumed = TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")
    assert same(params(resumed.learn(7).actor), params(model.learn(7).actor))


def test_checkpoint_without_memory_still_loads(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(150)
    model.save(tmp_path / "ckpt")
    assert not (tmp_path / "ckpt" / "replay_memory.pt").exists()
    loaded = TD3.load(tmp_path / "ckpt", device="cpu")
    assert len(loaded.memory) == 0
    obs = np.zeros(3, np.float32)
    assert np.array_equal(loaded.predict(obs)[0], model.predict(obs)[0])


def test_a_plain_callable_schedule_saves_and_asks_for_the_config_on_load(tmp_path, toy_env, toy_config):
    config = toy_config.replace(learning_rate=lambda progress: 1e-3 * progress + 1e-5)
    model = TD3(toy_env(), config, seed=0, device="cpu").learn(12)
    model.save(tmp_path / "ckpt")  # never fails: the work is saved
    with pytest.raises(CheckpointError, match=r"learning_rate was a Python callable.*config="):
        TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")
    assert TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu", config=config).num_steps == 12


# ---------------------------------------------------------------- writing and reading
def test_save_replaces_atomically(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.save(tmp_path / "ckpt")
    model.learn(120)
    model.save(tmp_path / "ckpt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]  # no .tmp or .old left behind
    assert TD3.load(tmp_path / "ckpt", device="cpu").num_steps == 120


def test_a_crash_between_the_renames_is_recovered(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(10)
    model.save(tmp_path / "ckpt")
    (tmp_path / "ckpt").rename(tmp_path / "ckpt.old")  # as if the process died after the first rename
    assert TD3.load(tmp_path / "ckpt", device="cpu").num_steps == 10


def test_corrupt_and_foreign_checkpoints_get_clear_errors(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
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


def test_checkpoint_for_another_architecture_is_refused(tmp_path, small_config):
    TD3("Pendulum-v1", small_config, seed=0, device="cpu").save(tmp_path / "ckpt")
    meta_file = tmp_path / "ckpt" / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["config"]["net_arch"] = [16]
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="does not fit"):
        TD3.load(tmp_path / "ckpt", device="cpu")


def test_checkpoints_load_with_weights_only(tmp_path, monkeypatch, small_config):
    calls = []
    original = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: calls.append(k.get("weights_only")) or original(*a, **k))
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(120)
    model.save(tmp_path / "ckpt", include_memory=True)
    TD3.load(tmp_path / "ckpt", device="cpu")
    model.save_policy(tmp_path / "policy.pt")
    Policy.load(tmp_path / "policy.pt")
    assert calls == [True, True, True]


# ---------------------------------------------------------------- parameters and the replay memory alone
def test_get_and_set_parameters(toy_env, toy_config, params, same):
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(20)
    other = TD3(toy_env(), toy_config, seed=1, device="cpu")
    other.set_parameters(copy.deepcopy(model.get_parameters()))
    for name in ("actor", "actor_target", "critics", "critic_targets"):
        assert same(params(getattr(model, name)), params(getattr(other, name)))
    assert other.actor_optimizer.state_dict()["state"].keys() == model.actor_optimizer.state_dict()["state"].keys()
    with pytest.raises(ValueError, match=r"missing \['critic_optimizer'\], unexpected \['extra'\]"):
        other.set_parameters(
            {**{k: v for k, v in model.get_parameters().items() if k != "critic_optimizer"}, "extra": {}}
        )
    third = TD3(toy_env(), toy_config, seed=2, device="cpu")
    third.set_parameters({"actor": model.actor.state_dict()}, exact_match=False)
    assert same(params(third.actor), params(model.actor)) and not same(params(third.critics), params(model.critics))
    wide = TD3(toy_env(), toy_config.replace(net_arch=(8,)), device="cpu")
    with pytest.raises(ValueError, match="'actor' does not fit"):
        wide.set_parameters({"actor": model.actor.state_dict()}, exact_match=False)


def test_save_and_load_the_replay_memory(tmp_path, toy_env, toy_config):
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(20)
    model.save_replay_memory(tmp_path / "memory.pt")
    fresh = TD3(toy_env(), toy_config, seed=1, device="cpu")
    fresh.load_replay_memory(tmp_path / "memory.pt")
    assert len(fresh.memory) == 20 and torch.equal(fresh.memory.obs, model.memory.obs)
    with pytest.raises(ValueError, match="does not fit"):
        ReplayMemory(10, 2, 1).load_state_dict(fresh.memory.state_dict())
