"""Callbacks for TD3.learn: any callable of the model, run after every environment step.

A callback sees the whole training state (model.num_steps, model.episodes, model.memory, ...)
and stops training by returning False:

    model.learn(50_000, callback=lambda m: m.episodes < 100)   # stop after 100 episodes
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .agent import TD3


class EvalCallback:
    """Every `eval_freq` steps, evaluate on `n_episodes` deterministic episodes and keep the best model.

    The best mean return so far is `best_mean_return` (at step `best_step`); each evaluation is
    appended to `evaluations` as a metrics row (step, eval_return, eval_return_std). When the mean
    return beats the best, the agent is saved to `best_model_path` as a checkpoint directory
    (without the replay memory): TD3.load(best_model_path) gives it back, to evaluate, ship
    (save_policy) or train on. It never stops training.
    """

    def __init__(self, eval_freq: int, n_episodes: int = 10, best_model_path=None):
        if not isinstance(eval_freq, int) or eval_freq < 1:
            raise ValueError(f"EvalCallback: eval_freq must be a positive number of steps, got {eval_freq!r}.")
        if not isinstance(n_episodes, int) or n_episodes < 1:
            raise ValueError(f"EvalCallback: n_episodes must be a positive integer, got {n_episodes!r}.")
        self.eval_freq, self.n_episodes, self.best_model_path = eval_freq, n_episodes, best_model_path
        self.best_mean_return = -math.inf
        self.best_step: int | None = None
        self.evaluations: list[dict] = []

    def __call__(self, model: TD3) -> bool:
        if model.num_steps % self.eval_freq != 0:
            return True
        mean, std = model.evaluate(self.n_episodes)
        self.evaluations.append({"step": model.num_steps, "eval_return": mean, "eval_return_std": std})
        if mean > self.best_mean_return:
            self.best_mean_return, self.best_step = mean, model.num_steps
            if self.best_model_path is not None:
                model.save(self.best_model_path)
        return True
