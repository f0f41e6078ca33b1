"""td3_steps.config: every field checked at construction, named in the error; JSON; presets; the field docs."""

import copy
import dataclasses
import json
import pickle

import numpy as np
import pytest
import torch

from td3_steps import ConfigError, LinearSchedule, TD3Config
from td3_steps.config import PRESETS, config_of, field_docs, field_names


@pytest.mark.parametrize(
    "field, value",
    [("tau", 0.0), ("tau", 1.5), ("target_policy_noise", -0.1), ("exploration_noise", -1.0), ("gamma", 1.2),
     ("batch_size", 0), ("learning_rate", 0.0), ("learning_rate", 1.5), ("learning_rate", 1e30), ("noise_type", np.array(["normal", "x"])), ("net_arch", ()), ("policy_delay", 0), ("n_critics", 0),
     ("tau", float("nan")), ("activation", "swish"), ("layer_norm", 2), ("net_arch", {8, 16}), ("features_extractor", "resnet"),
     ("share_features_extractor", "no"), ("noise_type", "pink"), ("random_exploration", 1.5), ("ou_theta", -0.1), ("ou_theta", 200.0),
     ("net_arch", np.array(64)), ("net_arch", torch.tensor(1e-3)),
     ("train_freq", (1, "epoch")), ("train_freq", 0), ("gradient_steps", 0), ("gradient_steps", -2),
     ("learning_rate", LinearSchedule(1e-3, -1e-4)), ("exploration_noise", lambda progress: -0.1),
     ("learning_rate", "fast")],
)  # fmt: skip
def test_invalid_config_names_the_field(field, value):
    with pytest.raises(ConfigError, match=rf"TD3Config\.{field}"):
        TD3Config(**{field: value})


BOOL_FIELDS = ("layer_norm", "share_features_extractor", "mixed_precision")


@pytest.mark.parametrize("field", field_names())
@pytest.mark.parametrize("value", [None, "nonsense", object(), True, float("inf"), -float("inf"), {"a": 1}])
def test_every_field_refuses_values_of_the_wrong_type_naming_the_field(field, value):
    """Issue 18: a string, None, a bool where a number goes, inf: a ConfigError naming the field and what it
    must be, never a TypeError from a comparison ("'<' not supported") or "'int' object is not iterable"."""
    if field in BOOL_FIELDS and value is True:
        return  # the one value that is right there
    with pytest.raises(ConfigError, match=rf"TD3Config\.{field} = .* is invalid: it must be "):
        TD3Config(**{field: value})


@pytest.mark.parametrize(
    "field, value",
    [("target_policy_noise", float("inf")), ("learning_rate", float("inf")), ("tau", True), ("gamma", True),
     ("gamma", False), ("net_arch", 64), ("net_arch", "64"), ("net_arch", (64, True)), ("batch_size", "100"),
     ("gradient_steps", -1.0), ("n_critics", 2.0), ("train_freq", None), ("random_exploration", True),
     ("exploration_noise", lambda progress: float("inf")), ("learning_rate", lambda: 1e-3)],
)  # fmt: skip
def test_infinite_boolean_and_mistyped_values_of_the_audit_are_refused(field, value):
    with pytest.raises(ConfigError, match=rf"TD3Config\.{field}"):
        TD3Config(**{field: value})


def test_a_schedule_that_cannot_be_called_says_how_schedules_are_called():
    with pytest.raises(ConfigError, match=r"learning_rate .* called with progress_remaining .* raised TypeError"):
        TD3Config(learning_rate=lambda: 1e-3)


def test_sequences_and_json_lists_are_still_accepted():
    assert TD3Config(net_arch=[64, 32]).net_arch == (64, 32)
    assert TD3Config(train_freq=[2, "episode"]).train_freq == (2, "episode")
    assert TD3Config(gradient_steps=-1, learning_rate=1, tau=1).tau == 1


