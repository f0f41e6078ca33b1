"""td3_steps.seeding: each purpose (acting, updates, training, validation and test episodes, pretraining) draws from
a stream of its own, derived from the one seed."""

import torch

from td3_steps import TD3
from td3_steps.seeding import ACTING, EVAL_EPISODES, PRETRAINING, TEST_EPISODES, TRAIN_EPISODES, UPDATES, derived_seed


def test_every_purpose_draws_from_a_stream_of_its_own(toy_env, toy_config):
    """Training episodes, the validation episodes (periodic evaluation) and the test episodes (evaluation protocol)
    start from seeds that no other of them uses, each episode its own; acting and updates start apart."""

    class Recording(toy_env):
        seeds = []  # on the class: an evaluation copy of the env records here too

        def reset(self, *, seed=None, options=None):
            Recording.seeds.append(seed)
            return super().reset(seed=seed, options=options)

    model = TD3(Recording(), toy_config, seed=0, device="cpu")
    assert not torch.equal(model.act_rng.get_state(), model.update_rng.get_state())
    used = {}
    for name, run in [
        ("training", lambda: model.learn(15)),  # 3 episodes of 5 steps
        ("validation", lambda: model.policy.episode_returns(3)),
        ("test", lambda: model.policy.episode_returns(3, stream=TEST_EPISODES)),
    ]:
        Recording.seeds.clear()
        run()
        used[name] = [seed for seed in Recording.seeds if seed is not None]
        assert len(used[name]) == 3 and len(set(used[name])) == 3, (name, used[name])
    assert not set(used["training"]) & set(used["validation"])
    assert not set(used["test"]) & (set(used["training"]) | set(used["validation"]))
    streams = (ACTING, UPDATES, TRAIN_EPISODES, EVAL_EPISODES, PRETRAINING, TEST_EPISODES)
    assert len({derived_seed(0, stream) for stream in streams}) == len(streams)


def test_seed_none_draws_a_seed_that_makes_the_run_again(small_config, params, same):
    """Stable-Baselines3's seed=None (an unseeded run) was refused; it draws a run seed, which model.seed records."""
    a = TD3("Pendulum-v1", small_config, seed=None, device="cpu")
    b = TD3("Pendulum-v1", small_config, seed=None, device="cpu")
    assert a.seed != b.seed and 0 <= a.seed < 2**63
    again = TD3("Pendulum-v1", small_config, seed=a.seed, device="cpu")
    assert same(params(a.learn(150).actor), params(again.learn(150).actor))
