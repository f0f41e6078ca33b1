"""td3_steps.policy: predict, explore, evaluate, and the policy file."""

import pickle
import re
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

import td3_steps.policy
from td3_steps import TD3, Actor, CheckpointError, Policy, SpaceError, make_env
from td3_steps.policy import policy_digest
from td3_steps.seeding import ACTING, derived_seed


def test_predict_single_and_batched(small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    action, state = model.predict(np.zeros(3))
    assert state is None and action.shape == (1,) and action.dtype == np.float32
    actions, _ = model.predict(np.zeros((5, 3)))
    assert actions.shape == (5, 1)
    assert np.allclose(actions[0], action)
    noisy, _ = model.predict(np.zeros((200, 3)), deterministic=False)
    assert noisy.std() > 0 and np.all(np.abs(noisy) <= 2.0)
    assert np.unique(noisy).size > 100  # each row of a batch gets its own noise
    with pytest.raises(ValueError, match=r"shape \(3,\).*got an array of shape \(4,\)"):
        model.predict(np.zeros(4))
    with pytest.raises(ValueError, match=r"of numbers, got str 'abc'"):
        model.predict("abc")
    for bad in (np.array([0.0, np.nan, 0.0]), np.full((2, 3), np.inf)):
        with pytest.raises(ValueError, match="The observation holds NaN or inf"):
            model.predict(bad)
    for bad in ("no", None, 0.5):
        with pytest.raises(ValueError, match=re.escape(f"deterministic must be True or False, got {bad!r}")):
            model.predict(np.zeros(3), deterministic=bad)
    assert np.array_equal(model.predict(np.zeros(3), deterministic=np.bool_(True))[0], action)
    with pytest.raises(TypeError, match="Policy acts with a td3_steps Actor .*, got Critics"):
        Policy(model.critics, "Pendulum-v1")


def test_explore_scales_the_noise_by_each_dimensions_half_range(small_config, toy_env):
    env = toy_env(action_space=spaces.Box(np.array([0.0, -1.0], np.float32), np.array([2.0, 3.0], np.float32)))
    policy = TD3(env, small_config, seed=0, device="cpu").policy
    centre = torch.tensor([1.0, 1.0]).expand(100_000, 2)
    std = (policy.explore(centre, 0.2) - centre).std(dim=0)
    assert torch.allclose(std, torch.tensor([0.2, 0.4]), rtol=0.02)  # sigma * half-range (1 and 2)
    wide = policy.explore(centre, 10.0)
    assert torch.all(wide >= torch.tensor([0.0, -1.0])) and torch.all(wide <= torch.tensor([2.0, 3.0]))


def test_a_policys_noisy_predictions_are_seeded(small_config, tmp_path):
    TD3("Pendulum-v1", small_config, seed=0, device="cpu").save_policy(tmp_path / "policy.pt")
    obs = np.zeros((4, 3), np.float32)
    first = Policy.load(tmp_path / "policy.pt").predict(obs, deterministic=False)[0]
    torch.manual_seed(5)  # torch's global RNG plays no part
    assert np.array_equal(Policy.load(tmp_path / "policy.pt").predict(obs, deterministic=False)[0], first)


def test_evaluate_is_reproducible_and_leaves_training_alone(small_config, params, same):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(150)
    first = model.evaluate(2)
    assert isinstance(first[0], float) and first[0] < 0
    assert model.evaluate(2) == first
    twin = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(150)
    model.learn(100)
    twin.learn(100)
    assert same(params(model.actor), params(twin.actor))  # the evaluation did not disturb training


def test_policy_file_round_trip(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(150)
    model.save_policy(tmp_path / "policy.pt")
    policy = Policy.load(tmp_path / "policy.pt")
    obs = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
    assert np.array_equal(policy.predict(obs)[0], model.predict(obs)[0])
    assert policy.evaluate(2) == model.evaluate(2)
    (tmp_path / "bad.pt").write_bytes(b"nope")
    with pytest.raises(CheckpointError):
        Policy.load(tmp_path / "bad.pt")


def test_a_policy_file_evaluates_with_its_runs_seed(tmp_path, small_config):
    """A run of seed 3 evaluates its episodes from seed 3: its policy file (and best_policy.pt) must score what
    the run's own evaluations scored, not the episodes of seed 0. A file of version 3, which holds no seed,
    evaluates with seed 0, as it always did."""
    model = TD3("Pendulum-v1", small_config, seed=3, device="cpu").learn(150)
    model.save_policy(tmp_path / "policy.pt")
    policy = Policy.load(tmp_path / "policy.pt")
    assert policy.seed == 3 and policy.evaluate(2) == model.evaluate(2)
    assert policy.evaluate(2, seed=0) != model.evaluate(2)
    data = torch.load(tmp_path / "policy.pt", weights_only=True)
    del data["seed"]
    data["version"] = 3
    data["sha256"] = policy_digest(data)
    torch.save(data, tmp_path / "v3.pt")
    assert Policy.load(tmp_path / "v3.pt").evaluate(2) == policy.evaluate(2, seed=0)


def test_an_env_of_ones_own_module_is_named_with_its_module(tmp_path, monkeypatch, small_config):
    """gymnasium makes 'module:Id' by importing the module first; the policy file keeps that prefix, so that another
    process (evaluate RUN/policy.pt) makes the env again. A bare id that no module registered says how."""
    (tmp_path / "td3_test_point.py").write_text(
        "import gymnasium as gym\n"
        "gym.register('TestPoint-v0', entry_point='gymnasium.envs.classic_control:PendulumEnv', max_episode_steps=9)\n"
    )
    monkeypatch.syspath_prepend(tmp_path)
    model = TD3("td3_test_point:TestPoint-v0", small_config, seed=0, device="cpu")
    model.save_policy(tmp_path / "policy.pt")
    assert torch.load(tmp_path / "policy.pt", weights_only=True)["env_id"] == "td3_test_point:TestPoint-v0"
    del gym.registry["TestPoint-v0"]  # as in a new process, where no module has registered it yet
    monkeypatch.delitem(sys.modules, "td3_test_point")
    policy = Policy.load(tmp_path / "policy.pt")
    assert policy.env_id == "td3_test_point:TestPoint-v0"
    assert policy.evaluate(1) == model.evaluate(1)
    del gym.registry["TestPoint-v0"]
    with pytest.raises(ValueError, match=r"TestPoint-v0.* doesn't exist.*'my_module:TestPoint-v0'"):
        make_env("TestPoint-v0")


def test_an_exported_actor_acts_where_neither_td3_steps_nor_gymnasium_is_imported(tmp_path, small_config):
    """The README's recipe for acting without td3_steps: torch.export of the loaded actor, any batch size."""
    TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(150).save_policy(tmp_path / "actor.pt")
    policy = Policy.load(tmp_path / "actor.pt")
    batch = torch.export.Dim("batch")
    example = (torch.zeros(2, *policy.obs_shape),)
    program = torch.export.export(policy.actor.eval(), example, dynamic_shapes=({0: batch},))
    torch.export.save(program, tmp_path / "actor.pt2")
    obs = torch.randn(5, *policy.obs_shape, generator=torch.Generator().manual_seed(0))
    torch.save(obs, tmp_path / "obs.pt")
    elsewhere = (
        "import sys, torch\n"
        f"actor = torch.export.load({str(tmp_path / 'actor.pt2')!r}).module()\n"
        f"torch.save(actor(torch.load({str(tmp_path / 'obs.pt')!r})), {str(tmp_path / 'actions.pt')!r})\n"
        "assert not {'td3_steps', 'gymnasium'} & set(sys.modules), sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", elsewhere], check=True, cwd=tmp_path)
    with torch.no_grad():
        assert torch.equal(torch.load(tmp_path / "actions.pt"), policy.actor(obs))


def test_policies_of_the_course_version_and_of_version_2_still_load(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=1, device="cpu")
    v1 = {"format": "td3_steps policy", "version": 1, "env_id": "Pendulum-v1", "net_arch": [32, 32],
          "mixed_precision": False, "obs_dim": 3, "actor": model.actor.state_dict()}  # fmt: skip
    torch.save(v1, tmp_path / "policy_v1.pt")
    model.save_policy(tmp_path / "policy.pt")
    v2 = {**torch.load(tmp_path / "policy.pt", weights_only=True), "version": 2}
    del v2["sha256"]  # version 2 had no checksum
    torch.save(v2, tmp_path / "policy_v2.pt")
    obs = np.ones((4, 3), np.float32)
    for file in ("policy_v1.pt", "policy_v2.pt"):
        assert np.array_equal(Policy.load(tmp_path / file).predict(obs)[0], model.predict(obs)[0]), file


def test_a_damaged_or_edited_policy_file_is_refused(tmp_path, small_config, flip_a_byte_of):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.save_policy(tmp_path / "policy.pt")
    data = torch.load(tmp_path / "policy.pt", weights_only=True)
    data["architecture"]["activation"] = "tanh"  # no shape changes: the ReLU-trained weights would run through tanh
    torch.save(data, tmp_path / "edited.pt")
    with pytest.raises(CheckpointError, match=r"edited.pt does not match the sha256 it holds.*save_policy"):
        Policy.load(tmp_path / "edited.pt")

    weight = model.actor.state_dict()["net.hidden.0.weight"]
    flip_a_byte_of(tmp_path / "policy.pt", weight)
    damaged = torch.load(tmp_path / "policy.pt", weights_only=True)["actor"]["net.hidden.0.weight"]
    assert not torch.equal(damaged, weight)  # torch alone reads another actor without a word
    with pytest.raises(CheckpointError, match=r"policy.pt does not match the sha256 it holds: it was damaged"):
        Policy.load(tmp_path / "policy.pt")

    for version in ("3", [3], 3.0, True, 99):
        torch.save({**data, "version": version}, tmp_path / "other_version.pt")
        with pytest.raises(
            CheckpointError, match=rf"policy file of version {re.escape(repr(version))}; this td3_steps"
        ):
            Policy.load(tmp_path / "other_version.pt")

    with pytest.raises(ValueError, match="Unknown device 'tpu'"):
        Policy.load(tmp_path / "edited.pt", device="tpu")

    del data["actor"]
    torch.save(data, tmp_path / "no_actor.pt")
    with pytest.raises(CheckpointError, match=r"no_actor.pt lacks actor: it was edited"):
        Policy.load(tmp_path / "no_actor.pt")


def test_a_policy_file_cut_short_or_pickled_by_another_program_is_said_in_our_words(tmp_path, small_config):
    """A file cut short ended in torch's words, cut mid-sentence ("... This is an internal miniz error. If you are
    seeing this error, there is a high likelihood that your checkpoint file is)"), and another program's pickle
    printed torch's warning to "please file an issue"."""
    TD3("Pendulum-v1", small_config, seed=0, device="cpu").save_policy(tmp_path / "policy.pt")
    (tmp_path / "cut.pt").write_bytes((tmp_path / "policy.pt").read_bytes()[:500])
    with pytest.raises(CheckpointError, match=r"cut.pt is damaged, .*: it is cut short \(a copy or a download that"):
        Policy.load(tmp_path / "cut.pt")
    (tmp_path / "pickle.pt").write_bytes(pickle.dumps({"actor": 1}, protocol=4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            CheckpointError,
            match=r"pickle.pt is damaged, .*: torch cannot read it \(UnpicklingError: it is not a torch file of tensors\)",
        ):
            Policy.load(tmp_path / "pickle.pt")


def test_strides_and_flags_torch_reads_from_a_file_are_not_its_contents(tmp_path, small_config):
    """A file's pickle gives each tensor its strides and requires_grad. A flipped byte there left the values as
    they were, yet the digest failed inside torch (a byte view of a stride-0 tensor) and Actor called numpy() on
    bounds that required grad: the file loads, or is refused as damaged, but nothing raises from torch."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.save_policy(tmp_path / "policy.pt")
    data = torch.load(tmp_path / "policy.pt", weights_only=True)
    low, bias = data["actor"]["action_low"], data["actor"]["net.out.bias"]
    data["actor"]["action_low"] = low.clone().requires_grad_(True)
    data["actor"]["net.out.bias"] = bias.clone().as_strided(bias.shape, (0,))  # one value: any stride reads the same
    torch.save(data, tmp_path / "same_values.pt")
    assert torch.equal(Policy.load(tmp_path / "same_values.pt").actor.state_dict()["net.out.bias"], bias)
    data["actor"]["net.hidden.0.bias"] = torch.zeros(1).expand(data["actor"]["net.hidden.0.bias"].shape)
    torch.save(data, tmp_path / "repeated.pt")
    with pytest.raises(CheckpointError, match="does not match the sha256 it holds"):
        Policy.load(tmp_path / "repeated.pt")


def test_an_evaluation_episode_that_never_ends_is_named(monkeypatch, small_config):
    """Pendulum made without gymnasium.make has no TimeLimit: evaluation ran forever."""
    from gymnasium.envs.classic_control import PendulumEnv

    monkeypatch.setattr(td3_steps.policy, "UNTIMED_EPISODE_LIMIT", 50)
    model = TD3(PendulumEnv(), small_config, seed=0, device="cpu")
    with pytest.raises(ValueError, match=r"episode 1 has run 50 steps without ending: .* no time limit.*TimeLimit\("):
        model.evaluate(1)
    assert len(TD3(make_env("Pendulum-v1"), small_config).policy.episode_returns(1)) == 1  # 200 steps: it has one
    with pytest.raises(ValueError, match=r"registered environment id .*gymnasium.register.*model.save\(path\)"):
        model.save_policy("unused.pt")


def test_an_actor_made_for_other_actions_is_refused_when_the_policy_is_made():
    """An actor of two actions gave numpy's "cannot reshape array of size 2 into shape (1,)" at predict; one of
    bounds [-1, 1] for Pendulum's [-2, 2] acted in half the range without a word."""
    for low, high in (([-2.0, -2.0], [2.0, 2.0]), ([-1.0], [1.0])):
        with pytest.raises(ValueError, match=r"Policy: the actor acts in low .* this environment's actions are low"):
            Policy(Actor(3, low, high, net_arch=(8,)), "Pendulum-v1")
    assert Policy(Actor(3, [-2.0], [2.0], net_arch=(8,)), "Pendulum-v1").predict(np.zeros(3))[0].shape == (1,)


def test_an_exploration_noise_that_is_no_sigma_is_refused_when_the_policy_is_made():
    """exploration_noise="x" gave torch's "only integer tensors of a single element can be converted to an index"
    at the first noisy predict; NaN gave NaN actions, silently."""
    actor = Actor(3, [-2.0], [2.0], net_arch=(8,))
    for sigma in ("x", float("nan"), -0.1, None, True):
        with pytest.raises(ValueError, match=r"exploration_noise is sigma, .* a finite number >= 0, e\.g\. 0\.1"):
            Policy(actor, "Pendulum-v1", exploration_noise=sigma)
    assert Policy(actor, "Pendulum-v1", exploration_noise=0).predict(np.zeros(3), deterministic=False)[0].shape == (1,)


def test_a_noise_or_generator_of_another_kind_is_refused_when_the_policy_is_made():
    """generator=3 failed at the first noisy predict inside torch's randn, noise="ou" with "'str' object is not
    callable"."""
    actor = Actor(3, [-2.0], [2.0], net_arch=(8,))
    with pytest.raises(
        TypeError, match=r"Policy: generator must be a torch.Generator or None, got 3: torch.Generator\(\)"
    ):
        Policy(actor, "Pendulum-v1", generator=3)
    with pytest.raises(TypeError, match=r"noise is the acting noise object, td3_steps.GaussianNoise\(\) or Orn"):
        Policy(actor, "Pendulum-v1", noise="ou")


def test_a_file_that_names_its_env_by_id_alone_says_what_loading_leaves_out(tmp_path, small_config):
    """A policy or checkpoint of an env made with arguments names only its id: loading made Pendulum-v1 with g=10.0
    in silence. Saving says so (pointing at the caller's line), once per line; Policy.load, like TD3.load, takes
    the environment to act in, by name."""
    model = TD3(gym.make("Pendulum-v1", g=2.0), small_config, seed=0, device="cpu")
    said = r"names its environment by id, 'Pendulum-v1', and loading makes it without g=2\.0: pass the environment"
    with pytest.warns(
        UserWarning, match=rf"A policy file {said} when loading it, Policy\.load\(path, env=\.\.\.\)"
    ) as caught:
        model.save_policy(tmp_path / "policy.pt")
    assert caught[0].filename == __file__
    with pytest.warns(UserWarning, match=rf"A checkpoint {said} when loading it, TD3\.load\(path, env=\.\.\.\)"):
        model.save(tmp_path / "agent")
    policy = Policy.load(tmp_path / "policy.pt", env=gym.make("Pendulum-v1", g=2.0))
    assert policy.evaluate(1) == model.evaluate(1)
    assert Policy.load(tmp_path / "policy.pt")._env.unwrapped.g == 10.0  # by default, the id's env
    with pytest.raises(TypeError, match=r"Policy.load\(path, env=\.\.\.\): the environment is passed by name"):
        Policy.load(tmp_path / "policy.pt", gym.make("Pendulum-v1", g=2.0))
    with pytest.raises(TypeError, match=r"the second argument is the device \(got 'Pendulum-v1'\)"):
        Policy.load(tmp_path / "policy.pt", "Pendulum-v1")  # not "Unknown device"
    with pytest.raises(
        ValueError, match=r"'cpu' names a device, not an environment: give it as device='cpu' \(TD3.load"
    ):
        TD3.load(tmp_path / "agent", "cpu")  # TD3.load's order is Stable-Baselines3's: (path, env, device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an env made from its id alone: nothing to say
        TD3("Pendulum-v1", small_config, seed=0, device="cpu").save_policy(tmp_path / "plain.pt")


def test_a_file_loaded_into_an_env_of_other_bounds_is_refused(tmp_path, small_config):
    """Policy.load said to give "Actor(obs_dim, ...)", which a file's reader cannot; TD3.load took the other bounds
    in silence, its actor acting in the file's [-2, 2] where the env takes [-1, 1]."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.save(tmp_path / "agent")
    model.save_policy(tmp_path / "policy.pt")
    other = gym.wrappers.RescaleAction(gym.make("Pendulum-v1"), -1.0, 1.0)
    bounds = (
        r"the actor acts in low \[-2.0\], high \[2.0\], but this environment's actions are low \[-1.0\], high \[1.0\]"
    )
    with pytest.raises(CheckpointError, match=rf"policy.pt holds an actor for other action bounds: {bounds}"):
        Policy.load(tmp_path / "policy.pt", env=other)
    with pytest.raises(CheckpointError, match=rf"agent does not fit this agent: in the checkpoint, {bounds}"):
        TD3.load(tmp_path / "agent", env=other)


def test_predict_an_empty_batch_and_a_tensor_that_requires_grad(small_config):
    """An empty batch gave numpy's "cannot reshape array of size 0", and a tensor that requires grad torch's "Can't
    call numpy() on Tensor that requires grad": an empty batch gets an empty batch of actions, as in
    Stable-Baselines3, and a tensor is read detached."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    for deterministic in (True, False):
        actions, _ = model.predict(np.zeros((0, 3)), deterministic=deterministic)
        assert actions.shape == (0, 1) and actions.dtype == np.float32
    action, _ = model.predict(np.zeros(3))
    assert np.array_equal(model.predict(torch.zeros(3, requires_grad=True))[0], action)
    batch, _ = model.predict(np.zeros((2, 3)))  # a batch of 2 may take other kernels than one of 1: other last bits
    assert np.array_equal(model.predict(torch.zeros(2, 3, requires_grad=True))[0], batch)


def test_predict_refuses_observations_that_are_no_real_numbers_and_reads_a_bfloat16_tensor(small_config):
    """A complex observation lost its imaginary part (numpy's ComplexWarning, and an action all the same), strings
    were parsed as numbers (in an object array too), a meta tensor raised torch's NotImplementedError ("Cannot copy
    out of meta tensor") and a bfloat16 one "Got unsupported ScalarType BFloat16", a torch dtype numpy lacks. An
    object array of numbers is read, and a bfloat16 tensor keeps float32's range (float16's ends at 65504)."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    for bad, dtype in ((np.array([1 + 5j, 0, 0]), "complex128"), (np.array(["1", "0", "0"]), "<U1")):
        with pytest.raises(ValueError, match=rf"of numbers, got ndarray .*\({dtype} values are not real numbers\)"):
            model.predict(bad)
    with pytest.raises(ValueError, match=r"of numbers, got ndarray .*\(<U\d+ values are not real numbers\)"):
        model.predict(np.array(["1", 0, 0], dtype=object))
    with pytest.raises(ValueError, match="predict: the observation is a tensor on the 'meta' device, which holds a"):
        model.predict(torch.zeros(3, device="meta"))
    action, _ = model.predict(np.zeros(3))
    assert np.array_equal(model.predict(torch.zeros(3, dtype=torch.bfloat16))[0], action)
    assert np.array_equal(model.predict(np.array([0, 0.0, 0], dtype=object))[0], action)
    wide = torch.tensor([1e5, 0, 0], dtype=torch.bfloat16)
    assert np.array_equal(model.predict(wide)[0], model.predict(wide.float().numpy())[0])


def test_predict_reads_an_object_array_by_the_values_it_holds(small_config):
    """An object array of strings was parsed as numbers, silently, where an array of strings is refused (predict's
    "values that are no real numbers (complex, strings)"); one of Python numbers is read as numbers."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    for bad, dtype in (
        (np.array(["1", "0", "0"], dtype=object), "<U1"),
        (np.array([1j, 0, 0], dtype=object), "complex"),
    ):
        with pytest.raises(ValueError, match=rf"of numbers, got ndarray .*\({dtype}\S* values are not real numbers\)"):
            model.predict(bad)
    action, _ = model.predict(np.array([0.5, -0.25, 1.0]))
    assert np.array_equal(model.predict(np.array([0.5, -0.25, 1], dtype=object))[0], action)


class ContainsOrFails(gym.Env):
    """An env that asserts action_space.contains(action) in step, as some do; `dtype` and bounds of one's choice."""

    observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)

    def __init__(self, low, high, dtype=np.float32):
        self.action_space = spaces.Box(np.array(low, dtype), np.array(high, dtype), dtype=dtype)
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.np_random.uniform(-1, 1, 2).astype(np.float32), {}

    def step(self, action):
        assert self.action_space.contains(action), f"{action!r} is not in {self.action_space}"
        self.t += 1
        return self.np_random.uniform(-1, 1, 2).astype(np.float32), 0.0, False, self.t >= 5, {}


