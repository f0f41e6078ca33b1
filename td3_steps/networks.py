"""Step 2, the actor, and step 3, the critics; and the frozen copies that serve as targets.

Taught in notebooks/02_actor.ipynb and notebooks/03_critics.ipynb. Beyond the course, each
network reads its observation through a features extractor (td3_steps.features: flatten, or a
CNN for images), its MLP's activation and LayerNorm are chosen by TD3Config, and a custom
nn.Module can replace the MLP (build_actor, build_critics).
"""

from __future__ import annotations

import contextlib
import copy
import inspect
from collections.abc import Callable, Sequence

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from .config import ACTIVATIONS, NET_ARCH, TD3Config
from .counts import check_flag, is_count, is_sizes, readable
from .devices import CPU, check_memory, in_bytes
from .envs import check_bounds
from .failures import (
    check_has_values,
    device_problem,
    explain_failures,
    first_problem,
    module_problem,
    tensor_problem,
    warn,
)
from .features import FlattenExtractor, make_features_extractor

SMALLER_LAYERS = "use smaller layers (TD3Config.net_arch)"
CustomNet = nn.Module | Callable[[], nn.Module] | None  # actor_net, critic_net: a module or a function making one


def _parameter_count(sizes: Sequence[int]) -> int:
    """The weights and biases of Linear layers of these widths, input first."""
    return sum((n_in + 1) * n_out for n_in, n_out in zip(sizes, sizes[1:]))


class MLP(nn.Module):
    """Hidden layers Linear (-> LayerNorm) -> activation, then a linear output layer.

    `layer_norm` puts a LayerNorm after each hidden Linear, before its activation (as
    Stable-Baselines' LnMlpPolicy). ReLU and LeakyReLU work in place (see `activation_layer`).
    With `mixed_precision`, the hidden layers run under
    bfloat16 autocast (where the matrix products are) and the output layer runs in float32,
    so Q-values and actions, and everything computed from them, stay float32.
    """

    def __init__(
        self,
        in_dim: int,
        hidden: Sequence[int],
        out_dim: int,
        mixed_precision: bool = False,
        activation: str = "relu",
        layer_norm: bool = False,
        *,
        owner: str = "This network",
        takes: str = "one row of inputs per example",
        inputs: str = "the input",
    ):
        super().__init__()
        sizes = [in_dim, *hidden, out_dim]
        what, needed = f"{owner}, of layers {' -> '.join(map(str, sizes))},", 4 * _parameter_count(sizes)
        check_memory(what, needed, CPU, SMALLER_LAYERS)
        self.owner, self.takes, self.inputs = owner, takes, inputs  # for the error when the input does not fit
        layers: list[nn.Module] = []
        try:
            for size in hidden:
                layers.append(nn.Linear(in_dim, size))
                if layer_norm:
                    layers.append(nn.LayerNorm(size))
                layers.append(activation_layer(activation))
                in_dim = size
            out = nn.Linear(in_dim, out_dim)
        except (RuntimeError, TypeError) as error:  # can't allocate, or can't count, where check_memory cannot tell
            raise ValueError(
                f"{what} needs {in_bytes(needed)} in float32 and could not be made: {SMALLER_LAYERS}."
            ) from error
        self.hidden, self.out = nn.Sequential(*layers), out
        self.mixed_precision = mixed_precision

    @explain_failures
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.mixed_precision:  # entering even a disabled autocast costs time on every call
            return self.out(self.hidden(x))
        with torch.autocast(x.device.type, dtype=torch.bfloat16):
            h = self.hidden(x)
        return self.out(h.float())

    @forward.problem
    def _input_problem(self, x) -> Exception | None:
        """The error to raise when `x` is no (B, in_features) tensor; None when it is one."""
        first = self.hidden[0]
        width, dtype, device = first.in_features, first.weight.dtype, first.weight.device
        expected = f"{self.owner} takes a {dtype} tensor of shape (B, {width}): {self.takes}"
        if not isinstance(x, torch.Tensor):
            return TypeError(
                f"{expected}; got an object of type {type(x).__name__}. Convert {self.inputs} first:"
                f" torch.as_tensor(..., dtype={dtype})."
            )
        if x.ndim == 0 or x.shape[-1] != width:  # (B, width) is usual; torch's Linear reads any leading axes
            return ValueError(f"{expected}; got shape {tuple(x.shape)}.")
        if x.dtype != dtype:
            return TypeError(f"{expected}; got a {x.dtype} tensor. Convert {self.inputs} first: .to({dtype}).")
        if x.device != device:
            return ValueError(
                f"{expected}, on {device}; got a tensor on {x.device}. Move {self.inputs} first: .to('{device}')."
            )
        return None