def test_numpy_scalars_are_the_python_values_they_hold():
    """A sweep over np.arange or np.logspace gives numpy scalars: accepted as their values, stored as Python ones
    (run.json and meta.json are JSON), and a numpy bool is still no number."""
    config = TD3Config(
        batch_size=np.int64(64), net_arch=np.array([64, 32]), train_freq=(np.int64(2), np.str_("episode")),
        tau=np.float32(0.5), gamma=np.float64(0.9), layer_norm=np.bool_(True), learning_starts=np.uint16(9),
        target_policy_noise=np.longdouble(0.25),  # whose .item() stays a longdouble, which JSON cannot write
    )  # fmt: skip
    assert type(config.target_policy_noise) is float and config.learning_starts == 9
    values = (config.batch_size, config.net_arch, config.train_freq, config.tau, config.gamma, config.layer_norm)
    assert values == (64, (64, 32), (2, "episode"), 0.5, 0.9, True)
    assert [type(v) for v in (config.batch_size, config.net_arch[0], config.train_freq[0], config.tau)] == [
        int,
        int,
        int,
        float,
    ]
    assert json.loads(json.dumps(config.to_dict()))["net_arch"] == [64, 32]
    for field, value in (("batch_size", np.float64(64.0)), ("n_critics", np.bool_(True)), ("tau", np.float32("nan"))):
        with pytest.raises(ConfigError, match=rf"TD3Config\.{field}"):
            TD3Config(**{field: value})
    # a flag: one rule with the networks' and save/load's (counts.is_flag), 1 and 0 stored as True and False
    flags = TD3Config(layer_norm=1, mixed_precision=np.int64(0), share_features_extractor=np.bool_(True))
    assert (flags.layer_norm, flags.mixed_precision, flags.share_features_extractor) == (True, False, True)
    assert all(type(v) is bool for v in (flags.layer_norm, flags.mixed_precision, flags.share_features_extractor))


def test_batch_larger_than_the_buffer_and_unknown_names(small_config):
    with pytest.raises(ConfigError, match="batch_size.*buffer_size"):
        TD3Config(batch_size=512, buffer_size=256)
    with pytest.raises(ConfigError, match="unknown preset 'nope'.*pendulum"):
        TD3Config.from_preset("nope")
    with pytest.raises(ConfigError, match=r"no field 'learning_rat' \(did you mean 'learning_rate'\?\)\. Its fields: "):
        small_config.replace(learning_rat=1e-3)
    with pytest.raises(ConfigError, match=r"no field 'optimize_memory_usage'\. Its fields: learning_rate, buffer_size"):
        TD3Config.from_dict({**small_config.to_dict(), "optimize_memory_usage": True})
    with pytest.raises(ConfigError, match=r"no field 'lr'\. Its fields: learning_rate, "):
        TD3Config(lr=1e-3)  # gave the dataclass's bare "__init__() got an unexpected keyword argument 'lr'"


def test_a_variants_config_subclass_takes_its_own_fields():
    """A variant of TD3 keeps its hyperparameters in a TD3Config subclass: they were refused as no field of
    TD3Config's, and to_dict, which a checkpoint saves, dropped them."""

    @dataclasses.dataclass(frozen=True)
    class TD3BCConfig(TD3Config):
        alpha: float = 2.5

    config = TD3BCConfig(alpha=1.0, tau=0.01)
    assert config.replace(alpha=3.0).alpha == 3.0 and config.to_dict()["alpha"] == 1.0
    assert TD3BCConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(ConfigError, match=r"TD3BCConfig has no field 'alpah' \(did you mean 'alpha'\?\).*, alpha\."):
        config.replace(alpah=1.0)
    with pytest.raises(ConfigError, match=r"^TD3Config has no field 'alpha'\."):
        TD3Config.from_dict(config.to_dict())


def test_config_of_takes_a_variants_config_only_for_the_variant():
    """TD3 itself took a TD3BCConfig, and saved its alpha in checkpoints that its own load then refused as a variant's;
    a field without a default (kw_only) could not be given, config_class() failing before the fields were applied."""

    @dataclasses.dataclass(frozen=True)
    class TD3BCConfig(TD3Config):
        alpha: float = 2.5

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Required(TD3Config):
        beta: float

    with pytest.raises(TypeError, match=r"config is a TD3BCConfig, whose alpha no TD3Config has: .* variant"):
        config_of(TD3BCConfig(alpha=1.0), {})
    assert config_of(TD3BCConfig(alpha=1.0), {}, TD3BCConfig).alpha == 1.0
    assert config_of(None, {"beta": 0.5, "tau": 0.01}, Required) == Required(beta=0.5, tau=0.01)
    with pytest.raises(ConfigError, match=r"^Required has no field 'bta' \(did you mean 'beta'\?\)"):
        config_of(None, {"bta": 0.5}, Required)
    with pytest.raises(
        ConfigError, match=r"^Required needs beta, which has no default: give it, Required\(beta=\.\.\.\)"
    ):
        config_of(None, {"tau": 0.01}, Required)  # was the dataclass's bare "missing 1 required keyword-only argument"
    with pytest.raises(ConfigError, match=r"^Required needs beta"):
        Required.from_dict(TD3Config().to_dict())
    with pytest.raises(
        ConfigError, match=r"callable .* config=Required\(learning_rate=\.\.\., tau=0\.01, beta=0\.5\)\)"
    ):
        Required.from_dict(Required(learning_rate=lambda progress: 1e-3, beta=0.5, tau=0.01).to_dict())  # was cls()


