"""TD3Config: every hyperparameter of TD3 in one dataclass, and the named presets.

Field names follow Stable-Baselines3 where it has one. Defaults are the TD3 paper's
(Fujimoto et al. 2018, section 6.1 and its Table 3): 400-300 networks, Adam at 1e-3,
batch 100, tau 0.005, target noise N(0, 0.2) clipped to 0.5, policy delay 2, exploration
N(0, 0.1) and 10,000 steps of random actions before learning starts.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field


class ConfigError(ValueError):
    """A TD3Config field holds a value TD3 cannot use; the message names the field."""


@dataclass(frozen=True)
class TD3Config:
    """Hyperparameters of TD3. Noise scales are fractions of each action dimension's half-range."""

    learning_rate: float = 1e-3
    """Adam step size, the same for the actor and the critics."""
    buffer_size: int = 1_000_000
    """Capacity of the replay memory (step 1); the oldest transition is overwritten first."""
    learning_starts: int = 10_000
    """Environment steps of uniformly random actions before the first update."""
    batch_size: int = 100
    """Transitions per sampled batch N (step 4)."""
    tau: float = 0.005
    """Polyak coefficient: theta' <- tau * theta + (1 - tau) * theta' (steps 14 and 15)."""
    gamma: float = 0.99
    """Discount factor in the Bellman target (step 9)."""
    train_freq: int = 1
    """Environment steps between two rounds of updates."""
    gradient_steps: int = 1
    """Critic updates per round."""
    policy_delay: int = 2
    """d: the actor and the targets move once every d critic updates (step 13)."""
    target_policy_noise: float = 0.2
    """sigma of the target smoothing noise (step 6), relative to the half-range."""
    target_noise_clip: float = 0.5
    """c: the smoothing noise is clipped to [-c, c] times the half-range (step 6)."""
    exploration_noise: float = 0.1
    """Standard deviation of the Gaussian acting noise, relative to the half-range."""
    net_arch: tuple[int, ...] = (400, 300)
    """Hidden layer sizes of the actor and of each critic."""
    n_critics: int = 2
    """Critics (and target critics); the target takes the minimum over all of them (step 8).
    1 gives DDPG's single-critic target."""
    mixed_precision: bool = False
    """Run the hidden layers under bfloat16 autocast; weights, losses and targets stay fp32."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "net_arch", tuple(self.net_arch))
        _check(self, "learning_rate", self.learning_rate > 0, "a positive number, e.g. 1e-3")
        _check_int(self, "buffer_size", 1)
        _check_int(self, "learning_starts", 0)
        _check_int(self, "batch_size", 1)
        _check(
            self,
            "batch_size",
            self.batch_size <= self.buffer_size,
            f"at most buffer_size ({self.buffer_size}): a batch is drawn from the memory",
        )
        _check(self, "tau", 0 < self.tau <= 1, "in (0, 1]; the paper uses 0.005")
        _check(self, "gamma", 0 <= self.gamma <= 1, "in [0, 1]; the paper uses 0.99")
        _check_int(self, "train_freq", 1)
        _check_int(self, "gradient_steps", 1)
        _check_int(self, "policy_delay", 1)
        for name in ("target_policy_noise", "target_noise_clip", "exploration_noise"):
            _check(self, name, getattr(self, name) >= 0, "a non-negative fraction of the half-range")
        _check(
            self,
            "net_arch",
            len(self.net_arch) > 0
            and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in self.net_arch),
            "a non-empty sequence of positive layer sizes, e.g. (400, 300)",
        )
        _check_int(self, "n_critics", 1)
        _check(self, "mixed_precision", isinstance(self.mixed_precision, bool), "True or False")

    def replace(self, **changes) -> TD3Config:
        """A copy with some fields changed (and checked again)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ConfigError(f"TD3Config has no field {sorted(unknown)}; fields: {field_names()}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["net_arch"] = list(self.net_arch)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> TD3Config:
        unknown = set(data) - set(field_names())
        if unknown:
            raise ConfigError(f"TD3Config has no field {sorted(unknown)}; fields: {field_names()}")
        return cls(**data)

    @classmethod
    def from_preset(cls, name: str) -> TD3Config:
        """The config of a named preset (see PRESETS)."""
        return get_preset(name).config


def field_names() -> list[str]:
    return [f.name for f in dataclasses.fields(TD3Config)]


def _check(config: TD3Config, name: str, ok: bool, expected: str) -> None:
    value = getattr(config, name)
    if isinstance(value, float) and math.isnan(value):
        ok = False
    if not ok:
        raise ConfigError(f"TD3Config.{name} = {value!r} is invalid: it must be {expected}.")


def _check_int(config: TD3Config, name: str, minimum: int) -> None:
    value = getattr(config, name)
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
    _check(config, name, ok, f"an integer >= {minimum}")


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
            net_arch=(64, 64),
        ),
        eval_freq=1_000,
        source="td3_steps: small networks and a short warm-up, tuned to solve Pendulum-v1 fast on a CPU",
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
    except KeyError:
        raise ConfigError(f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}") from None
