"""td3_steps.networks: step 2 (the actor), step 3 (the critics), the targets, and the network options."""

import copy
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

from td3_steps import TD3, Actor, CheckpointError, Critic, Critics, Policy, SpaceError, devices, make_target
from td3_steps.networks import MLP, activation_layer, acts_otherwise_in_training

LOW = torch.tensor([0.0, -1.0])  # asymmetric bounds: half-ranges 1 and 2, centres 1 and 1
HIGH = torch.tensor([2.0, 3.0])


# ---------------------------------------------------------------- step 2: actor
def test_actor_respects_each_dimensions_own_bounds():
    actor = Actor(obs_dim=3, action_low=LOW, action_high=HIGH, net_arch=(16,))
    extreme = torch.cat([torch.randn(200, 3) * 1e3, torch.zeros(1, 3)])
    actions = actor(extreme)
    assert actions.shape == (201, 2)
    assert torch.all(actions >= LOW) and torch.all(actions <= HIGH)
    # with a zero output layer tanh(0) = 0, so the action is each dimension's centre
    torch.nn.init.zeros_(actor.net.out.weight)
    torch.nn.init.zeros_(actor.net.out.bias)
    assert torch.allclose(actor(extreme), torch.tensor([1.0, 1.0]).expand(201, 2))


def test_actor_reaches_the_asymmetric_extremes():
    actor = Actor(obs_dim=1, action_low=LOW, action_high=HIGH, net_arch=(4,))
    torch.nn.init.zeros_(actor.net.out.weight)
    with torch.no_grad():
        actor.net.out.bias.copy_(torch.tensor([50.0, -50.0]))  # tanh -> (1, -1)
    assert torch.allclose(actor(torch.zeros(1, 1)), torch.tensor([[2.0, -1.0]]))


@pytest.mark.parametrize(
    ("low", "high", "words"),
    [
        ([2.0], [-2.0], "needs low < high"),  # swapped
        ([0.0, -1.0], [0.0, 1.0], "needs low < high"),  # an empty range
        ([-np.inf], [np.inf], "infinite"),
        ([-1.0, -1.0], [1.0], "one low and one high per dimension"),
    ],
)
def test_an_actor_with_bounds_it_cannot_act_in_is_refused(low, high, words):
    with pytest.raises(SpaceError, match=words):
        Actor(obs_dim=3, action_low=low, action_high=high)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Actor(0, [-1.0], [1.0]), r"Actor: obs_dim must be a whole number >= 1 .*got 0\."),
        (lambda: Actor("3", [-1.0], [1.0]), r"Actor: obs_dim must be a whole number >= 1 .*got '3'\."),
        (lambda: Actor(3, [-1.0], [1.0], net_arch=400), r"Actor: net_arch must be a non-empty sequence .*got 400\."),
        (lambda: Actor(3, [-1.0], [1.0], net_arch=(0,)), r"Actor: net_arch .*got \(0,\)\."),
        (lambda: Actor(3, [-1.0], [1.0], net_arch=()), r"Actor: net_arch .*got \(\)\."),
        (lambda: Actor(3, [-1.0], [1.0], activation="Relu"), r"Actor: activation must be one of 'relu', .*got 'Relu'"),
        (lambda: Critic(3, 1, activation=["relu"]), r"Critic: activation must be one of .*got \[.relu.\]"),
        (lambda: Critic(3, 0), r"Critic: action_dim must be a whole number >= 1 .*got 0\."),
        (lambda: Critic(-1, 1), r"Critic: obs_dim must be a whole number >= 1 .*got -1\."),
        (lambda: Critic(3, 1, (400.5,)), r"Critic: net_arch .*got \(400.5,\)\."),
        (lambda: Critics(3, 1.0), r"Critics: action_dim must be a whole number >= 1 .*got 1.0\."),
        (lambda: Critics(3, 1, n_critics=0), r"Critics: n_critics must be a whole number >= 1 .*got 0\."),
    ],
)
def test_networks_made_by_hand_refuse_sizes_they_cannot_be_built_from(make, words):
    """The notebooks have students make these directly: a ValueError naming the argument, not torch's error from
    inside nn.Linear, nor a network of zero-width layers accepted with a warning."""
    with pytest.raises(ValueError, match=words):
        make()