def activation_layer(activation: str) -> nn.Module:
    """The activation after a hidden layer; ReLU and LeakyReLU overwrite their input (inplace=True).

    Nothing else needs that input: the Linear (or LayerNorm) that made it keeps its own input for
    the backward pass, and these two activations compute their gradient from their output. Working
    in place spares a fresh (B, width) tensor per layer, a pass over memory, and gives the same
    values and gradients, bit for bit. (ELU's in-place gradient is computed differently, so it
    and the others keep a fresh output.)
    """
    module = getattr(nn, ACTIVATIONS[activation])
    return module(inplace=True) if activation in ("relu", "leaky_relu") else module()


class Actor(nn.Module):
    """Step 2: the deterministic policy a = pi_phi(s) = center + half_range * tanh(f_phi(s)).

    tanh keeps each output in (-1, 1); the affine map sends it into each dimension's own
    [low, high], so asymmetric bounds such as [0, 2] are respected.

    f_phi is `net` (default: an MLP over `net_arch`) applied to the output of `features`, a
    features extractor (default: the flat observation of size `obs_dim` as it is). With a
    `features` extractor, `obs_dim` must be its features_dim. Taught in notebooks/02_actor.ipynb.
    """

    def __init__(
        self,
        obs_dim: int,
        action_low,
        action_high,
        net_arch: Sequence[int] = (400, 300),
        mixed_precision=False,
        *,
        activation: str = "relu",
        layer_norm: bool = False,
        features: nn.Module | None = None,
        net: nn.Module | None = None,
    ):
        super().__init__()
        check_network_arguments("Actor", net_arch, activation, layer_norm, mixed_precision, obs_dim=obs_dim)
        check_custom_layers("Actor", net)
        low, high = _bound("action_low", action_low), _bound("action_high", action_high)
        check_bounds(low.cpu().numpy(), high.cpu().numpy())
        self.register_buffer("action_low", low)
        self.register_buffer("action_high", high)
        self.register_buffer("center", (high + low) / 2)
        self.register_buffer("half_range", (high - low) / 2)
        self.features = _features(features, obs_dim)
        self.net = net if net is not None else MLP(
            obs_dim, net_arch, low.numel(), mixed_precision, activation, layer_norm,
            owner="The actor", takes=f"one observation of {obs_dim} values per row", inputs="the observations",
        )  # fmt: skip
        # What Policy.save writes so that Policy.load can rebuild this actor (TD3Config field names).
        self.architecture = {
            "net_arch": [int(n) for n in net_arch],
            "activation": activation,
            "layer_norm": bool(layer_norm),
            "mixed_precision": bool(mixed_precision),
            "features_extractor": self.features.name,
            "custom_net": net is not None,
        }

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.center + self.half_range * torch.tanh(self.net(self.features(obs)))


class Critic(nn.Module):
    """One critic Q_theta(s, a): an MLP (or `net`) on the concatenated state features and action, output (B, 1)."""

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        net_arch: Sequence[int] = (400, 300),
        mixed_precision=False,
        *,
        activation: str = "relu",
        layer_norm: bool = False,
        net: nn.Module | None = None,
    ):
        super().__init__()
        check_network_arguments(
            "Critic", net_arch, activation, layer_norm, mixed_precision, obs_dim=obs_dim, action_dim=action_dim
        )
        check_custom_layers("Critic", net)
        self.net = net if net is not None else MLP(
            obs_dim + action_dim, net_arch, 1, mixed_precision, activation, layer_norm, owner="A critic",
            takes=f"per row, the observation ({obs_dim} values) and the action ({action_dim}) side by side",
            inputs="the observations and actions",
        )  # fmt: skip
        self.obs_dim, self.action_dim = obs_dim, action_dim  # for the error when the inputs do not fit

    @explain_failures
    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([obs, action], dim=1))

    @forward.problem
    def _action_problem(self, obs, action) -> Exception | None:
        """The error to raise when `obs` or `action` is no tensor, or the actions do not fit the observations."""
        expected = f"A critic takes the actions as a tensor of shape (B, {self.action_dim}), one row per observation"
        problem = first_problem(
            tensor_problem("A critic", "obs", obs, "one observation per row"),
            tensor_problem("A critic", "action", action, "one action per row, beside its observation"),
            device_problem(  # device_problem skips what is no tensor: the checks above name it
                "A critic", "its weights'", {"weights": next(self.parameters(), None), "obs": obs, "action": action}
            ),
        )
        if problem is not None:
            return problem
        if obs.ndim != 2:
            hint = " One observation is a batch of one: obs.unsqueeze(0), its action action.unsqueeze(0)."
            return ValueError(
                f"A critic takes the observations as a tensor of shape (B, {self.obs_dim}), one row each; got"
                f" shape {tuple(obs.shape)}.{hint if obs.ndim == 1 else ''}"
            )
        if action.ndim != obs.ndim or action.shape[0] != obs.shape[0]:
            flat = self.action_dim == 1 and action.shape == obs.shape[:1]
            hint = " Use action.unsqueeze(1) (or .reshape(-1, 1))." if flat else ""
            return ValueError(
                f"{expected}; got actions of shape {tuple(action.shape)} for observations of shape"
                f" {tuple(obs.shape)}.{hint}"
            )
        return None


