"""TD3Config: every hyperparameter of TD3 in one dataclass, and the named presets.

Field names follow Stable-Baselines3 where it has one. Defaults are the TD3 paper's
(Fujimoto et al. 2018, section 6.1 and its Table 3): 400-300 networks, Adam at 1e-3,
batch 100, tau 0.005, target noise N(0, 0.2) clipped to 0.5, policy delay 2, exploration
N(0, 0.1) (the paper gives standard deviations, not variances) and 10,000 steps of random actions
before learning starts (the paper's for HalfCheetah and Ant; 1,000 for its other tasks). The fields
beyond the course (activation, layer_norm, features extractors, noise type, random_exploration,
train_freq in episodes, schedules) default to the paper's behaviour.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any

import numpy as np

from .counts import is_count, is_flag, is_number, is_sizes
from .schedules import SCHEDULES, schedule_from_dict

SCHEDULABLE = ("learning_rate", "exploration_noise")  # fields that take a number or a schedule
TRAIN_FREQ_UNITS = ("step", "episode")
MAX_LEARNING_RATE = 1.0  # Adam moves each weight by about the learning rate a step: beyond 1 no network trains
LEARNING_RATE = "a positive number at most 1, e.g. 1e-3"
SCHEDULE_TYPES = tuple(SCHEDULES.values())
# The names the string fields take: the config checks them, networks builds its activation from ACTIVATIONS, and
# the command line offers CHOICES. The config sits below the pieces it configures.
ACTIVATIONS = {"relu": "ReLU", "tanh": "Tanh", "elu": "ELU", "leaky_relu": "LeakyReLU", "gelu": "GELU"}  # torch.nn
NOISE_TYPES = ("normal", "ornstein-uhlenbeck")
OU_DT = 1e-2  # the Ornstein-Uhlenbeck process's time step per action: x shrinks by the factor 1 - theta * dt
FEATURES_EXTRACTORS = ("auto", "flatten", "nature_cnn")
CHOICES = {"activation": tuple(ACTIVATIONS), "noise_type": NOISE_TYPES, "features_extractor": FEATURES_EXTRACTORS}


class ConfigError(ValueError):
    """A TD3Config field holds a value TD3 cannot use; the message names the field."""


# Stable-Baselines3's names that td3_steps has not (TD3's arguments that are no TD3Config field, learn's
# arguments, a model's methods and attributes), and what does their work here.
STABLE_BASELINES3_ONLY = {
    "policy_kwargs": "net_arch, activation, layer_norm and n_critics are fields of their own",
    "action_noise": "exploration_noise, sigma as a fraction of each action's half-range, and noise_type",
    "verbose": "learn(progress_bar=True) shows the training, learn(log=print) each episode's numbers",
    "log_interval": "learn(log=print) receives every episode's row",
    "tb_log_name": "TD3(env, tensorboard_log=DIR) writes the rows into DIR",
    "reset_num_timesteps": "learn goes on from where the run is (num_timesteps, the delay's count, the schedules),"
    " as reset_num_timesteps=False does; a new model counts from 0",
    "get_env": "model.env, the gymnasium environment itself (no VecEnv)",
    "replay_buffer": "model.memory, a td3_steps.ReplayMemory",
    "replay_buffer_class": "model.memory is a td3_steps.ReplayMemory, sampled uniformly; buffer_size sets its capacity",
    "replay_buffer_kwargs": "buffer_size sets the capacity of model.memory, a td3_steps.ReplayMemory",
    "save_replay_buffer": "model.save_replay_memory(path)",
    "custom_objects": "TD3.load(path, config=...) gives other hyperparameters (the networks' settings as saved)",
    "force_reset": "load goes on with the episode in progress, replayed, as force_reset=False does; model.set_env(env)"
    " starts a new one",
    "load_replay_buffer": "model.load_replay_memory(path)",
    "set_random_seed": "the seed is given when the model is made, TD3(env, seed=...)",
    "logger": "learn(log=...) receives every row, and TD3(env, tensorboard_log=DIR) writes them for TensorBoard",
    "eval_env": "none: EvalCallback evaluates in its own copy of the model's environment",
    "n_eval_episodes": "n_episodes",
    "best_model_save_path": "best_model_path, the checkpoint directory of the best model",
}


def unknown_names(names, known) -> str:
    """`names`, each with the name of `known` a misspelling is nearest, or what does the work of a
    Stable-Baselines3 name here."""
    said = []
    for name in sorted(names, key=str):
        if name in STABLE_BASELINES3_ONLY:
            said.append(f"{name!r} (Stable-Baselines3's; here {STABLE_BASELINES3_ONLY[name]})")
        else:
            close = difflib.get_close_matches(name, known, 1, 0.75) if isinstance(name, str) else []
            said.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return ", ".join(said)


def refuse_arguments(function: Callable, others: dict, **what_it_does) -> None:
    """A TypeError for the keywords in `others` that `function` (learn, TD3.load) does not name: the nearest of its
    own for a misspelling, and what does the work of a Stable-Baselines3 argument here. A keyword of `what_it_does`
    given that value, what `function` does anyway (learn's reset_num_timesteps=False), passes."""
    others = {
        name: value for name, value in others.items() if name not in what_it_does or value is not what_it_does[name]
    }
    if others:
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        named = [name for name, p in inspect.signature(function).parameters.items() if p.kind in kinds]
        owner = getattr(function, "__self__", None)  # a variant's learn or load: named by its class, not TD3
        owner = owner if owner is None or isinstance(owner, type) else type(owner)
        called = function.__qualname__ if owner is None else f"{owner.__name__}.{function.__name__}"
        raise TypeError(f"{called}() takes no argument {unknown_names(others, named)}.")


def _no_such_fields(names, config_class: type[TD3Config]) -> ConfigError:
    """The error for keywords that are no field of `config_class` (TD3Config, or a variant's subclass of it)."""
    fields = field_names(config_class)
    return ConfigError(
        f"{config_class.__name__} has no field {unknown_names(names, fields)}. Its fields: {', '.join(fields)}."
    )


@dataclass(frozen=True)
class TD3Config:
    """Hyperparameters of TD3. Noise scales are fractions of each action dimension's half-range.

    A variant of TD3 (a subclass overriding train_step) keeps hyperparameters of its own in a frozen dataclass
    subclass of this one, named as its config_class: its fields are taken, saved and loaded as these are (check their
    values in its __post_init__, after super().__post_init__()).
    """

    def __new__(cls, *args, **fields):
        """A keyword that is no field, or a variant's field without a default left out, gets a ConfigError that
        names it, as from_dict and TD3(env, ...) give it, rather than the dataclass's bare TypeError."""
        unknown = not_fields(fields, cls)
        if unknown:
            raise _no_such_fields(unknown, cls)
        given = set(field_names(cls)[: len(args)]) | set(fields)
        missing = [name for name in required_fields(cls) if name not in given]
        if missing:
            raise ConfigError(
                f"{cls.__name__} needs {', '.join(missing)}, which {'has' if len(missing) == 1 else 'have'} no"
                f" default: give {'it' if len(missing) == 1 else 'them'}, {cls.__name__}({missing[0]}=...)."
            )
        return super().__new__(cls)

    def __getnewargs_ex__(self) -> tuple[tuple, dict]:
        """copy, deepcopy and pickle make a config with __new__ alone, then put its fields back: they give it the
        fields without a default, which __new__ asks for (a variant's config, and with it its agent, is copied)."""
        return (), {name: getattr(self, name) for name in required_fields(type(self))}

    learning_rate: float | Callable[[float], float] = 1e-3
    """Adam step size, the same for the actor and the critics, in (0, 1]; or a schedule of progress_remaining
    (td3_steps.schedules.LinearSchedule, or any callable)."""
    buffer_size: int = 1_000_000
    """Capacity of the replay memory (step 1); the oldest transition is overwritten first."""
    learning_starts: int = 10_000
    """Environment steps of uniformly random actions before the first update."""
    batch_size: int = 100
    """Transitions per sampled batch: N in the paper and step 4, B in shapes such as (B, 1)."""
    tau: float = 0.005
    """Polyak coefficient: theta' <- tau * theta + (1 - tau) * theta' (steps 14 and 15)."""
    gamma: float = 0.99
    """Discount factor in the Bellman target (step 9)."""
    train_freq: int | tuple[int, str] = 1
    """Environment steps between two rounds of updates; or (n, "step"), or (n, "episode"): a round at
    the end of every n-th episode."""
    gradient_steps: int = 1
    """Critic updates per round; -1: one per environment step collected since the last round
    (steps before learning_starts do not count)."""
    policy_delay: int = 2
    """d: the actor and the targets move once every d critic updates (step 13)."""
    target_policy_noise: float = 0.2
    """sigma of the target smoothing noise (step 6; sigma~ in the paper's Algorithm 1), relative to the half-range."""
    target_noise_clip: float = 0.5
    """c: the smoothing noise is clipped to [-c, c] times the half-range (step 6)."""
    exploration_noise: float | Callable[[float], float] = 0.1
    """sigma of the acting (exploration) noise, relative to the half-range; or a schedule of progress_remaining."""
    noise_type: str = "normal"
    """Acting noise: "normal" (Gaussian, the paper's) or "ornstein-uhlenbeck" (DDPG's); see td3_steps.noise."""
    ou_theta: float = 0.15
    """theta, the pull back to 0 of the Ornstein-Uhlenbeck noise: >= 0 and below 2 / dt = 200, beyond which the noise
    would grow without bound (td3_steps.noise)."""
    random_exploration: float = 0.0
    """Probability of a uniformly random action instead of pi(s) + noise after learning_starts."""
    net_arch: tuple[int, ...] = (400, 300)
    """Hidden layer sizes of the actor and of each critic."""
    activation: str = "relu"
    """Activation of the hidden layers: relu, tanh, elu, leaky_relu or gelu."""
    layer_norm: bool = False
    """A LayerNorm after each hidden Linear, before its activation (Stable-Baselines' LnMlpPolicy)."""
    features_extractor: str = "auto"
    """What the networks read first: "flatten", "nature_cnn" (images), or "auto" (nature_cnn for images)."""
    share_features_extractor: bool = False
    """One features extractor for the actor and the critics, trained by the critic loss alone."""
    n_critics: int = 2
    """Critics (and target critics); the target takes the minimum over all of them (step 8).
    1 gives DDPG's single-critic target."""
    mixed_precision: bool = False
    """Run the built-in MLPs' hidden layers under bfloat16 autocast; weights, losses and targets stay fp32 (a custom
    actor_net or critic_net, and the CNN encoder, run as they are)."""

    def __post_init__(self) -> None:
        # Every field is checked for its type first, then its range: a wrong type (a string, None, a bool
        # where a number goes) is a ConfigError naming the field, never a TypeError from a comparison.
        # A numpy scalar (a sweep over np.arange) stands for the Python value it holds, as JSON stores it.
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, _python_value(getattr(self, f.name)))
        _check(self, "net_arch", _is_sequence, NET_ARCH)
        object.__setattr__(self, "net_arch", tuple(_python_value(n) for n in self.net_arch))
        if isinstance(self.train_freq, (list, tuple)):  # JSON has no tuples
            object.__setattr__(self, "train_freq", tuple(_python_value(v) for v in self.train_freq))
        _check_schedulable(self, "learning_rate", lambda v: 0 < v <= MAX_LEARNING_RATE, LEARNING_RATE, end=0.0)
        _check_int(self, "buffer_size", 1)
        _check_int(self, "learning_starts", 0)
        _check_int(self, "batch_size", 1)
        _check(
            self,
            "batch_size",
            lambda v: v <= self.buffer_size,
            f"at most buffer_size ({self.buffer_size}): a batch is drawn from the memory",
        )
        _check_number(self, "tau", lambda v: 0 < v <= 1, "in (0, 1]; the paper uses 0.005")
        _check_number(self, "gamma", lambda v: 0 <= v <= 1, "in [0, 1]; the paper uses 0.99")
        _check(
            self,
            "train_freq",
            lambda v: (
                is_count(v, 1)
                or (isinstance(v, tuple) and len(v) == 2 and is_count(v[0], 1) and v[1] in TRAIN_FREQ_UNITS)
            ),
            'an integer >= 1, or (n, "step") or (n, "episode")',
        )
        _check(self, "gradient_steps", lambda v: is_count(v, 1) or (is_count(v, -1) and v == -1),
               "an integer >= 1, or -1 (as many as environment steps collected)")  # fmt: skip
        _check_int(self, "policy_delay", 1)
        for name in ("target_policy_noise", "target_noise_clip"):
            _check_number(self, name, lambda v: v >= 0, ">= 0 (a fraction of the half-range)")
        _check_schedulable(
            self, "exploration_noise", lambda v: v >= 0, "a finite number >= 0 (a fraction of the half-range)"
        )
        _check_number(self, "ou_theta", lambda v: 0 <= v < 2 / OU_DT, f">= 0 and below {2 / OU_DT:g}, e.g. 0.15")
        _check_number(self, "random_exploration", lambda v: 0 <= v <= 1, "in [0, 1] (a probability)")
        _check(self, "net_arch", is_sizes, NET_ARCH)
        for name, choices in CHOICES.items():
            is_choice = partial(_is_choice, choices=choices)
            _check(self, name, is_choice, "one of " + ", ".join(map(repr, choices)))
        _check_int(self, "n_critics", 1)
        for name in ("layer_norm", "share_features_extractor", "mixed_precision"):
            _check(self, name, is_flag, "True or False")
            object.__setattr__(self, name, bool(getattr(self, name)))  # 1 stored as True (JSON's true)

    def train_frequency(self) -> tuple[int, str]:
        """train_freq as (n, unit): a round of updates every n "step"s or every n "episode"s."""
        return (self.train_freq, "step") if isinstance(self.train_freq, int) else self.train_freq

    def replace(self, **changes) -> TD3Config:
        """A copy with some fields changed (and checked again)."""
        unknown = not_fields(changes, type(self))
        if unknown:
            raise _no_such_fields(unknown, type(self))
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """The fields as JSON values. A schedule becomes its to_dict(); a plain callable, which JSON
        cannot hold, becomes {"callable": its repr}, and from_dict then asks for the config again."""
        data = {name: getattr(self, name) for name in field_names(type(self))}
        data["net_arch"] = list(self.net_arch)
        if isinstance(self.train_freq, tuple):
            data["train_freq"] = list(self.train_freq)
        for name in SCHEDULABLE:
            value = data[name]
            if callable(value):
                data[name] = value.to_dict() if isinstance(value, SCHEDULE_TYPES) else {"callable": repr(value)}
        return data

    @classmethod
    def from_dict(cls, data: dict) -> TD3Config:
        if not isinstance(data, dict):
            raise ConfigError(
                f"{cls.__name__}.from_dict takes a dict of fields, as to_dict gives; got {type(data).__name__}."
            )
        unknown = not_fields(data, cls)
        if unknown:
            raise _no_such_fields(unknown, cls)
        data = dict(data)
        for name in SCHEDULABLE:
            value = data.get(name)
            if isinstance(value, dict) and "callable" in value:
                required = required_fields(cls)
                default = cls(**{k: data[k] for k in required if k in data}).to_dict()
                kept = ", ".join(
                    f"{k}={_as_code(v)}" for k, v in data.items() if k != name and (v != default[k] or k in required)
                )
                raise ConfigError(
                    f"{cls.__name__}.{name} was a Python callable ({value['callable']}), which a checkpoint cannot"
                    f" store: pass the config it was trained with again, the callable included, e.g."
                    f" TD3.load(path, config={cls.__name__}({name}=..., {kept or '...'}))."
                )
            if isinstance(value, dict):
                try:
                    data[name] = schedule_from_dict(value)
                except (KeyError, TypeError, ValueError) as error:
                    raise ConfigError(
                        f"TD3Config.{name} = {value!r} is not a schedule td3_steps knows: {error}"
                    ) from None
        computed = {f.name for f in dataclasses.fields(cls) if not f.init}  # to_dict has them; __post_init__ sets them
        return cls(**{name: value for name, value in data.items() if name not in computed})

    @classmethod
    def from_preset(cls, name: str) -> TD3Config:
        """The config of a named preset (see PRESETS)."""
        return get_preset(name).config