class NoFeatures(nn.Module):
    """A module whose features_dim is no size: it returns nothing."""

    features_dim = 0


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: Actor(3, "a", 1.0), TypeError, r"Actor: action_low must be a real number or an array of them, one per"
         r" action dimension, such as env.action_space.low; got 'a'\."),
        (lambda: Actor(3, -1.0, None), TypeError, r"Actor: action_high must be a real number .*; got None\."),
        (lambda: Actor(3, np.array([-1 + 1j]), [1.0]), TypeError, r"action_low must be a real number"),
        (lambda: Actor(3, torch.zeros(1, device="meta"), [1.0]), ValueError,
         r"Actor: action_low is a tensor on the 'meta' device, which holds a shape but no values"),
        (lambda: Actor(3, [-1.0], [1.0], net=3), TypeError, r"Actor: net must be a torch.nn.Module .*; got 3\."),
        (lambda: Critic(3, 1, net="mlp"), TypeError, r"Critic: net must be a torch.nn.Module .*; got 'mlp'\."),
        (lambda: Actor(3, [-1.0], [1.0], features=nn.Linear(3, 3)), TypeError,
         r"features must be a features extractor, a torch.nn.Module whose features_dim .*; got Linear\("),
        (lambda: Critics(3, 1, features=3), TypeError, r"features must be a features extractor.*; got 3\."),
        (lambda: Critics(3, 1, features=SimpleNamespace(features_dim=3)), TypeError,
         r"features must be a features extractor, a torch.nn.Module .*; got namespace\(features_dim=3\)\."),
        (lambda: Actor(3, [-1.0], [1.0], features=NoFeatures()), TypeError,
         r"features must be a features extractor.*; got NoFeatures\(\)\."),
    ],
)  # fmt: skip
def test_networks_made_by_hand_refuse_bounds_and_modules_of_the_wrong_kind(make, error, words):
    """torch's "new(): invalid data type 'str'" or "must be real number, not NoneType" for a bound, its
    NotImplementedError for a meta tensor, a complex bound's imaginary part dropped; a net that is no module kept,
    to fail at the first forward ("'int' object is not callable"); "'Linear' object has no attribute 'features_dim'"."""
    with pytest.raises(error, match=words):
        make()


