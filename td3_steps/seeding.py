"""Seeds: one run seed, derived into independent streams, one per purpose.

Every random draw of a run after the networks' initial weights (which `torch.manual_seed(seed)` draws)
comes from `derived_seed(seed, stream, index)` with a stream of this table, so that acting, updates,
training episodes, evaluation and pretraining never share a sequence,
and the fresh episodes of the evaluation protocol (scripts/evaluate_agents.py) are never seen in
training or in the periodic evaluation that selects the best actor.
"""

from __future__ import annotations

import secrets

import numpy as np

from .counts import is_count

ACTING = 0  # exploration: random warm-up actions and the acting noise (Policy.explore)
UPDATES = 1  # batch sampling and target smoothing noise (steps 4 and 6)
TRAIN_EPISODES = 2  # the reset seed of each training episode
EVAL_EPISODES = 3  # the periodic evaluation's episodes: the validation set that selects the best actor
PRETRAINING = 4  # behaviour cloning's split and shuffles
TEST_EPISODES = 5  # the evaluation protocol's fresh episodes: never used to select or tune


MAX_SEED = 2**63 - 1  # a signed 64-bit integer (torch.manual_seed would take up to 2**64 - 1): an int64 anywhere


def check_seed(seed) -> int:
    """A run seed: an integer from 0 to MAX_SEED (numpy integers too), else a ValueError that says so."""
    if not (is_count(seed) and seed <= MAX_SEED):
        raise ValueError(f"seed must be an integer from 0 to 2**63 - 1, got {seed!r}.")
    return int(seed)


def run_seed(seed) -> int:
    """A run's seed: `seed` checked (check_seed), or for None one drawn from the operating system's entropy, where
    Stable-Baselines3's seed=None leaves a run unseeded: the run is new each time, and model.seed says how to make
    it again."""
    if seed is None:
        return secrets.randbits(63)
    try:
        return check_seed(seed)
    except ValueError as error:
        raise ValueError(f"{str(error)[:-1]}, or None for one drawn at random.") from None


def derived_seed(seed: int, stream: int, index: int = 0) -> int:
    """A 32-bit seed for (seed, stream, index), independent across streams and indices."""
    return int(np.random.SeedSequence([seed, stream, index]).generate_state(1)[0])
