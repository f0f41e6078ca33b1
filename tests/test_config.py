"""td3_steps.config: every field checked at construction, named in the error; JSON; presets; the field docs."""

import json

import pytest

from td3_steps import ConfigError, LinearSchedule, TD3Config
from td3_steps.config import field_docs, field_names


@pytest.mark.parametrize(
    "field, value",
    [("tau", 0.0), ("tau", 1.5), ("target_policy_noise", -0.1), ("exploration_noise", -1.0), ("gamma", 1.2),
     ("batch_size", 0), ("learning_rate", 0.0), ("net_arch", ()), ("policy_delay", 0), ("n_critics", 0),
     ("tau", float("nan")), ("activation", "swish"), ("layer_norm", 1), ("features_extractor", "resnet"),
     ("share_features_extractor", "no"), ("noise_type", "pink"), ("random_exploration", 1.5), ("ou_theta", -0.1),
     ("train_freq", (1, "epoch")), ("train_freq", 0), ("gradient_steps", 0), ("gradient_steps", -2),
     ("learning_rate", LinearSchedule(1e-3, -1e-4)), ("exploration_noise", lambda progress: -0.1),
     ("learning_rate", "fast")],
)  # fmt: skip
def test_invalid_config_names_the_field(field, value):
    with pytest.raises(ConfigError, match=rf"TD3Config\.{field}"):
        TD3Config(**{field: value})


def test_batch_larger_than_the_buffer_and_unknown_names(small_config):
    with pytest.raises(ConfigError, match="batch_size.*buffer_size"):
        TD3Config(batch_size=512, buffer_size=256)
    with pytest.raises(ConfigError, match="unknown preset 'nope'.*pendulum"):
        TD3Config.from_preset("nope")
    with pytest.raises(ConfigError, match="no field"):
        small_config.replace(learning_rat=1e-3)


def test_train_freq_survives_json(small_config):
    config = small_config.replace(train_freq=(2, "episode"), gradient_steps=-1)
    assert TD3Config.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_every_field_is_documented():
    docs = field_docs()
    assert list(docs) == field_names()
    assert docs["tau"] == "Polyak coefficient: theta' <- tau * theta + (1 - tau) * theta' (steps 14 and 15)."
    assert all(doc and "\n" not in doc for doc in docs.values())