def test_an_actor_reads_bounds_given_as_an_object_array_of_numbers():
    """An object array of numbers was refused as "no real number or array of them" (torch reads no object array);
    one of strings is still refused."""
    actor = Actor(3, np.array([-1, -2.5], dtype=object), np.array([1.0, 2.5], dtype=object), net_arch=(8,))
    assert actor.action_low.tolist() == [-1.0, -2.5] and actor.action_high.tolist() == [1.0, 2.5]
    with pytest.raises(TypeError, match="action_low must be a real number or an array of them"):
        Actor(3, np.array(["-1"], dtype=object), [1.0], net_arch=(8,))


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda a, c: a(torch.zeros(8, 5)), ValueError, r"The actor takes a torch.float32 tensor of shape \(B, 3\): one"
         r" observation of 3 values per row; got shape \(8, 5\)\."),
        (lambda a, c: a(np.zeros((8, 3), np.float32)), TypeError,
         r"The actor takes .*; got an object of type ndarray\. Convert the observations first: torch.as_tensor"),
        (lambda a, c: a(torch.zeros(8, 3, dtype=torch.float64)), TypeError,
         r"got a torch.float64 tensor\. Convert the observations first: \.to\(torch.float32\)\."),
        (lambda a, c: a(torch.zeros(8, 3, device="meta")), ValueError, r"on cpu; got a tensor on meta\. Move the observations first: \.to\('cpu'\)\."),
        (lambda a, c: c(torch.zeros(8, 5), torch.zeros(8, 1)), ValueError,
         r"A critic takes a torch.float32 tensor of shape \(B, 4\): per row, the observation \(3 values\) and the"
         r" action \(1\) side by side; got shape \(8, 6\)\."),
        (lambda a, c: c.q1(torch.zeros(8, 3), torch.zeros(8, 2)), ValueError, r"A critic takes .*got shape \(8, 5\)"),
        (lambda a, c: c(torch.zeros(8, 3), torch.zeros(8)), ValueError,
         r"A critic takes the actions as a tensor of shape \(B, 1\), one row per observation; got actions of shape"
         r" \(8,\) for observations of shape \(8, 3\)\. Use action.unsqueeze\(1\)"),
        (lambda a, c: c.q1(torch.zeros(8, 3), torch.zeros(4, 1)), ValueError, r"got actions of shape \(4, 1\) for"),
        (lambda a, c: c.members[0](torch.zeros(8, 3), torch.zeros(8)), ValueError,
         r"got actions of shape \(8,\) for observations of shape \(8, 3\)\. Use action.unsqueeze\(1\)"),
        (lambda a, c: c(torch.zeros(8, 3), np.zeros((8, 1), np.float32)), TypeError,
         r"A critic: action must be a torch.Tensor, .*; got an object of type ndarray\. .*as_tensor\(action"),
        (lambda a, c: c(torch.zeros(8, 3), torch.zeros(8, 1, device="meta")), ValueError,
         r"A critic: everything must be on its weights' device, cpu; got action on meta\. Move it first:"
         r" action.to\('cpu'\)\."),
        (lambda a, c: c.q1(torch.zeros(8, 3, device="meta"), torch.zeros(8, 1)), ValueError,
         r"got obs on meta\. Move it first: obs.to\('cpu'\)"),
        (lambda a, c: c(torch.zeros(3), a(torch.zeros(3)).reshape(-1, 1)), ValueError,  # said: reshape the action
         r"A critic takes the observations as a tensor of shape \(B, 3\), one row each; got shape \(3,\)\. One"
         r" observation is a batch of one: obs.unsqueeze\(0\)"),
        (lambda a, c: c(torch.zeros(2, 4, 3), torch.zeros(2, 4, 1)), ValueError, r"got shape \(2, 4, 3\)\.$"),
    ],
)  # fmt: skip
def test_inputs_of_the_wrong_shape_or_kind_are_named_not_torchs_matrix_error(call, error, words):
    """Students call the networks directly in notebooks 02 and 03. torch says 'mat1 and mat2 shapes cannot be
    multiplied (8x5 and 3x400)', and "Tensors must have same number of dimensions: got 2 and 1" for a (B,) action;
    the network says what it takes. The check runs only once torch has raised."""
    actor, critics = Actor(3, [-1.0], [1.0], net_arch=(16, 16)), Critics(3, 1, net_arch=(16, 16))
    with pytest.raises(error, match=words):
        call(actor, critics)
    assert actor(torch.zeros(8, 3)).shape == (8, 1) and critics.q1(torch.zeros(8, 3), torch.zeros(8, 1)).shape == (8, 1)


def test_the_actor_keeps_its_own_copy_of_the_bounds():
    """An env's action_space.low is a float32 array, which torch.as_tensor would share rather than copy."""
    low, high = np.array([-1.0, 0.0], dtype=np.float32), np.array([1.0, 2.0], dtype=np.float32)
    actor = Actor(obs_dim=3, action_low=low, action_high=high, net_arch=(4,))
    actor.load_state_dict({**actor.state_dict(), "action_low": torch.tensor([-5.0, -5.0])})
    assert actor.action_low.tolist() == [-5.0, -5.0]
    assert low.tolist() == [-1.0, 0.0] and high.tolist() == [1.0, 2.0]


# ---------------------------------------------------------------- step 3: critics and targets
def test_twin_critics_differ_and_targets_are_exact_frozen_copies():
    torch.manual_seed(0)
    critics = Critics(obs_dim=3, action_dim=2, net_arch=(8, 8))
    targets = make_target(critics)
    obs, action = torch.randn(5, 3), torch.randn(5, 2)
    q1, q2 = critics(obs, action)
    assert q1.shape == q2.shape == (5, 1)
    assert not torch.allclose(q1, q2)  # independently initialised
    t1, t2 = targets(obs, action)
    assert torch.equal(t1, q1) and torch.equal(t2, q2)
    assert all(not p.requires_grad for p in targets.parameters())
    assert all(p.requires_grad for p in critics.parameters())
    assert torch.equal(critics.q1(obs, action), q1)


