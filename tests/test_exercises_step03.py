"""The step 3 checker accepts two independent critics with frozen copies and names each wrong build."""

import copy

import torch
from torch import nn

from td3_steps import Critic, make_target
from td3_steps.exercises.step03 import check_build_critics


class MyCritic(nn.Module):
    """The notebook's critic: an MLP on [s; a] with one output."""

    def __init__(self, obs_dim, action_dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim + action_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, action):
        return self.body(torch.cat([obs, action], dim=1))


def frozen(network):
    return copy.deepcopy(network).requires_grad_(False)


def build_right(obs_dim, action_dim):
    critic1, critic2 = MyCritic(obs_dim, action_dim), MyCritic(obs_dim, action_dim)
    return critic1, critic2, frozen(critic1), frozen(critic2)


def build_with_the_package(obs_dim, action_dim):
    critic1, critic2 = Critic(obs_dim, action_dim, (16, 16)), Critic(obs_dim, action_dim, (16, 16))
    return critic1, critic2, make_target(critic1), make_target(critic2)


def test_accepts_right_critics(capsys):
    assert check_build_critics(build_right)
    assert check_build_critics(build_with_the_package)
    assert capsys.readouterr().out.count("Correct!") == 2


def build_todo(obs_dim, action_dim):
    """The notebook's untouched exercise."""
    critic = MyCritic(obs_dim, action_dim)
    return critic, critic, critic, critic


def build_not_written(obs_dim, action_dim):
    raise NotImplementedError


def build_list_repetition(obs_dim, action_dim):
    critics = [MyCritic(obs_dim, action_dim)] * 2
    return critics[0], critics[1], frozen(critics[0]), frozen(critics[1])


def build_shared_body(obs_dim, action_dim):
    critic1 = MyCritic(obs_dim, action_dim)
    critic2 = MyCritic(obs_dim, action_dim)
    critic2.body = critic1.body
    return critic1, critic2, frozen(critic1), frozen(critic2)


def build_same_initialisation(obs_dim, action_dim):
    critic1 = MyCritic(obs_dim, action_dim)
    critic2 = copy.deepcopy(critic1)
    return critic1, critic2, frozen(critic1), frozen(critic2)


def build_same_seed(obs_dim, action_dim):
    torch.manual_seed(0)
    critic1 = MyCritic(obs_dim, action_dim)
    torch.manual_seed(0)
    critic2 = MyCritic(obs_dim, action_dim)
    return critic1, critic2, frozen(critic1), frozen(critic2)


def build_aliased_targets(obs_dim, action_dim):
    critic1, critic2 = MyCritic(obs_dim, action_dim), MyCritic(obs_dim, action_dim)
    return critic1, critic2, critic1, critic2


def build_freeze_the_critics(obs_dim, action_dim):
    critic1, critic2 = MyCritic(obs_dim, action_dim), MyCritic(obs_dim, action_dim)
    return critic1, critic2, critic1.requires_grad_(False), critic2.requires_grad_(False)


def build_shallow_copies(obs_dim, action_dim):
    critic1, critic2 = MyCritic(obs_dim, action_dim), MyCritic(obs_dim, action_dim)
    return critic1, critic2, copy.copy(critic1), copy.copy(critic2)


def build_swapped_targets(obs_dim, action_dim):
    critic1, critic2 = MyCritic(obs_dim, action_dim), MyCritic(obs_dim, action_dim)
    return critic1, critic2, frozen(critic2), frozen(critic1)


def build_fresh_targets(obs_dim, action_dim):
    critic1, critic2 = MyCritic(obs_dim, action_dim), MyCritic(obs_dim, action_dim)
    targets = [MyCritic(obs_dim, action_dim).requires_grad_(False) for _ in range(2)]
    return critic1, critic2, *targets


def build_trainable_targets(obs_dim, action_dim):
    critic1, critic2 = MyCritic(obs_dim, action_dim), MyCritic(obs_dim, action_dim)
    return critic1, critic2, copy.deepcopy(critic1), copy.deepcopy(critic2)


def build_attribute_not_method(obs_dim, action_dim):
    critic1, critic2 = MyCritic(obs_dim, action_dim), MyCritic(obs_dim, action_dim)
    target1, target2 = copy.deepcopy(critic1), copy.deepcopy(critic2)
    target1.requires_grad = False  # an attribute: freezes nothing
    target2.requires_grad = False
    return critic1, critic2, target1, target2


def build_eval_targets(obs_dim, action_dim):
    critic1, critic2 = MyCritic(obs_dim, action_dim), MyCritic(obs_dim, action_dim)
    return critic1, critic2, copy.deepcopy(critic1).eval(), copy.deepcopy(critic2).eval()


def build_frozen_critics_too(obs_dim, action_dim):
    critic1, critic2, target1, target2 = build_right(obs_dim, action_dim)
    return critic1.requires_grad_(False), critic2, target1, target2


def build_wrong_order(obs_dim, action_dim):
    critic1, critic2, target1, target2 = build_right(obs_dim, action_dim)
    return critic1, target1, critic2, target2


class FlatCritic(MyCritic):
    def forward(self, obs, action):
        return super().forward(obs, action).squeeze(1)


def build_flat(obs_dim, action_dim):
    critic1, critic2 = FlatCritic(obs_dim, action_dim), FlatCritic(obs_dim, action_dim)
    return critic1, critic2, frozen(critic1), frozen(critic2)


class ObsOnlyCritic(MyCritic):
    def __init__(self, obs_dim, action_dim):
        super().__init__(obs_dim, 0)

    def forward(self, obs, action):
        return self.body(obs)