def config_of(config: TD3Config | None, fields: dict, config_class: type[TD3Config] = TD3Config) -> TD3Config:
    """`config`, or a `config_class` (the agent's: TD3Config, or a variant's subclass of it) of the `fields` given
    as keyword arguments (TD3(env, tau=...)); not both."""
    if config is not None and not isinstance(config, config_class):
        name = config_class.__name__
        from_base = (
            f" (or {name}.from_dict(config.to_dict()), from a TD3Config)" if config_class is not TD3Config else ""
        )
        raise TypeError(f"config must be a {name}, got {type(config).__name__}: use {name}(...){from_base}.")
    extra = [] if config is None else not_fields(field_names(type(config)), config_class)
    if extra:  # a variant's config given to TD3 itself: saved with the checkpoint, which its load would refuse
        raise TypeError(
            f"config is a {type(config).__name__}, whose {', '.join(extra)} no {config_class.__name__} has: this"
            " agent would not read it, and its checkpoints would not load. Give it to the variant of TD3 whose"
            f" config_class is {type(config).__name__}, or use {config_class.__name__}(...) here."
        )
    if config is not None and fields:
        raise TypeError(
            f"TD3 got config= and TD3Config fields as keyword arguments ({', '.join(fields)}): give the"
            f" hyperparameters once, e.g. TD3(env, config=config.replace({next(iter(fields))}=...))."
        )
    return config if config is not None else config_class(**fields)  # a variant's field may have no default


