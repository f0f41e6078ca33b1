"""The checker of notebook 14 accepts a correct Polyak update and names each wrong one a student writes."""

import copy

import torch

from td3_steps.exercises.step14 import check_soft_update


def correct(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.mul_(1 - tau).add_(tau * p)


def correct_with_copy(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.copy_(tau * p + (1 - tau) * p_target)


def common_error(online, target, tau):
    with torch.no_grad():
        for p_target in target.parameters():
            p_target.copy_(1 - tau * p_target)


def common_error_in_brackets(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.copy_(tau * p + (1 - tau * p_target))


def swapped(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.copy_((1 - tau) * p + tau * p_target)


def hard_copy(online, target, tau):
    target.load_state_dict(online.state_dict())


def unscaled_target(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.add_(tau * p)


def missing_online_term(online, target, tau):
    with torch.no_grad():
        for p_target in target.parameters():
            p_target.mul_(1 - tau)


def wrong_sign(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.sub_(tau * (p - p_target))


def online_twice(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.copy_(tau * p + (1 - tau) * p)


def not_in_place(online, target, tau):
    for p, p_target in zip(online.parameters(), target.parameters()):
        p_target = tau * p + (1 - tau) * p_target  # rebinds the name only: the wrong answer under test


def first_layer_only(online, target, tau):
    with torch.no_grad():
        p, p_target = next(zip(online.parameters(), target.parameters()))
        p_target.mul_(1 - tau).add_(tau * p)


def moves_the_online_network(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p.mul_(1 - tau).add_(tau * p_target)


def aliases_the_online_network(online, target, tau):
    for p, p_target in zip(online.parameters(), target.parameters()):
        p_target.data = p.data


def without_no_grad(online, target, tau):
    for p, p_target in zip(online.parameters(), target.parameters()):
        p_target.mul_(1 - tau).add_(tau * p)


def returns_a_new_target(online, target, tau):
    """Told "assigning a new tensor to a loop variable changes nothing", which it had not done."""
    target = copy.deepcopy(target)
    correct(online, target, tau)
    return target


def placeholder(online, target, tau):
    pass


def raises(online, target, tau):
    raise KeyError("weight")


def test_accepts_correct(capsys):
    assert check_soft_update(correct)
    assert check_soft_update(correct_with_copy)
    assert "Correct!" in capsys.readouterr().out


def test_names_each_wrong_one(assert_rejected):
    assert_rejected(
        check_soft_update,
        {
            common_error: "1 - tau * theta'",
            common_error_in_brackets: "the brackets are misplaced, (1 - tau * theta')",
            swapped: "swapped",
            hard_copy: "hard copy",
            unscaled_target: "not scaled",
            missing_online_term: "online term is missing",
            wrong_sign: "moved away",
            online_twice: "theta in both terms",
            not_in_place: "did not change",
            returns_a_new_target: "returned a network and left the given target as it was",
            first_layer_only: "parameter tensors moved",
            moves_the_online_network: "changed the online network",
            aliases_the_online_network: "shares its tensors",
            without_no_grad: "torch.no_grad()",
            placeholder: "did not change",
            raises: "raised KeyError",
        },
    )


def unfreezes_the_target(online, target, tau):
    correct(online, target, tau)
    target.requires_grad_(True)


def test_an_unfrozen_target_is_told_to_stay_frozen(capsys):
    """The update was under torch.no_grad(): the reply told it to do the update under torch.no_grad()."""
    assert not check_soft_update(unfreezes_the_target)
    out = capsys.readouterr().out
    assert "the target must stay frozen" in out and "torch.no_grad()" not in out, out


def fixed_tau(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.mul_(1 - 0.005).add_(0.005 * p)  # the notebook's TAU, not the argument


def updated_twice(online, target, tau):
    correct(online, target, tau)
    correct(online, target, tau)


def test_a_fixed_tau_and_a_double_update_are_named(capsys):
    """Both got only "with tau = 0.1 the target is not tau * theta + (1 - tau) * theta'", though step 15 names them."""
    for slip, words in (
        (fixed_tau, "a Polyak step with tau = 0.005, but tau is 0.1 here: use the argument tau"),
        (updated_twice, "the target took two Polyak steps toward the online network"),
    ):
        assert not check_soft_update(slip)
        out = capsys.readouterr().out
        assert words in out and "the target is not" not in out, out


def freezes_the_online_network(online, target, tau):
    online.requires_grad_(False)  # "without building a gradient"
    correct(online, target, tau)


def test_a_frozen_online_network_is_refused(capsys):
    """It passed: only the target's values and flags were checked, and the actor would never learn again."""
    assert not check_soft_update(freezes_the_online_network)
    out = capsys.readouterr().out
    assert "your function changed the online network's requires_grad" in out, out


def target_made_float64(online, target, tau):
    for p, p_t in zip(online.parameters(), target.parameters()):
        p_t.data = tau * p.detach().double() + (1 - tau) * p_t.detach().double()


def test_a_target_made_float64_is_refused(capsys):
    """The values are right, but the target's parameters became float64: the checker said Correct."""
    assert not check_soft_update(target_made_float64)
    out = capsys.readouterr().out
    assert (
        "the values are right, but the target's net.hidden.0.weight is torch.float64, expected torch.float32" in out
    ), out