def test_n_critics():
    critics = Critics(obs_dim=2, action_dim=1, net_arch=(4,), n_critics=3)
    assert len(critics(torch.zeros(2, 2), torch.zeros(2, 1))) == 3


# ---------------------------------------------------------------- the networks TD3 builds from its config
def test_activation_and_layer_norm_shape_the_mlps(toy_env, toy_config):
    model = TD3(toy_env(), toy_config.replace(activation="tanh", layer_norm=True), seed=0, device="cpu")
    for mlp in (model.actor.net, model.critics.members[0].net, model.critics.members[1].net):
        kinds = [type(layer) for layer in mlp.hidden]
        assert kinds == [nn.Linear, nn.LayerNorm, nn.Tanh] * 2
    model.learn(15)
    assert model.critic_updates == 5


@pytest.mark.parametrize("activation", ["relu", "leaky_relu", "elu"])
@pytest.mark.parametrize("layer_norm", [False, True])
def test_in_place_activations_give_the_same_values_and_gradients_bit_for_bit(activation, layer_norm):
    torch.manual_seed(0)
    mlp = MLP(5, (32, 16), 2, activation=activation, layer_norm=layer_norm)
    in_place = [layer for layer in mlp.hidden if getattr(layer, "inplace", False)]
    assert len(in_place) == (2 if activation in ("relu", "leaky_relu") else 0)  # ELU's in-place gradient differs
    fresh = copy.deepcopy(mlp)
    for layer in fresh.hidden:
        if hasattr(layer, "inplace"):
            layer.inplace = False
    x = torch.randn(64, 5)
    outputs, grads = [], []
    for net in (mlp, fresh):
        out = net(x)
        (out**2).sum().backward()
        outputs.append(out.detach())
        grads.append([p.grad for p in net.parameters()])
    assert torch.equal(outputs[0], outputs[1])
    assert all(torch.equal(a, b) for a, b in zip(*grads))


class ActorNet(nn.Module):
    def __init__(self, in_dim=3, out_dim=1):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, 16), nn.Tanh(), nn.Linear(16, out_dim))

    def forward(self, x):
        return 10 * self.body(x)  # large outputs: the Actor's tanh must still keep the bounds


def test_custom_modules_for_actor_and_critics(tmp_path, small_config, params, same):
    critic_net = nn.Sequential(nn.Linear(3 + 1, 16), nn.ReLU(), nn.Linear(16, 1))
    model = TD3(
        "Pendulum-v1", small_config.replace(n_critics=3), seed=0, device="cpu", actor_net=ActorNet(),
        critic_net=critic_net,
    )  # fmt: skip
    weights = [m.net[0].weight for m in model.critics.members]
    assert not torch.equal(weights[0], weights[1]) and not torch.equal(weights[1], weights[2])
    assert not torch.equal(weights[0], critic_net[0].weight)  # re-initialised copies
    model.learn(110)
    actions, _ = model.predict(np.random.default_rng(0).normal(size=(50, 3)) * 10)
    assert np.all(np.abs(actions) <= 2.0)
    model.save(tmp_path / "ckpt")
    with pytest.raises(CheckpointError, match="custom actor_net: pass the same module"):
        TD3.load(tmp_path / "ckpt", device="cpu", critic_net=critic_net)
    loaded = TD3.load(tmp_path / "ckpt", device="cpu", actor_net=ActorNet(), critic_net=critic_net)
    assert same(params(loaded.critics), params(model.critics))
    model.save_policy(tmp_path / "policy.pt")
    with pytest.raises(CheckpointError, match="Policy.load\\(path, actor_net=...\\)"):
        Policy.load(tmp_path / "policy.pt")
    assert np.array_equal(Policy.load(tmp_path / "policy.pt", actor_net=ActorNet()).predict(np.ones(3))[0],
                          model.predict(np.ones(3))[0])  # fmt: skip
    with pytest.raises(CheckpointError, match="do not fit the actor_net passed: pass the module it was trained with"):
        Policy.load(tmp_path / "policy.pt", actor_net=ActorNet(in_dim=3, out_dim=1).body[:1].append(nn.Linear(16, 1)))
    with pytest.raises(
        CheckpointError,
        match="holds weights that do not fit the actor_net and critic_net passed: pass the module.s. it was trained",
    ):
        TD3.load(tmp_path / "ckpt", device="cpu", actor_net=nn.Linear(3, 1), critic_net=critic_net)