def field_names(config_class: type[TD3Config] | None = None) -> list[str]:
    """The fields of TD3Config, or of `config_class`, a variant's subclass of it."""
    return [f.name for f in dataclasses.fields(config_class or TD3Config)]


def not_fields(names: Iterable, config_class: type[TD3Config]) -> list:
    """The `names`, in their order, that are no field of `config_class`."""
    fields = set(field_names(config_class))
    return [name for name in names if name not in fields]


def required_fields(config_class: type[TD3Config]) -> list[str]:
    """The fields of `config_class` without a default that its __init__ takes: none of TD3Config's; a variant's
    subclass may have some (a field with init=False is set by its __post_init__, not given)."""
    return [
        f.name
        for f in dataclasses.fields(config_class)
        if f.init and f.default is f.default_factory is dataclasses.MISSING
    ]


@cache
def field_docs() -> dict[str, str]:
    """Each field's documentation: the string literal under it in TD3Config's source, as one line.

    The command line's flags take their help from it (as CleanRL's tyro reads a dataclass's docstrings).
    """
    (cls,) = ast.parse(inspect.getsource(TD3Config)).body
    docs = {}
    for node, after in zip(cls.body, cls.body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


NET_ARCH = "a non-empty sequence of positive integer layer sizes, e.g. (400, 300)"


def _is_choice(value, choices: tuple[str, ...]) -> bool:
    return isinstance(value, str) and value in choices  # a numpy array's `in` is no bool: it raised


def _check(config: TD3Config, name: str, ok: Callable[[Any], bool], expected: str) -> None:
    """Raise a ConfigError naming the field and what it must be, unless ok(value)."""
    value = getattr(config, name)
    if not ok(value):
        raise ConfigError(f"TD3Config.{name} = {value!r:.80} is invalid: it must be {expected}.")


def _as_code(saved) -> str:
    """A saved field's value as Python that TD3Config takes: a schedule as its class, a callable as ..."""
    if isinstance(saved, dict):
        try:
            return "..." if "callable" in saved else repr(schedule_from_dict(saved))
        except (KeyError, TypeError, ValueError):  # not a schedule: from_dict says so once this one is passed
            return "..."
    return repr(saved)


def _python_value(value):
    """A numpy scalar's Python value (np.int64(256) -> 256); anything else as it is. A float is a Python float even
    from np.longdouble, whose .item() stays a longdouble (which JSON cannot write)."""
    if isinstance(value, np.floating):
        return float(value)
    return value.item() if isinstance(value, np.generic) else value


def _is_sequence(value) -> bool:
    """Values in an order (a set has none: its layer sizes would come in any order; a 0-d array or tensor holds one
    number, which does not iterate)."""
    return (
        isinstance(value, Iterable)
        and not isinstance(value, (str, bytes, dict, set, frozenset))
        and getattr(value, "ndim", 1) != 0
    )


def _check_int(config: TD3Config, name: str, minimum: int) -> None:
    _check(config, name, lambda v: is_count(v, minimum), f"an integer >= {minimum}")


def _check_number(config: TD3Config, name: str, ok: Callable[[float], bool], expected: str) -> None:
    """A finite int or float (not a bool) that passes `ok`."""
    _check(config, name, lambda v: is_number(v) and ok(v), f"a finite number (int or float) {expected}")


def _check_schedulable(
    config: TD3Config, name: str, ok: Callable[[float], bool], expected: str, end: float | None = None
) -> None:
    """A number that passes `ok`, or a schedule whose values at the start and the end of training pass it; with
    `end`, the schedule may also end at that value (a learning rate that decays to 0 as training ends, as
    Stable-Baselines3's linear_schedule: `lambda progress_remaining: progress_remaining * 1e-3`)."""
    value = getattr(config, name)
    if not callable(value):
        _check(config, name, lambda v: is_number(v) and ok(v), f"{expected}, or a schedule of such values")
        return
    try:
        start, last = value(1.0), value(0.0)
        before_last = value(1e-6) if end is not None else start  # only the very end may be `end`
    except Exception as error:  # a callable of the wrong signature, or one that fails
        raise ConfigError(
            f"TD3Config.{name} = {value!r} is invalid: a schedule is called with progress_remaining (1.0 at the"
            f" start of training, 0.0 at the end) and returns a number, but calling it raised"
            f" {type(error).__name__}: {error}"
        ) from error
    _check(
        config,
        name,
        lambda _: (
            all(is_number(v) and ok(v) for v in (start, before_last)) and is_number(last) and (ok(last) or last == end)
        ),
        f"a schedule whose values are each {expected}{'' if end is None else f' (or {end} at the very end)'}, but it"
        f" gives {start!r} at the start{'' if end is None else f', {before_last!r} just before the end'} and {last!r}"
        " at the end",
    )


@dataclass(frozen=True)
class Preset:
    """A named training recipe: environment, length and hyperparameters."""

    env_id: str
    total_steps: int
    config: TD3Config = field(default_factory=TD3Config)
    eval_freq: int = 5_000
    eval_episodes: int = 10
    source: str = ""


def _zoo_bullet(env_id: str) -> Preset:
    return Preset(
        env_id=env_id,
        total_steps=1_000_000,
        config=TD3Config(
            learning_rate=7e-4,
            buffer_size=200_000,
            learning_starts=10_000,
            batch_size=256,
            gamma=0.98,
            exploration_noise=0.1,
            net_arch=(400, 300),
        ),
        source="rl-baselines3-zoo hyperparams/td3.yml (Bullet locomotion)",
    )


PRESETS: dict[str, Preset] = {
    "pendulum": Preset(
        env_id="Pendulum-v1",
        total_steps=12_000,
        config=TD3Config(
            learning_rate=1e-3,
            buffer_size=200_000,
            learning_starts=1_000,
            batch_size=128,
            gamma=0.98,
            tau=0.05,
            net_arch=(64, 64),
        ),
        eval_freq=1_000,
        source="td3_steps: small networks, a short warm-up and fast-following targets (tau 0.05),"
        " tuned to solve Pendulum-v1 fast on a CPU",
    ),
    "walker2d-blog": Preset(
        env_id="Walker2DBulletEnv-v0",
        total_steps=500_000,
        config=TD3Config(
            learning_starts=10_000,
            batch_size=100,
            exploration_noise=0.1,
            net_arch=(400, 300),
        ),
        source="the classic TD3 tutorial's Walker2DBulletEnv-v0 settings",
    ),
    "halfcheetah-zoo": _zoo_bullet("HalfCheetahBulletEnv-v0"),
    "hopper-zoo": _zoo_bullet("HopperBulletEnv-v0"),
    "walker2d-zoo": _zoo_bullet("Walker2DBulletEnv-v0"),
    "ant-zoo": _zoo_bullet("AntBulletEnv-v0"),
}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except (KeyError, TypeError):  # TypeError: a list, say, which no dict key can be
        raise ConfigError(f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}") from None