def build_sequential(obs_dim, action_dim):
    def critic():
        return nn.Sequential(nn.Linear(obs_dim + action_dim, 8), nn.ReLU(), nn.Linear(8, 1))

    critic1, critic2 = critic(), critic()
    return critic1, critic2, frozen(critic1), frozen(critic2)


def build_float64(obs_dim, action_dim):
    """Got torch's "mat1 and mat2 must have the same dtype" and nothing more."""
    critic1, critic2 = MyCritic(obs_dim, action_dim).double(), MyCritic(obs_dim, action_dim).double()
    return critic1, critic2, frozen(critic1), frozen(critic2)


def build_obs_only(obs_dim, action_dim):
    critic1, critic2 = ObsOnlyCritic(obs_dim, action_dim), ObsOnlyCritic(obs_dim, action_dim)
    return critic1, critic2, frozen(critic1), frozen(critic2)


WRONG = {
    build_todo: "critic1 and critic2 are the same object",
    build_not_written: "is not written yet",
    build_list_repetition: "[critic] * 2",
    build_shared_body: "critic1 and critic2 share parameters",
    build_same_initialisation: "critic1 and critic2 give the same Q-values",
    build_same_seed: "the same seed before each",
    build_aliased_targets: "target1 is critic1 itself, not a copy",
    build_freeze_the_critics: "froze critic1 itself and returned it",
    build_shallow_copies: "target1 shares its parameters with critic1 (copy.copy",
    build_swapped_targets: "target1 starts equal to critic2, not critic1",
    build_fresh_targets: "not a new network with its own random weights",
    build_trainable_targets: "target1's parameters have requires_grad=True",
    build_attribute_not_method: "sets an attribute of the module and freezes nothing",
    build_eval_targets: "target1.eval() does not freeze it",
    build_frozen_critics_too: "critic1 has no trainable parameters",
    build_wrong_order: "(critic1, target1, critic2, target2)",
    build_flat: "gives (5,), expected (5, 1) (no .squeeze()",
    build_obs_only: "critic1 gives the same Q-value whatever the action",
    build_float64: "build the critics as they come, float32",
    build_sequential: "an nn.Sequential takes one input: build each critic with MyCritic(obs_dim, action_dim)",
    lambda obs_dim, action_dim: build_right(obs_dim, action_dim)[:2]: "must return four networks",
    lambda obs_dim, action_dim: (lambda o, a: o,) * 4: "must be a torch.nn.Module",
}


def test_names_each_wrong_build(assert_rejected):
    assert_rejected(check_build_critics, WRONG)


def build_biases_left_trainable(obs_dim, action_dim):
    critic1, critic2 = MyCritic(obs_dim, action_dim), MyCritic(obs_dim, action_dim)
    targets = copy.deepcopy(critic1), copy.deepcopy(critic2)
    for target in targets:
        for name, p in target.named_parameters():
            if "weight" in name:
                p.requires_grad = False
    return critic1, critic2, *targets


def test_targets_with_trainable_biases_are_told_which_parameters(capsys):
    """Only the biases require grad: the reply said "target1's parameters have requires_grad=True", all of them."""
    assert not check_build_critics(build_biases_left_trainable)
    out = capsys.readouterr().out
    assert "2 of target1's 4 parameters still have requires_grad=True (body.0.bias, body.2.bias)" in out, out
    assert "freeze the whole module with target1.requires_grad_(False)" in out and "parameters have" not in out, out


def build_sizes_written_in(obs_dim, action_dim):
    """The checker's sizes written in, the arguments ignored: right on the first build only."""
    critic1, critic2 = MyCritic(3, 2), MyCritic(3, 2)
    return critic1, critic2, frozen(critic1), frozen(critic2)


def test_sizes_written_in_are_named_on_a_build_of_other_sizes(capsys):
    """The checker built every network with obs_dim=3 and action_dim=2: critics of those sizes written in passed."""
    assert not check_build_critics(build_sizes_written_in)
    out = capsys.readouterr().out
    assert "built with obs_dim=4 and action_dim=3 (the first build had 3 and 2), critic1(obs, action) raised" in out
    assert "are the sizes 3 and 2 written in?" in out, out


def build_first_layer_frozen(obs_dim, action_dim):
    critic1, critic2, target1, target2 = build_right(obs_dim, action_dim)
    critic1.body[0].requires_grad_(False)  # a freeze meant for the target, on the critic
    return critic1, critic2, target1, target2


def test_a_critic_frozen_in_part_is_named(capsys):
    """Only a critic with no trainable parameter at all was refused."""
    assert not check_build_critics(build_first_layer_frozen)
    assert "some of critic1's parameters are frozen (requires_grad=False)" in capsys.readouterr().out


def test_a_notebook_name_missing_after_a_restart_says_which_cells_to_run(capsys):
    """The solution uses MyCritic from part 3: after a restart with only the imports run, it was told "Not yet:
    ... raised NameError" and nothing more, the same reply as a wrong answer."""

    def build_after_a_restart(obs_dim, action_dim):
        critic1, critic2 = NotebookCritic(obs_dim, action_dim), NotebookCritic(obs_dim, action_dim)  # noqa: F821
        return critic1, critic2, frozen(critic1), frozen(critic2)

    assert not check_build_critics(build_after_a_restart)
    out = " ".join(capsys.readouterr().out.split())
    assert "name 'NotebookCritic' is not defined" in out and "Runtime > Run before" in out, out