def test_a_custom_actor_with_dropout_or_batch_norm_acts_in_eval_mode_and_trains_in_training_mode(small_config):
    """Acting, predict and evaluate ran a custom actor_net in training mode: with dropout, predict(deterministic=True)
    gave another action each call and evaluate another return; with batch norm, acting on one observation failed."""

    def actor_net(layer):
        return lambda: nn.Sequential(nn.Linear(3, 16), layer, nn.ReLU(), nn.Linear(16, 1))

    obs = np.array([1.0, 0.0, 0.0], np.float32)
    dropout = TD3("Pendulum-v1", small_config, seed=0, device="cpu", actor_net=actor_net(nn.Dropout(0.5)))
    actions = [dropout.predict(obs)[0] for _ in range(5)]
    assert all(np.array_equal(action, actions[0]) for action in actions) and dropout.actor.training
    assert dropout.evaluate(1) == dropout.evaluate(1)
    norm = TD3("Pendulum-v1", small_config, seed=0, device="cpu", actor_net=actor_net(nn.BatchNorm1d(16)))
    norm.learn(140)  # from step 101 it acts with its actor, on one observation at a time
    assert norm.critic_updates == 40 and norm.actor.training
    assert norm.actor.net[1].num_batches_tracked == 20  # the actor's updates, in training mode; acting is not counted
    assert np.isfinite(norm.evaluate(1)[0])
    plain = [TD3("Pendulum-v1", small_config.replace(layer_norm=flag), device="cpu") for flag in (False, True)]
    assert not any(acts_otherwise_in_training(model.actor) for model in plain)  # so it acts as it is, at no cost
    for changing in (
        nn.utils.parametrizations.spectral_norm(nn.Linear(3, 16)),
        nn.utils.spectral_norm(nn.Linear(3, 16)),
    ):
        assert acts_otherwise_in_training(nn.Sequential(changing, nn.ReLU()))  # its power iteration runs in training
    frozen = TD3("Pendulum-v1", small_config, seed=0, device="cpu", actor_net=actor_net(nn.BatchNorm1d(16)))
    frozen.actor.net[1].eval()  # a part kept in eval mode, such as a pretrained backbone's batch norm
    frozen.predict(obs)
    assert frozen.actor.training and not frozen.actor.net[1].training  # acting put each module back as it was


def test_mixed_precision_says_it_leaves_a_custom_network_as_it_is(small_config):
    """mixed_precision=True ran a custom actor_net and critic_net in float32 without a word."""
    with pytest.warns(UserWarning, match="the custom actor_net runs as it is, in float32") as said:
        TD3("Pendulum-v1", small_config.replace(mixed_precision=True), device="cpu", actor_net=ActorNet())
    assert len(said) == 1 and said[0].filename == __file__