class Critics(nn.Module):
    """Step 3: the twin critics Q_theta1 and Q_theta2, each initialised independently.

    `forward` returns one (B, 1) tensor per critic; `q1` is the critic the actor climbs. All
    critics read the same `features` of the observation (one extractor, as in Stable-Baselines).
    `net` (a module, or a function of no arguments that builds one) gives each critic's layers: a module is
    copied and each copy re-initialised, a function is called once per critic. Taught in notebooks/03_critics.ipynb.
    """

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        net_arch: Sequence[int] = (400, 300),
        n_critics: int = 2,
        mixed_precision=False,
        *,
        activation: str = "relu",
        layer_norm: bool = False,
        features: nn.Module | None = None,
        net: CustomNet = None,
    ):
        super().__init__()
        check_network_arguments(
            "Critics", net_arch, activation, layer_norm, mixed_precision, obs_dim=obs_dim, action_dim=action_dim
        )
        if not is_count(n_critics, 1):
            raise ValueError(f"Critics: n_critics must be a whole number >= 1 (TD3 has 2), got {n_critics!r}.")
        self.features = _features(features, obs_dim)

        def critic() -> Critic:
            return Critic(obs_dim, action_dim, net_arch, mixed_precision, activation=activation,
                          layer_norm=layer_norm, net=None if net is None else custom_module(net, "critic_net", fresh=True))  # fmt: skip

        first = critic()
        each = sum(p.numel() * p.element_size() for p in first.parameters())
        what = f"{n_critics:,} critics ({n_critics - 1:,} more of {in_bytes(each)})"
        check_memory(what, (n_critics - 1) * each, CPU, "use fewer (TD3Config.n_critics)")
        self.members = nn.ModuleList([first, *(critic() for _ in range(n_critics - 1))])

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self._score(self.members, obs, action)

    def q1(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self._score((self.members[0],), obs, action)[0]

    def _score(self, members: Sequence[nn.Module], obs: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, ...]:
        features = self.features(obs)
        return tuple(critic(features, action) for critic in members)


def check_network_arguments(network: str, net_arch, activation: str, layer_norm, mixed_precision, **sizes) -> None:
    """Refuse, when a network is made, sizes and choices it cannot be built from: a ValueError that names the
    argument, not torch's error from inside nn.Linear (TD3Config checks the same rules for the agent's networks)."""
    check_flag(network, "layer_norm", layer_norm)
    check_flag(network, "mixed_precision", mixed_precision)
    for name, value in sizes.items():
        if not is_count(value, 1):
            raise ValueError(f"{network}: {name} must be a whole number >= 1 (a vector's length), got {value!r}.")
    if not is_sizes(net_arch):
        raise ValueError(f"{network}: net_arch must be {NET_ARCH}; got {net_arch!r}.")
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(
            f"{network}: activation must be one of {', '.join(map(repr, ACTIVATIONS))}; got {activation!r}."
        )


def check_custom_layers(network: str, net) -> None:
    """A TypeError unless `net`, the layers given to an Actor or a Critic in place of the MLP, is None or an nn.Module:
    anything else was kept, and failed only at the first forward ("'int' object is not callable")."""
    if net is not None and not isinstance(net, nn.Module):
        raise TypeError(
            f"{network}: net must be a torch.nn.Module (the layers used in place of the MLP), or None for the MLP of"
            f" net_arch; got {net!r:.80}."
        )


def _bound(name: str, value) -> torch.Tensor:
    """An Actor's action bound as it keeps it: a flat float32 copy (as_tensor alone would share memory with the env's
    action_space.low or .high, which a load_state_dict into the buffer would then overwrite), or a TypeError that
    names it where it is no number or array of real numbers (torch's own said "new(): invalid data type 'str'")."""
    check_has_values("Actor", name, value)
    try:
        bound = torch.as_tensor(readable(value) if isinstance(value, np.ndarray) else value)
        if bound.is_complex():
            raise TypeError("complex")
        return bound.detach().to(torch.float32).reshape(-1).clone()
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(
            f"Actor: {name} must be a real number or an array of them, one per action dimension, such as"
            f" env.action_space.{name.removeprefix('action_')}; got {value!r:.80}."
        ) from None


def _features(features: nn.Module | None, obs_dim: int) -> nn.Module:
    if features is None:
        return FlattenExtractor((obs_dim,))
    if not (isinstance(features, nn.Module) and is_count(getattr(features, "features_dim", None), 1)):
        raise TypeError(
            "features must be a features extractor, a torch.nn.Module whose features_dim says the size of what it"
            f" returns (td3_steps.FlattenExtractor or NatureCNN); got {features!r:.80}."
        )
    if features.features_dim != obs_dim:
        raise ValueError(
            f"obs_dim = {obs_dim} must be the features extractor's features_dim ({features.features_dim})."
        )
    return features


@explain_failures
def make_target(network: nn.Module) -> nn.Module:
    """Steps 2 and 3: the target copy, phi' = phi (theta_i' = theta_i).

    No gradient ever reaches it: its parameters have requires_grad=False, and they
    move only by the Polyak update (steps 14 and 15). Taught in
    notebooks/02_actor.ipynb and 03_critics.ipynb.
    """
    return copy.deepcopy(network).requires_grad_(False)


# Layers of torch.nn that compute alike in training and eval mode: what the built-in networks are made of, and the
# common layers a custom network adds. Any other module (dropout, batch norm, an RNN, one of the user's own class)
# may read self.training.
ALIKE_IN_BOTH_MODES = (
    nn.Linear, nn.LayerNorm, nn.Conv1d, nn.Conv2d, nn.Flatten, nn.Identity, nn.Sequential, nn.ModuleList,
    nn.ModuleDict, *(getattr(nn, name) for name in ACTIVATIONS.values()), nn.Sigmoid, nn.SiLU, nn.Softplus,
)  # fmt: skip


def acts_otherwise_in_training(network: nn.Module) -> bool:
    """Whether `network` may give other outputs (or change its buffers) in training mode: true unless every module in
    it is one of td3_steps' own or of ALIKE_IN_BOTH_MODES, with no hook or parametrization (spectral norm) on it."""
    return any(
        not (type(module).__module__.startswith("td3_steps.") or type(module) in ALIKE_IN_BOTH_MODES)
        or module._forward_pre_hooks
        or module._forward_hooks
        for module in network.modules()
    )


@contextlib.contextmanager
def evaluating(network: nn.Module):
    """`network` in eval mode inside the block (no dropout, batch norm's running statistics), then each of its
    modules in the mode it had (a part the user keeps in eval mode stays so): how an actor acts, where the updates
    train it in training mode."""
    modes = [(module, module.training) for module in network.modules()]
    network.eval()
    try:
        yield network
    finally:
        for module, training in modes:
            module.training = training


def custom_module(net, name: str, fresh: bool = False) -> nn.Module:
    """A custom network of the agent's own: `net()` where it is a function that builds one (its initialisation, drawn
    under the agent's seed), else a deep copy of the module, re-initialised where `fresh` (reset_parameters() on every
    submodule that has one, so that copies differ)."""
    if not isinstance(net, nn.Module):
        try:
            inspect.signature(net).bind()
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must be a torch.nn.Module, or a function of no arguments that builds one, got {net!r:.80}."
            ) from None
        module = net()
        if not isinstance(module, nn.Module):
            raise TypeError(f"{name}() must return a torch.nn.Module, got {type(module).__name__}.")
        return module
    module = copy.deepcopy(net)
    if fresh:
        for submodule in module.modules():
            if callable(getattr(submodule, "reset_parameters", None)):
                submodule.reset_parameters()
    return module


