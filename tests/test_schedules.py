"""td3_steps.schedules: a hyperparameter as a function of progress_remaining, and the agent following it."""

import torch

from td3_steps import TD3, LinearSchedule


def test_linear_schedule_values():
    schedule = LinearSchedule(1.0, 0.0, end_fraction=0.5)
    assert [schedule(p) for p in (1.0, 0.75, 0.5, 0.0)] == [1.0, 0.5, 0.0, 0.0]


def test_learning_rate_schedule_reaches_the_optimizers(toy_env, toy_config):
    model = TD3(toy_env(), toy_config.replace(learning_rate=LinearSchedule(1e-3, 1e-4)), seed=0, device="cpu")
    assert model.actor_optimizer.param_groups[0]["lr"] == 1e-3
    model.learn(50)
    assert model.progress_remaining == 0.0
    assert model.actor_optimizer.param_groups[0]["lr"] == model.critic_optimizer.param_groups[0]["lr"] == 1e-4


def test_exploration_noise_schedule(small_config, toy_env):
    # No updates: once the noise has decayed to 0 (half-way), the stored actions are the actor's.
    schedule = LinearSchedule(0.5, 0.0, end_fraction=0.5)
    config = small_config.replace(learning_starts=0, train_freq=10_000, exploration_noise=schedule)
    model = TD3(toy_env(), config, seed=0, device="cpu").learn(100)
    with torch.no_grad():
        noiseless = torch.isclose(model.memory.action[:100], model.actor(model.memory.obs[:100]), atol=1e-6).flatten()
    assert not noiseless[:40].any() and noiseless[50:].all()  # step i acts at progress_remaining 1 - i / 100