def test_a_custom_module_for_a_file_trained_without_one_is_refused(tmp_path, small_config):
    """A module passed for a standard actor was built in, and the load then failed on torch's missing and unexpected
    keys ("holds actor weights that do not fit its own description"; TD3.load: "net_arch [] here")."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.save(tmp_path / "ckpt")
    model.save_policy(tmp_path / "policy.pt")
    own = "was trained with td3_steps's own network, not a custom {}: load it without {}="
    with pytest.raises(CheckpointError, match=own.format("actor_net", "actor_net")):
        Policy.load(tmp_path / "policy.pt", actor_net=ActorNet())
    with pytest.raises(CheckpointError, match=own.format("critic_net", "critic_net")):
        TD3.load(tmp_path / "ckpt", device="cpu", critic_net=nn.Linear(4, 1))


def test_custom_modules_of_the_wrong_shape_are_refused(small_config):
    with pytest.raises(ValueError, match=r"actor_net must map \(B, 3\) \(features\) to \(B, 1\).*\(2, 2\)"):
        TD3("Pendulum-v1", small_config, device="cpu", actor_net=ActorNet(out_dim=2))
    with pytest.raises(ValueError, match=r"critic_net must take \(B, 4\) inputs"):
        TD3("Pendulum-v1", small_config, device="cpu", critic_net=nn.Linear(3, 1))
    with pytest.raises(TypeError, match="critic_net must be a torch.nn.Module, or a function of no arguments"):
        TD3("Pendulum-v1", small_config, device="cpu", critic_net=lambda x: x)
    with pytest.raises(TypeError, match=r"actor_net\(\) must return a torch.nn.Module, got list"):
        TD3("Pendulum-v1", small_config, device="cpu", actor_net=lambda: [nn.Linear(3, 1)])


class RawCritic(nn.Module):
    """A critic of raw parameters: no submodule has reset_parameters, so a copy keeps the weights it was copied from."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 1))

    def forward(self, x):
        return x @ self.w


def test_custom_networks_from_functions_are_built_under_the_seed_with_their_own_initialisation(tmp_path, small_config):
    """A module given for the actor keeps its weights whatever the seed (a seed sweep started every seed from one
    policy); a function is called under the seed. A critic module's copies are re-initialised, which loses its own
    initialisation: a function keeps it."""

    def zero_last_layer():
        net = nn.Sequential(nn.Linear(3 + 1, 16), nn.ReLU(), nn.Linear(16, 1))
        nn.init.zeros_(net[2].weight)
        return net

    def agent(seed, **nets):
        return TD3("Pendulum-v1", small_config, seed=seed, device="cpu", **nets)

    module = ActorNet()
    assert torch.equal(agent(0, actor_net=module).actor.net.body[0].weight, module.body[0].weight)
    assert torch.equal(agent(1, actor_net=module).actor.net.body[0].weight, module.body[0].weight)
    first, again, other = (agent(seed, actor_net=ActorNet, critic_net=zero_last_layer) for seed in (0, 0, 1))
    assert torch.equal(first.actor.net.body[0].weight, again.actor.net.body[0].weight)
    assert not torch.equal(first.actor.net.body[0].weight, other.actor.net.body[0].weight)
    hidden = [critic.net[0].weight for critic in first.critics.members]
    assert not torch.equal(hidden[0], hidden[1])
    assert all(torch.count_nonzero(critic.net[2].weight) == 0 for critic in first.critics.members)
    first.save(tmp_path / "ckpt")
    loaded = TD3.load(tmp_path / "ckpt", device="cpu", actor_net=ActorNet, critic_net=zero_last_layer)
    assert torch.equal(loaded.critics.members[1].net[0].weight, hidden[1])


def test_critics_that_would_start_alike_are_refused(small_config):
    """Copies of a module whose parameters no reset_parameters reaches started equal, and stayed equal through
    training: clipped double-Q silently took the minimum of one critic."""
    with pytest.raises(ValueError, match=r"critic_net gives critics that start alike in w \(reset_parameters\(\)"
                                         r" reaches no submodule.*critic_net=lambda: MyCritic"):  # fmt: skip
        TD3("Pendulum-v1", small_config, device="cpu", critic_net=RawCritic())
    one = RawCritic()
    with pytest.raises(ValueError, match=r"start alike in w \(the function returned the same weights twice\)"):
        TD3("Pendulum-v1", small_config, device="cpu", critic_net=lambda: one)
    TD3("Pendulum-v1", small_config, device="cpu", critic_net=RawCritic)  # a function: each critic its own
    TD3("Pendulum-v1", small_config.replace(n_critics=1), device="cpu", critic_net=RawCritic())
    layer_norm = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 1))  # its ones and zeros are alike
    TD3("Pendulum-v1", small_config, device="cpu", critic_net=layer_norm)


