"""td3_steps: TD3 (Twin Delayed DDPG) in fifteen named steps, the package behind the course.

Each step of the course is a named piece, importable alone:

    1  ReplayMemory                 8  clipped_double_q
    2  Actor                        9  bellman_target
    3  Critics                     10  current_q_values
    4  ReplayMemory.sample         11  critic_loss
    5  target_action               12  critic_update
    6  smooth_target_action        13  actor_loss, actor_update, policy_update_due
    7  target_q_values          14, 15  polyak_update

and TD3 assembles them: TD3.train_step is one iteration, steps 4 to 15 in order. Beyond the
course: schedules (LinearSchedule), acting noise (GaussianNoise, OrnsteinUhlenbeckNoise), features
extractors (NatureCNN for images), callbacks (EvalCallback).
"""

from .actor_update import actor_loss, actor_update, policy_update_due
from .agent import TD3
from .callbacks import EvalCallback
from .checkpoint import CheckpointError
from .config import PRESETS, ConfigError, TD3Config
from .critic_update import critic_loss, critic_update, current_q_values
from .devices import check_torch_reads_numpy
from .envs import ActionScaleWarning, SpaceError, make_env
from .features import FlattenExtractor, NatureCNN
from .metrics import TrainingError
from .networks import Actor, Critic, Critics, make_target
from .noise import GaussianNoise, OrnsteinUhlenbeckNoise
from .policy import Policy
from .polyak import polyak_update
from .replay_memory import Batch, ReplayMemory
from .schedules import LinearSchedule
from .target import bellman_target, clipped_double_q, smooth_target_action, target_action, target_q_values

__version__ = "0.1.0"

check_torch_reads_numpy()  # a torch built for numpy 1 beside numpy 2 would fail at the agent's first array

__all__ = [
    "TD3",
    "TD3Config",
    "PRESETS",
    "ConfigError",
    "CheckpointError",
    "SpaceError",
    "ActionScaleWarning",
    "TrainingError",
    "make_env",
    "Policy",
    "ReplayMemory",
    "Batch",
    "Actor",
    "Critic",
    "Critics",
    "make_target",
    "target_action",
    "smooth_target_action",
    "target_q_values",
    "clipped_double_q",
    "bellman_target",
    "current_q_values",
    "critic_loss",
    "critic_update",
    "actor_loss",
    "actor_update",
    "policy_update_due",
    "polyak_update",
    "LinearSchedule",
    "GaussianNoise",
    "OrnsteinUhlenbeckNoise",
    "FlattenExtractor",
    "NatureCNN",
    "EvalCallback",
]