def test_an_action_that_leaves_td3_lies_in_the_action_space(small_config):
    """A saturated tanh put m + h tanh(.) a float32 step below low (0.6559081 for 0.6559083), and float32(0.1) lies
    above a float64 bound of 0.1: an env that asserts action_space.contains(action) failed. predict, evaluation and
    the training step give the env actions of its dtype, within its bounds."""
    env = ContainsOrFails([0.6559083], [4.768564])
    model = TD3(env, small_config, seed=0, device="cpu")
    with torch.no_grad():
        model.actor.net.out.bias.fill_(-100.0)  # tanh saturates at -1
        assert float(model.actor(torch.zeros(1, 2))[0, 0]) < 0.6559083  # the float32 arithmetic, as it was returned
    action, _ = model.predict(np.zeros(2, np.float32))
    assert env.action_space.contains(action) and action[0] == np.float32(0.6559083)
    assert all(env.action_space.contains(a) for a in model.predict(np.zeros((3, 2), np.float32))[0])
    model.evaluate(1)

    env = ContainsOrFails([-0.1, -0.1], [0.1, 0.1], np.float64)
    model = TD3(env, small_config.replace(exploration_noise=5.0), seed=0, device="cpu")  # noise clipped at the bounds
    model.learn(300)  # 100 random actions, then explored ones, clipped onto the bounds, in training's env.step
    for deterministic in (True, False):
        action, _ = model.predict(np.zeros(2, np.float32), deterministic=deterministic)
        assert action.dtype == np.float64 and env.action_space.contains(action)