# ---------------------------------------------------------------- the networks TD3 builds from its config
def build_actor(
    observation_space: gym.Space,
    action_low,
    action_high,
    config: TD3Config,
    *,
    net: CustomNet = None,
    features: nn.Module | None = None,
) -> Actor:
    """The actor for `observation_space`: `features` (default: the config's extractor), then `net` or an MLP.

    A custom `net` maps (B, features_dim) to an unbounded (B, action_dim); the Actor adds tanh and
    the affine map to the bounds. A module is copied with its weights; a function of no arguments is called.
    """
    features = (
        features if features is not None else make_features_extractor(config.features_extractor, observation_space)
    )
    action_dim = torch.as_tensor(action_low).numel()
    if net is not None:
        net = custom_module(net, "actor_net")
        _check_custom_net(net, "actor_net", features.features_dim, action_dim, "features", config)
    return Actor(
        features.features_dim, action_low, action_high, config.net_arch, config.mixed_precision,
        activation=config.activation, layer_norm=config.layer_norm, features=features, net=net,
    )  # fmt: skip


def build_critics(
    observation_space: gym.Space,
    action_dim: int,
    config: TD3Config,
    *,
    net: CustomNet = None,
    features: nn.Module | None = None,
) -> Critics:
    """The n_critics critics for `observation_space`: one features extractor, then `net`'s layers or MLPs.

    A custom `net` maps (B, features_dim + action_dim) to (B, 1); each critic gets a re-initialised copy of a
    module, or a module of its own from a function of no arguments. Critics that would start alike are refused.
    """
    features = (
        features if features is not None else make_features_extractor(config.features_extractor, observation_space)
    )
    critics = Critics(
        features.features_dim, action_dim, config.net_arch, config.n_critics, config.mixed_precision,
        activation=config.activation, layer_norm=config.layer_norm, features=features, net=net,
    )  # fmt: skip
    if net is not None:
        nets = [critic.net for critic in critics.members]
        _check_custom_net(nets[0], "critic_net", features.features_dim + action_dim, 1, "features + action_dim", config)
        _check_critics_differ(nets, net)
    return critics


