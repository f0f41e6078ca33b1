"""td3_steps.features: images stored as uint8 and read by the nature CNN; a features extractor shared by the networks."""

import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch import nn

from td3_steps import TD3, FlattenExtractor, NatureCNN, Policy, SpaceError, actor_update
from td3_steps.features import make_features_extractor


def test_images_are_stored_as_uint8_and_read_by_the_nature_cnn(tmp_path, image_env_id, image_config):
    model = TD3(image_env_id, image_config, seed=0, device="cpu")
    assert model.memory.obs.dtype == torch.uint8 and model.memory.obs.shape == (200, 36, 36, 3)
    assert isinstance(model.actor.features, NatureCNN) and isinstance(model.critics.features, NatureCNN)
    assert model.actor.features is not model.critics.features  # separate by default
    model.learn(30)
    assert model.critic_updates == 10
    assert model.memory.obs[:30].float().std() > 0  # raw pixels, not scaled
    frame = np.full((36, 36, 3), 200, np.uint8)
    action, _ = model.predict(frame)
    assert action.shape == (1,) and model.predict(np.stack([frame, frame]))[0].shape == (2, 1)
    model.save_policy(tmp_path / "policy.pt")
    policy = Policy.load(tmp_path / "policy.pt")
    assert np.array_equal(policy.predict(frame)[0], action)
    model.save(tmp_path / "ckpt", include_memory=True)
    assert torch.equal(TD3.load(tmp_path / "ckpt", device="cpu").memory.obs, model.memory.obs)


def test_nature_cnn_needs_images_of_36_pixels(small_config, toy_env):
    with pytest.raises(SpaceError, match="features_extractor = 'nature_cnn' needs image observations"):
        TD3("Pendulum-v1", small_config.replace(features_extractor="nature_cnn"), device="cpu")
    small_images = toy_env(observation_space=spaces.Box(0, 255, (3, 20, 20), np.uint8))
    with pytest.raises(SpaceError, match="at least 36x36 pixels, got 20x20: .* not pixels .* as a float32 Box"):
        TD3(small_images, small_config, device="cpu")
    flat = TD3(small_images, small_config.replace(features_extractor="flatten"), device="cpu")  # channels first
    assert flat.memory.obs.shape[1:] == (3, 20, 20) and flat.actor.net.hidden[0].in_features == 1200


def test_a_shared_features_extractor_is_trained_by_the_critic_loss_only(image_env_id, image_config, params, same):
    config = image_config.replace(share_features_extractor=True, policy_delay=1)
    model = TD3(image_env_id, config, seed=0, device="cpu")
    assert model.actor.features is model.critics.features
    assert model.actor_target.features is not model.critic_targets.features  # each target is its own copy
    shared = {id(p) for p in model.critics.features.parameters()}
    assert not shared & {id(p) for group in model.actor_optimizer.param_groups for p in group["params"]}
    assert shared <= {id(p) for group in model.critic_optimizer.param_groups for p in group["params"]}
    model.learn(20)  # warm-up only
    batch = model.memory.sample(8)
    before, actor_before = params(model.critics.features), params(model.actor.net)
    actor_update(model.actor, model.critics, batch.obs, model.actor_optimizer)
    assert same(before, params(model.critics.features)) and not same(actor_before, params(model.actor.net))
    model.train_step()  # the critic update moves the shared extractor
    assert not same(before, params(model.critics.features))


@pytest.mark.parametrize(
    ("make", "words"),
    [(lambda: FlattenExtractor(0), r"FlattenExtractor: obs_shape must be the observation's shape, .*; got 0\."),
     (lambda: FlattenExtractor("3"), r"FlattenExtractor: obs_shape .*; got '3'\."),
     (lambda: FlattenExtractor((3, 0)), r"FlattenExtractor: obs_shape .*; got \(3, 0\)\."),
     (lambda: NatureCNN((3,)), r"NatureCNN: obs_shape must be an image's shape, three whole numbers .*; got \(3,\)\."),
     (lambda: NatureCNN((64, 64, 3), features_dim=0), r"NatureCNN: features_dim must be a whole number >= 1")],
)  # fmt: skip
def test_extractors_made_by_hand_refuse_shapes_they_cannot_read(make, words):
    """FlattenExtractor(0) was accepted with features_dim 0; NatureCNN((3,)) raised an IndexError."""
    with pytest.raises(ValueError, match=words):
        make()
    assert FlattenExtractor((4, 4), images=True).features_dim == 16 and NatureCNN((3, 36, 36)).features_dim == 512