def test_an_action_space_of_shape_nothing_gives_an_array(small_config, toy_env):
    """np.clip of a 0-d action gave a numpy scalar, where predict returns arrays."""
    model = TD3(toy_env(action_space=spaces.Box(-1.0, 1.0, (), np.float32)), small_config, device="cpu")
    action, _ = model.predict(np.zeros(2, np.float32))
    assert isinstance(action, np.ndarray) and action.shape == () and model.action_space.contains(action)
    assert model.learn(110).num_timesteps == 110


# ---------------------------------------------------------------- found by mutation testing
def test_an_actor_of_other_bounds_or_no_env_id_is_refused_when_the_policy_is_made():
    with pytest.raises(ValueError, match=r"Policy: the actor acts in low \[-2.0\], high \[1.0\]"):
        Policy(Actor(3, [-2.0], [1.0], net_arch=(8,)), "Pendulum-v1")  # the high bound alone differs
    with pytest.raises(TypeError, match="env_id must be an environment id such as 'Pendulum-v1', got 3"):
        Policy(Actor(3, [-2.0], [2.0], net_arch=(8,)), "Pendulum-v1", env_id=3)


@pytest.mark.parametrize("seed", [0, 7])
def test_a_policys_default_generator_is_its_seeds_acting_stream(seed):
    """One seed: policies loaded from two seeds' files do not explore with the same noise."""
    policy = Policy(Actor(3, [-2.0], [2.0], net_arch=(8,)), "Pendulum-v1", seed=seed)
    expected = torch.Generator().manual_seed(derived_seed(seed, ACTING))
    assert torch.equal(policy.generator.get_state(), expected.get_state())