def test_make_target_names_what_it_copies():
    actor = Actor(3, [-1.0], [1.0], net_arch=(4,))
    with pytest.raises(TypeError, match=r"make_target: network must be the network to copy.*got OrderedDict"):
        make_target(actor.state_dict())


@pytest.mark.parametrize("make", [lambda: Critics(3, 1, net_arch=(10**30,)), lambda: Actor(10**30, [-1.0], [1.0])])
def test_layers_too_large_to_make_are_named_with_their_size(make, monkeypatch):
    """torch said 'empty(): argument 'size' failed to unpack the object ... Overflow' (or, for layers that merely do
    not fit in memory, 'DefaultCPUAllocator: can't allocate memory', or the system killed the process). The free
    memory is compared first; where it is not known, torch's failure is explained."""
    with pytest.raises(ValueError, match=r"of layers \d+ -> .* needs [\d,.]+ GiB on cpu, more than 90% of the [\d,.]+ .iB free: use"
                       r" smaller layers \(TD3Config.net_arch\)\."):  # fmt: skip
        make()
    monkeypatch.setattr(devices, "memory_left", lambda device: None)
    with pytest.raises(
        ValueError, match=r"of layers \d+ -> .*, needs [\d,.]+ GiB in float32 and could not be made: use smaller"
    ):
        make()


def test_more_critics_than_memory_holds_are_refused_before_they_are_made(monkeypatch):
    """n_critics=10**30 passed every check and made critics until the system killed the process."""
    monkeypatch.setattr(devices, "memory_left", lambda device: 2**30)
    with pytest.raises(ValueError, match=r"1,000,000,000,000,000,000,000,000,000,000 critics \(999,999,999,999,999,999,999,999,999,999 more of"
                       r" [\d.]+ MiB\) needs [\d,.]+ GiB on cpu, more than 90% of"
                       r" the 1.0 GiB free: use fewer \(TD3Config.n_critics\)\."):  # fmt: skip
        Critics(3, 1, net_arch=(8,), n_critics=10**30)
    assert len(Critics(3, 1, net_arch=(8,), n_critics=5).members) == 5


def test_flags_are_refused_unless_true_or_false_and_written_as_bools(tmp_path):
    """layer_norm='yes' made a network Policy.load then refused; mixed_precision=np.True_ made Policy.save fail
    inside json."""
    with pytest.raises(ValueError, match="Actor: layer_norm must be True or False, got 'yes'"):
        Actor(3, [-1.0], [1.0], layer_norm="yes")
    with pytest.raises(ValueError, match="Critics: mixed_precision must be True or False"):
        Critics(3, 1, mixed_precision="no")
    actor = Actor(3, [-2.0], [2.0], net_arch=(8,), layer_norm=1, mixed_precision=np.False_)  # Pendulum's bounds
    assert actor.architecture["layer_norm"] is True and actor.architecture["mixed_precision"] is False
    Policy(actor, "Pendulum-v1").save(tmp_path / "policy.pt")
    assert Policy.load(tmp_path / "policy.pt").actor.architecture == actor.architecture


def test_actor_is_center_plus_half_range_times_tanh():
    torch.manual_seed(0)
    actor = Actor(3, [0.0, -1.0], [2.0, 5.0], net_arch=(8,))
    obs = torch.randn(6, 3)
    raw = actor.net(actor.features(obs))
    expected = torch.tensor([1.0, 2.0]) + torch.tensor([1.0, 3.0]) * torch.tanh(raw)
    assert torch.allclose(actor(obs), expected)
    assert torch.equal(actor.center, torch.tensor([1.0, 2.0])) and torch.equal(
        actor.half_range, torch.tensor([1.0, 3.0])
    )


def test_layer_norm_sits_between_each_linear_and_its_activation():
    mlp = MLP(4, (8, 6), 2, activation="elu", layer_norm=True)
    assert [type(m) for m in mlp.hidden] == [nn.Linear, nn.LayerNorm, nn.ELU] * 2
    assert [m.normalized_shape for m in mlp.hidden if isinstance(m, nn.LayerNorm)] == [(8,), (6,)]