def _check_critics_differ(nets: list[nn.Module], net) -> None:
    """Refuse custom critics that start alike (one module twice, or a random parameter equal in two): clipped
    double-Q would take the minimum of one critic."""
    if len(nets) < 2:
        return
    alike = [name for (name, a), b in zip(nets[0].named_parameters(), nets[1].parameters())
             if a is b or (a.numel() > 1 and torch.equal(a, b) and not torch.all(a == a.flatten()[0]))]  # fmt: skip
    if alike:
        why = (
            "reset_parameters() reaches no submodule that holds them" if isinstance(net, nn.Module)
            else "the function returned the same weights twice"
        )  # fmt: skip
        raise ValueError(
            f"critic_net gives critics that start alike in {', '.join(alike)} ({why}): the twin critics would be one,"
            " and clipped double-Q the minimum of one critic. Pass a function that builds a critic with weights of"
            " its own, critic_net=lambda: MyCritic(...), which TD3 calls once per critic under its seed."
        )


def _check_custom_net(net, name: str, in_dim: int, out_dim: int, input_name: str, config: TD3Config) -> None:
    """Run `net` once on zeros (in eval mode: no dropout, no batch-norm statistics) and check the output shape; say
    that mixed_precision leaves it as it is."""
    if config.mixed_precision:
        warn(
            f"mixed_precision runs the built-in MLPs under bfloat16 autocast; the custom {name} runs as it is, in"
            " float32 (wrap its forward in torch.autocast(device_type, torch.bfloat16) for the same)."
        )
    try:
        with torch.no_grad(), evaluating(net):
            out = net(torch.zeros(2, in_dim))
    except RuntimeError as error:
        raise ValueError(
            f"{name} must take (B, {in_dim}) inputs ({input_name}), but it fails on them: {error}"
        ) from error
    if tuple(out.shape) != (2, out_dim):
        raise ValueError(
            f"{name} must map (B, {in_dim}) ({input_name}) to (B, {out_dim}), but it maps (2, {in_dim}) to {tuple(out.shape)}."
        )


# What a failed call did wrong: each step's problem function (td3_steps.failures), after the steps.


@make_target.problem
def _target_problem(network) -> Exception | None:
    return module_problem("make_target", "network", network, "the network to copy, e.g. the actor or the critics")