def test_an_edited_seed_or_an_edited_file_of_version_3_is_refused(tmp_path, small_config):
    """The seed chooses the episodes evaluate scores: the digest covers it. Version 3 files hold a digest too."""
    TD3("Pendulum-v1", small_config, seed=3, device="cpu").save_policy(tmp_path / "policy.pt")
    data = torch.load(tmp_path / "policy.pt", weights_only=True)
    torch.save({**data, "seed": 4}, tmp_path / "edited.pt")
    with pytest.raises(CheckpointError, match="does not match the sha256 it holds"):
        Policy.load(tmp_path / "edited.pt")
    del data["seed"]
    data["version"] = 3
    data["sha256"] = policy_digest(data)
    data["actor"]["net.out.bias"] = data["actor"]["net.out.bias"] + 1.0  # edited after the digest
    torch.save(data, tmp_path / "v3.pt")
    with pytest.raises(CheckpointError, match="does not match the sha256 it holds"):
        Policy.load(tmp_path / "v3.pt")


def test_a_policy_loaded_into_an_env_of_discrete_actions_is_refused_as_a_policy_made_there_is(tmp_path, small_config):
    """MountainCar-v0 observes as MountainCarContinuous-v0 does, but acts in Discrete(3): Policy.load read the bounds
    of a space that has none ("'Discrete' object has no attribute 'low'"). gymnasium's own envs are not checked when
    given (as_env), so only Policy.load's own check can say so."""
    TD3("MountainCarContinuous-v0", small_config, seed=0, device="cpu").save_policy(tmp_path / "policy.pt")
    for other in ("MountainCar-v0", make_env("MountainCar-v0")):
        with pytest.raises(SpaceError, match=r"bounded continuous actions.*Discrete\(3\).* such as DQN"):
            Policy.load(tmp_path / "policy.pt", env=other)