@dataclasses.dataclass(frozen=True, kw_only=True)
class RequiredConfig(TD3Config):  # at module level, where pickle finds it
    beta: float


def test_a_config_with_a_required_field_is_copied_and_pickled():
    """copy, deepcopy and pickle make the object with __new__ alone: its check of the fields without a default said
    "RequiredConfig needs beta" to copy.deepcopy(model) of a variant, and to a config sent to a sweep's workers."""
    config = RequiredConfig(beta=0.5, tau=0.01)
    for copied in (copy.copy(config), copy.deepcopy(config), pickle.loads(pickle.dumps(config))):
        assert copied == config and type(copied) is RequiredConfig
    assert pickle.loads(pickle.dumps(config, protocol=2)) == config
    with pytest.raises(ConfigError, match=r"^RequiredConfig needs beta"):
        RequiredConfig(tau=0.01)  # still said where the config is made


def test_a_field_set_by_post_init_is_not_asked_for():
    """A field with init=False and no default, which the subclass's __post_init__ sets, cannot be given: it was
    asked for ("give it, Derived(half_tau=...)"), and the config could not be made at all."""

    @dataclasses.dataclass(frozen=True)
    class Derived(TD3Config):
        half_tau: float = dataclasses.field(init=False)

        def __post_init__(self):
            object.__setattr__(self, "half_tau", self.tau / 2)
            super().__post_init__()

    assert Derived(tau=0.01).half_tau == 0.005
    config = Derived(tau=0.01)  # to_dict gives half_tau, which from_dict passed to __init__ (a TypeError on load)
    assert Derived.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_stable_baselines3_replay_buffer_arguments_are_told_what_does_their_work():
    with pytest.raises(ConfigError, match=r"'replay_buffer_kwargs' \(Stable-Baselines3's; here buffer_size"):
        TD3Config(replay_buffer_kwargs={})


def test_train_freq_survives_json(small_config):
    config = small_config.replace(train_freq=(2, "episode"), gradient_steps=-1)
    assert TD3Config.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_every_field_is_documented():
    docs = field_docs()
    assert list(docs) == field_names()
    assert docs["tau"] == "Polyak coefficient: theta' <- tau * theta + (1 - tau) * theta' (steps 14 and 15)."
    assert all(doc and "\n" not in doc for doc in docs.values())


def test_a_whole_number_beyond_any_float_is_refused_by_the_field():
    """10**400 made math.isfinite raise OverflowError inside the check."""
    with pytest.raises(ConfigError, match=r"TD3Config.tau = 1000.* is invalid: it must be a finite number"):
        TD3Config(tau=10**400)
    with pytest.raises(ValueError, match="LinearSchedule.start = 1000"):
        LinearSchedule(10**400, 0.0)


def test_from_dict_and_from_preset_name_what_they_take():
    """None gave "'NoneType' object is not iterable", a key that is no string a TypeError inside difflib, and a
    list as a preset's name "unhashable type"."""
    with pytest.raises(ConfigError, match="from_dict takes a dict of fields, as to_dict gives; got NoneType"):
        TD3Config.from_dict(None)
    with pytest.raises(
        ConfigError, match=r"TD3Config has no field 1, 'policy_dealy' \(did you mean 'policy_delay'\?\)"
    ):
        TD3Config.from_dict({1: 2, "policy_dealy": 3})
    with pytest.raises(ConfigError, match=r"unknown preset \['pendulum'\]; choose one of: pendulum"):
        TD3Config.from_preset(["pendulum"])


def test_a_negative_learning_starts_is_refused():
    with pytest.raises(ConfigError, match="learning_starts"):
        TD3Config(learning_starts=-1)


def test_buffer_size_zero_is_refused_naming_buffer_size():
    with pytest.raises(ConfigError, match=r"TD3Config\.buffer_size = 0 is invalid"):
        TD3Config(buffer_size=0, batch_size=1)


