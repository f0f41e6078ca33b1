"""Callbacks for TD3.learn: any callable of the model, run after every environment step.

A callback sees the whole training state (model.num_steps, model.episodes, model.memory, ...)
and stops training by returning False (True or None go on: goes_on); `learn(callback=[a, b])` runs each of a list
in turn:

    model.learn(50_000, callback=lambda m: m.episodes < 100)   # stop at the model's 100th episode

A callback logs a metrics row with model.log_metrics(row): learn's log, TensorBoard and the progress bar get it.
learn's other arguments are checked here too, before it takes a step, and what it says when it is interrupted.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Sequence

import numpy as np
import torch

from .checkpoint import check_checkpoint_path
from .config import refuse_arguments
from .counts import check_flag, is_count
from .failures import warn


def check_learn_arguments(learn: Callable, total_timesteps, progress_bar, others: dict) -> int:
    """learn's total_timesteps as an int, once it, progress_bar and learn's `others` (keywords it does not name)
    are checked: of those only Stable-Baselines3's reset_num_timesteps=False, which is what learn does, passes."""
    refuse_arguments(learn, others, reset_num_timesteps=False)
    if not is_count(total_timesteps):
        whole = isinstance(total_timesteps, float) and total_timesteps.is_integer() and total_timesteps >= 0
        hint = f" (a float): write {int(total_timesteps):_}" if whole else ""
        raise ValueError(f"total_timesteps must be a non-negative integer, got {total_timesteps!r}{hint}.")
    check_flag("learn", "progress_bar", progress_bar)
    return int(total_timesteps)


class NoUpdateWarning(UserWarning):
    """learn's warning that it ends before learning_starts (the command line says it in its own terms)."""


def warn_if_no_update(num_steps: int, end: int, learning_starts: int) -> None:
    """A warning where an agent's first learn call ends before learning_starts: it would only act at random.
    learn(learning_starts), the random steps that fill the memory and no more (as the notebooks take them), is
    no accident and gets no warning."""
    if num_steps == 0 and 0 < end < learning_starts:
        warn(
            f"learn({end}) ends before learning_starts = {learning_starts} (the steps of random actions that fill the"
            " replay memory first): no update runs, so the actor is not trained. Take more steps, or set a smaller"
            " learning_starts (TD3Config's default, 10,000, is the paper's for HalfCheetah and Ant;"
            " Stable-Baselines3's is 100).",
            NoUpdateWarning,
        )


def _signature(function: Callable) -> inspect.Signature | None:
    """The signature of `function`, or None where Python cannot tell it (some built-in functions)."""
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


def _takes_one_argument(signature: inspect.Signature) -> bool:
    try:
        signature.bind(None)
    except TypeError:
        return False
    return True


def goes_on(callback: Callable, answer) -> bool:
    """A callback's answer: False stops training, as in Stable-Baselines3 (numpy's and torch's False too, a
    comparison's result); True goes on, and so does None (a function that returns nothing, which would stop
    Stable-Baselines3). Anything else, a count say, is a TypeError, never read as a side."""
    if answer is None:
        return True
    one_truth = isinstance(answer, (bool, np.bool_))
    one_truth |= isinstance(answer, torch.Tensor) and answer.dtype == torch.bool and answer.numel() == 1
    one_truth |= isinstance(answer, np.ndarray) and answer.dtype == np.bool_ and answer.size == 1
    if one_truth:
        return bool(answer)
    raise TypeError(
        f"A callback returns False to stop training, and True or None to go on; {callback!r:.80} returned"
        f" {answer!r:.80}."
    )


def learn_interrupted(step: int, end: int, within_a_step: bool = False) -> KeyboardInterrupt:
    """The KeyboardInterrupt that learn raises for a notebook's interrupt: where training stands, and how to finish;
    `within_a_step` where a second interrupt stopped it at once, inside the step after `step`."""
    left = end - step
    if within_a_step:
        return KeyboardInterrupt(
            f"learn stopped at once, inside step {step + 1:,} of {end:,} (a second interrupt), which it may have left"
            " half done: go on from your last checkpoint (TD3.load) rather than with this agent."
        )
    return KeyboardInterrupt(
        f"learn stopped at step {step:,} of {end:,}: call learn again with {left} as total_timesteps, and this call's"
        f" other arguments (log, callback, ...), for the {left:,} steps left. A log made anew keeps the rows written"
        f" so far as MetricsCSV(path, resume_from_step={step})."
    )