def test_a_policy_loaded_into_another_env_names_it(tmp_path, small_config, toy_env):
    """A file loaded into another registered env acts there and is saved with that env's id; into an env of other
    observations it is refused with their shape (not as a damaged file)."""
    TD3("Pendulum-v1", small_config, seed=0, device="cpu").save_policy(tmp_path / "policy.pt")
    gym.register("td3_steps_test/OtherPendulum-v0", entry_point="gymnasium.envs.classic_control:PendulumEnv",
                 max_episode_steps=20)  # fmt: skip
    try:
        policy = Policy.load(tmp_path / "policy.pt", env="td3_steps_test/OtherPendulum-v0")
        assert policy.env_id == "td3_steps_test/OtherPendulum-v0"
        policy.save(tmp_path / "again.pt")
        assert torch.load(tmp_path / "again.pt", weights_only=True)["env_id"] == "td3_steps_test/OtherPendulum-v0"
    finally:
        del gym.registry["td3_steps_test/OtherPendulum-v0"]
    other = toy_env(observation_space=spaces.Box(-1.0, 1.0, (4,), np.float32),
                    action_space=spaces.Box(-2.0, 2.0, (1,), np.float32))  # fmt: skip
    with pytest.raises(CheckpointError, match=r"saved for observations of shape \(3,\)"):
        Policy.load(tmp_path / "policy.pt", env=other)


@pytest.mark.parametrize("stream", ["x", -1, 1.5, None])
def test_episode_returns_names_a_stream_that_is_no_stream(small_config, stream):
    """stream="x" failed inside numpy's seeding: "unrecognized seed string"."""
    policy = TD3("Pendulum-v1", small_config, seed=0, device="cpu").policy
    with pytest.raises(ValueError, match=r"episode_returns: stream must be a seed stream of td3_steps.seeding"):
        policy.episode_returns(1, stream=stream)