@pytest.mark.parametrize(
    "fields",
    [{"batch_size": 64, "buffer_size": 64}, {"gamma": 1.0}, {"gamma": 0.0}, {"tau": 1.0},
     {"target_policy_noise": 0.0}, {"target_noise_clip": 0.0}, {"exploration_noise": 0.0},
     {"random_exploration": 0.0}, {"random_exploration": 1.0}, {"ou_theta": 0.0}, {"learning_rate": 1.0},
     {"gradient_steps": -1}, {"learning_starts": 0}, {"n_critics": 1}, {"policy_delay": 1}],
)  # fmt: skip
def test_the_closed_ends_of_each_range_are_accepted(fields):
    config = TD3Config(**fields)
    assert all(getattr(config, k) == v for k, v in fields.items())


def test_the_defaults_are_the_td3_papers():
    c = TD3Config()
    assert (c.learning_rate, c.buffer_size, c.learning_starts, c.batch_size, c.tau, c.gamma) == (
        1e-3, 1_000_000, 10_000, 100, 0.005, 0.99)  # fmt: skip
    assert (c.train_freq, c.gradient_steps, c.policy_delay) == (1, 1, 2)
    assert (c.target_policy_noise, c.target_noise_clip, c.exploration_noise, c.noise_type) == (0.2, 0.5, 0.1, "normal")
    assert (c.ou_theta, c.random_exploration, c.net_arch, c.activation) == (0.15, 0.0, (400, 300), "relu")
    assert (c.layer_norm, c.features_extractor, c.share_features_extractor, c.n_critics, c.mixed_precision) == (
        False, "auto", False, 2, False)  # fmt: skip


def test_presets_hold_their_documented_values():
    pendulum = PRESETS["pendulum"]
    assert (pendulum.env_id, pendulum.total_steps, pendulum.eval_freq) == ("Pendulum-v1", 12_000, 1_000)
    c = pendulum.config
    assert (c.learning_rate, c.buffer_size, c.learning_starts, c.batch_size, c.gamma, c.tau, c.net_arch) == (
        1e-3, 200_000, 1_000, 128, 0.98, 0.05, (64, 64))  # fmt: skip
    for name in ("halfcheetah-zoo", "hopper-zoo", "walker2d-zoo", "ant-zoo"):
        zoo = PRESETS[name]
        c = zoo.config
        assert zoo.total_steps == 1_000_000
        assert (c.learning_rate, c.buffer_size, c.learning_starts, c.batch_size, c.gamma, c.net_arch) == (
            7e-4, 200_000, 10_000, 256, 0.98, (400, 300))  # fmt: skip
    assert TD3Config.from_preset("walker2d-blog") == TD3Config()


def test_to_dict_is_plain_json_and_round_trips_with_a_schedule():
    config = TD3Config(net_arch=(8, 4), train_freq=(3, "step"), learning_rate=LinearSchedule(1e-3, 1e-4))
    data = config.to_dict()
    assert data["net_arch"] == [8, 4] and type(data["net_arch"]) is list
    assert type(data["train_freq"]) is list
    assert json.loads(json.dumps(data)) == data
    assert TD3Config.from_dict(json.loads(json.dumps(data))) == config


def test_from_dict_of_a_callable_asks_for_the_config_again():
    data = TD3Config(exploration_noise=lambda p: 0.1 * p, batch_size=64).to_dict()
    with pytest.raises(ConfigError, match=r"exploration_noise was a Python callable .* batch_size=64"):
        TD3Config.from_dict(data)


def test_numpy_floats_become_python_floats():
    config = TD3Config(tau=np.float32(0.25), gamma=np.longdouble(0.5))
    assert type(config.tau) is float and type(config.gamma) is float


def test_a_learning_rate_schedule_may_reach_zero_only_at_the_very_end():
    TD3Config(learning_rate=lambda p: 1e-3 * p)  # Stable-Baselines3's linear_schedule
    with pytest.raises(ConfigError, match=r"learning_rate"):
        TD3Config(learning_rate=lambda p: 1e-3 if p > 0.5 else 0.0)  # zero well before the end
    with pytest.raises(ConfigError, match=r"exploration_noise"):
        TD3Config(exploration_noise=lambda p: 0.1 if p > 0 else -0.1)  # no `end` for the noise