def callbacks_of(callback, log, eval_freq, eval_episodes) -> list[Callable]:
    """learn's callbacks, in the order they run: an EvalCallback where eval_freq is not 0, then `callback` (one,
    a list, or None); a TypeError for a callback or log that is no function."""
    callbacks = list(callback) if isinstance(callback, Sequence) else [callback] if callback is not None else []
    not_callable = [f for f in callbacks if not callable(f)] + ([log] if log is not None and not callable(log) else [])
    if not_callable:
        stable_baselines3 = hasattr(not_callable[0], "init_callback")  # its BaseCallback objects
        raise TypeError(
            f"callback and log take functions (callback(model), log(row)), or a list of callbacks; got"
            f" {not_callable[0]!r}."
            + (" Stable-Baselines3's callback objects do not plug in here: write a function of the model, run after"
               " every step, that returns False to stop (StopTrainingOnMaxEpisodes(100) is"
               " lambda m: m.episodes < start + 100, with start = model.episodes before learn; EvalCallback is"
               " td3_steps.EvalCallback, and StopTrainingOnRewardThreshold(-200) on its new best is"
               " callback=[best, lambda m: best.best_mean_return < -200] with best = EvalCallback(...))."
               if stable_baselines3 else "")
        )  # fmt: skip
    for function, name, argument in [*((f, "callback", "model") for f in callbacks), (log, "log", "row")]:
        signature = _signature(function) if function is not None else None
        if signature is not None and not _takes_one_argument(signature):
            raise TypeError(
                f"learn calls {name}({argument}), with one argument, but {function!r:.80} takes {signature}: give it"
                f" one parameter, as in def {name}({argument}): ..."
            )
    if not (is_count(eval_freq) and eval_freq == 0):  # 0: no evaluation; anything else EvalCallback checks
        callbacks.insert(0, EvalCallback(eval_freq, eval_episodes))
    else:  # unused without evaluations, but a mistake all the same
        check_eval_episodes(eval_episodes)
    return callbacks


def check_eval_episodes(n_episodes) -> None:
    if not is_count(n_episodes, 1):
        raise ValueError(f"the evaluation's number of episodes must be a positive integer, got {n_episodes!r}.")


def evaluation_row(model, n_episodes: int) -> dict:
    """Evaluate `model` over `n_episodes` episodes (TD3.evaluate) and give the metrics row that logs it: step,
    eval_return (the mean return) and eval_return_std. EvalCallback and the command line's final evaluation use it."""
    mean, std = model.evaluate(n_episodes)
    return {"step": model.num_steps, "eval_return": mean, "eval_return_std": std}


class EvalCallback:
    """Every `eval_freq` steps, evaluate on `n_episodes` deterministic episodes and keep the best model.

    Each evaluation is logged as a metrics row (step, eval_return, eval_return_std) and appended to
    `evaluations`; `learn(eval_freq=..., eval_episodes=...)` is this callback. The best mean return
    so far is `best_mean_return` (at step `best_step`: the latest on ties, as train's best_policy.pt). When an
    evaluation is the best, the agent is saved to `best_model_path` as a checkpoint directory (without the replay memory):
    TD3.load(best_model_path) gives it back, to evaluate, ship (save_policy) or train on (learn first gathers
    learning_starts transitions anew, acting with the loaded actor). It never stops training.
    """

    def __init__(self, eval_freq: int, n_episodes: int = 10, best_model_path=None, **others):
        refuse_arguments(EvalCallback, others)
        if not is_count(eval_freq, 1):
            habit = not isinstance(eval_freq, numbers.Real)  # an eval_env, first as Stable-Baselines3 takes it
            raise ValueError(
                f"eval_freq must be a positive number of steps (learn: 0 for none), got {eval_freq!r:.80}."
                + (" EvalCallback(eval_freq, n_episodes, best_model_path) evaluates in its own copy of the model's"
                   " environment: it takes no eval_env, as Stable-Baselines3's does." if habit else "")
            )  # fmt: skip
        check_eval_episodes(n_episodes)
        if best_model_path is not None:
            check_checkpoint_path(best_model_path)  # now, not at the first improvement, hours into training
        self.eval_freq, self.n_episodes, self.best_model_path = int(eval_freq), int(n_episodes), best_model_path
        self.best_mean_return = -math.inf
        self.best_step: int | None = None
        self.evaluations: list[dict] = []

    def __call__(self, model) -> bool:
        """`model`: the TD3 agent, which calls this after every step (this module sits below td3_steps.agent)."""
        if model.num_steps % self.eval_freq != 0:
            return True
        row = evaluation_row(model, self.n_episodes)
        self.evaluations.append(row)
        model.log_metrics(dict(row))  # a copy: a log may add columns to its row
        mean = row["eval_return"]
        if mean >= self.best_mean_return:  # the latest of equals: metrics.best_evaluation_step's rule, train's
            self.best_mean_return, self.best_step = mean, model.num_steps
            if self.best_model_path is not None:
                model.save(self.best_model_path)
        return True
