"""td3_steps.seeding: each purpose (acting, updates, training, validation and test episodes, pretraining) draws from
a stream of its own, derived from the one seed."""

import pytest
import torch

from td3_steps import TD3
from td3_steps.seeding import (
    ACTING,
    EVAL_EPISODES,
    MAX_SEED,
    PRETRAINING,
    TEST_EPISODES,
    TRAIN_EPISODES,
    UPDATES,
    check_seed,
    derived_seed,
    run_seed,
)


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


# ---------------------------------------------------------------- found by mutating the code (each fails on its mutant)
def test_the_streams_and_the_seeds_derived_from_them_are_fixed():
    """The stream numbers and derived_seed's values are part of every seeded run and of the evaluation protocol's
    test episodes: a stream renumbered, SeedSequence given (seed, stream, index) in another order, or another
    default index made other runs of every seed, where the tests compared only whether two seeds differ."""
    streams = (ACTING, UPDATES, TRAIN_EPISODES, EVAL_EPISODES, PRETRAINING, TEST_EPISODES)
    assert streams == (0, 1, 2, 3, 4, 5)
    seeds = [2968811710, 3964924996, 3141116543, 2613022947, 1874364848, 161328693]
    assert [derived_seed(0, stream) for stream in streams] == seeds
    assert [derived_seed(3, 2, 1), derived_seed(2**63 - 1, 5, 10**6)] == [1760858510, 3600492141]
    assert derived_seed(3, 2) == derived_seed(3, 2, 0)


def test_the_largest_seed_is_the_largest_signed_64_bit_integer():
    """2**63 - 1 is taken and 2**63 refused (a seed is an int64 wherever it is stored), though torch.manual_seed would
    take it: a MAX_SEED of 2**64 - 1 let it through."""
    assert check_seed(2**63 - 1) == 2**63 - 1
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1, got 9223372036854775808\."):
        check_seed(2**63)


def test_seed_none_draws_a_seed_from_all_of_its_63_bits():
    """A drawn seed is uniform over [0, 2**63): 32 bits would give one of 4 billion runs, 64 a seed that check_seed
    refuses half the time. 64 draws all below 2**62 happen once in 2**64."""
    drawn = [run_seed(None) for _ in range(64)]
    assert all(0 <= seed <= MAX_SEED for seed in drawn) and max(drawn) >= 2**62