def test_a_nature_cnn_too_large_to_make_is_refused_with_its_size():
    """features_dim=10**30 gave torch's "empty(): argument 'size' failed to unpack the object ... Overflow"."""
    with pytest.raises(ValueError, match=r"NatureCNN's last layer, 64 -> 1,000,.*,000, needs .* GiB on cpu, more than"):
        NatureCNN((36, 36, 3), features_dim=10**30)


def test_a_nature_cnn_names_images_it_cannot_read():
    """A numpy batch gave "'numpy.ndarray' object has no attribute 'float'", one unbatched image torch's permute
    error, channels in the other order a convolution's "expected input[1, 64, 3, 64] to have 3 channels"."""
    cnn = NatureCNN((36, 36, 3))
    image = torch.zeros(36, 36, 3, dtype=torch.uint8)
    with pytest.raises(
        TypeError, match="NatureCNN: obs must be a torch.Tensor, a batch of uint8 images; got .* ndarray"
    ):
        cnn(image[None].numpy())
    with pytest.raises(ValueError, match=r"shaped \(B, 36, 36, 3\), .*got shape \(36, 36, 3\)\. .*obs.unsqueeze\(0\)"):
        cnn(image)
    with pytest.raises(ValueError, match=r"shaped \(B, 36, 36, 3\), as it was made for; got shape \(1, 3, 36, 36\)\.$"):
        cnn(image.permute(2, 0, 1)[None])
    assert cnn(image[None]).shape == (1, 512)


def test_flatten_scales_images_to_0_1_and_counts_every_value():
    extractor = FlattenExtractor((2, 3, 1), images=True)
    assert extractor.features_dim == 6
    out = extractor(torch.full((4, 2, 3, 1), 255, dtype=torch.uint8))
    assert out.shape == (4, 6) and torch.equal(out, torch.ones(4, 6))
    vectors = torch.randn(4, 5)
    assert FlattenExtractor((5,))(vectors) is vectors


def test_the_nature_cnn_has_the_papers_layers():
    cnn = NatureCNN((36, 36, 3))
    convs = [m for m in cnn.cnn if isinstance(m, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.stride) for c in convs] == [
        (3, 32, (8, 8), (4, 4)), (32, 64, (4, 4), (2, 2)), (64, 64, (3, 3), (1, 1))]  # fmt: skip
    assert [type(m) for m in cnn.linear] == [nn.Linear, nn.ReLU]
    assert cnn.features_dim == 512 and cnn.linear[0].out_features == 512


def test_the_nature_cnn_scales_pixels_and_reads_channels_last_images_of_any_aspect():
    torch.manual_seed(0)
    cnn = NatureCNN((40, 52, 3))
    assert not cnn.channels_first
    images = torch.randint(0, 256, (2, 40, 52, 3), dtype=torch.uint8)
    expected = cnn.linear(cnn.cnn(images.float().div(255.0).permute(0, 3, 1, 2)))
    assert torch.allclose(cnn(images), expected)
    assert (cnn(images) >= 0).all()


def test_channels_come_first_only_when_the_first_axis_is_the_smaller():
    assert NatureCNN((3, 40, 40)).channels_first
    assert not NatureCNN((40, 40, 40)).channels_first


def test_auto_reads_images_with_the_cnn_and_refuses_the_cnn_for_vectors():
    images = spaces.Box(0, 255, (36, 36, 3), np.uint8)
    assert isinstance(make_features_extractor("auto", images), NatureCNN)
    assert isinstance(make_features_extractor("flatten", images), FlattenExtractor)
    vectors = spaces.Box(-1.0, 1.0, (4,), np.float32)
    assert isinstance(make_features_extractor("auto", vectors), FlattenExtractor)
    with pytest.raises(ValueError, match="'nature_cnn' needs image observations"):
        make_features_extractor("nature_cnn", vectors)