def test_each_activation_is_the_one_named_and_only_relu_and_leaky_relu_work_in_place():
    kinds = {"relu": nn.ReLU, "tanh": nn.Tanh, "elu": nn.ELU, "leaky_relu": nn.LeakyReLU, "gelu": nn.GELU}
    for name, kind in kinds.items():
        layer = activation_layer(name)
        assert type(layer) is kind
        assert getattr(layer, "inplace", False) is (name in ("relu", "leaky_relu"))


def test_the_actor_records_its_architecture():
    actor = Actor(3, [-1.0], [1.0], net_arch=(8, 4), activation="tanh", layer_norm=True)
    assert actor.architecture == {
        "net_arch": [8, 4],
        "activation": "tanh",
        "layer_norm": True,
        "mixed_precision": False,
        "features_extractor": "flatten",
        "custom_net": False,
    }


def test_q1_is_the_first_critic_of_three():
    torch.manual_seed(0)
    critics = Critics(obs_dim=3, action_dim=1, net_arch=(8,), n_critics=3)
    obs, action = torch.randn(4, 3), torch.randn(4, 1)
    first, _, last = critics(obs, action)
    assert torch.equal(critics.q1(obs, action), first) and not torch.equal(first, last)


def test_a_critic_reads_the_observation_then_the_action():
    torch.manual_seed(0)
    critics = Critics(obs_dim=3, action_dim=1, net_arch=(8,), n_critics=1)
    critic = critics.members[0]
    obs, action = torch.randn(4, 3), torch.randn(4, 1)
    assert torch.equal(critic(obs, action), critic.net(torch.cat([obs, action], dim=1)))


def test_make_target_is_a_frozen_deep_copy():
    actor = Actor(3, [-1.0], [1.0], net_arch=(8,))
    target = make_target(actor)
    assert target is not actor
    assert all(not p.requires_grad for p in target.parameters()) and all(p.requires_grad for p in actor.parameters())
    with torch.no_grad():
        next(actor.parameters()).add_(1.0)
    assert not torch.equal(next(actor.parameters()), next(target.parameters()))


def test_without_mixed_precision_the_mlp_computes_in_float32_exactly():
    torch.manual_seed(0)
    mlp = MLP(5, (16,), 3, mixed_precision=False)
    x = torch.randn(7, 5)
    linear = mlp.hidden[0]
    expected = mlp.out(torch.relu(x @ linear.weight.T + linear.bias))
    assert torch.allclose(mlp(x), expected, rtol=1e-6, atol=1e-6)  # bfloat16 is off by about 1e-2


def test_a_features_extractor_of_another_width_is_refused():
    import pytest

    from td3_steps.features import FlattenExtractor

    with pytest.raises(ValueError, match=r"obs_dim = 5 must be the features extractor's features_dim \(3\)"):
        Actor(5, [-1.0], [1.0], net_arch=(8,), features=FlattenExtractor((3,)))
    with pytest.raises(ValueError, match=r"features_dim \(3\)"):
        Critics(5, 1, net_arch=(8,), features=FlattenExtractor((3,)))


def test_a_forward_hook_makes_a_network_one_that_may_act_otherwise_in_training():
    from td3_steps.networks import acts_otherwise_in_training

    mlp = MLP(3, (4,), 1)
    assert not acts_otherwise_in_training(mlp)
    mlp.hidden[0].register_forward_hook(lambda module, args, out: out)
    assert acts_otherwise_in_training(mlp)
    plain = MLP(3, (4,), 1)
    plain.register_forward_pre_hook(lambda module, args: None)
    assert acts_otherwise_in_training(plain)


def test_mixed_precision_runs_the_hidden_layers_in_bfloat16_and_the_output_in_float32():
    torch.manual_seed(0)
    mlp = MLP(5, (16,), 3, mixed_precision=True)
    dtypes = []
    mlp.hidden[0].register_forward_hook(lambda module, args, out: dtypes.append(out.dtype))
    out = mlp(torch.randn(7, 5))
    assert dtypes == [torch.bfloat16] and out.dtype == torch.float32
