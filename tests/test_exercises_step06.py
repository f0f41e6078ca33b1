"""The step 6 checker accepts smoothing in the normalised space and names, in u, each wrong answer."""

import torch

from td3_steps import smooth_target_action
from td3_steps.exercises.step06 import check_smooth_target_action


def smoothed(action, low, high, noise, clip_u=True):
    """a~ from a' and a noise already in u: u + noise, clipped to [-1, 1] if asked, mapped back."""
    centre, half = (high + low) / 2, (high - low) / 2
    u = (action - centre) / half + noise
    return centre + half * (torch.clamp(u, -1.0, 1.0) if clip_u else u)


def right(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.randn(action.shape, generator=generator) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def test_accepts_the_normalised_form_and_the_package(capsys):
    assert check_smooth_target_action(right)
    assert "draws the a~ of td3_steps.smooth_target_action, up to float rounding" in capsys.readouterr().out
    assert check_smooth_target_action(smooth_target_action)
    assert "Correct!" in capsys.readouterr().out


def row_by_row(action, low, high, noise_std, noise_clip, generator=None):
    """Right, but the noise comes one row at a time, in another order of draws than one torch.randn."""
    rows = [torch.randn(row.shape, generator=generator) * noise_std for row in action]
    return smoothed(action, low, high, torch.clamp(torch.stack(rows), -noise_clip, noise_clip))


def test_a_right_answer_drawing_in_another_order_is_told_why_its_values_differ(capsys):
    """It passed with no word on the exact a~ the exercise's text promises to a right answer."""
    assert check_smooth_target_action(row_by_row)
    out = capsys.readouterr().out
    assert "Correct!" in out and "draws the a~" not in out
    assert "your noise is not one torch.randn(action.shape, generator=generator)" in out


def scaled_twice(action, low, high, noise_std, noise_clip, generator=None):
    half = (high - low) / 2
    eps = torch.randn(action.shape, generator=generator) * noise_std * half
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip * half, noise_clip * half))


def clip_scaled(action, low, high, noise_std, noise_clip, generator=None):
    half = (high - low) / 2
    eps = torch.randn(action.shape, generator=generator) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip * half, noise_clip * half))


def in_action_units(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.clamp(torch.randn(action.shape, generator=generator) * noise_std, -noise_clip, noise_clip)
    return torch.clamp(action + eps, low, high)


def tutorial(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.clamp(torch.randn(action.shape, generator=generator) * noise_std, -noise_clip, noise_clip)
    return (action + eps).clamp(-high[0], high[0])


def without_sigma(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.randn(action.shape, generator=generator)
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def variance(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.randn(action.shape, generator=generator) * noise_std**2
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def no_noise_clip(action, low, high, noise_std, noise_clip, generator=None):
    return smoothed(action, low, high, torch.randn(action.shape, generator=generator) * noise_std)


def no_bound_clip(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.clamp(torch.randn(action.shape, generator=generator) * noise_std, -noise_clip, noise_clip)
    return smoothed(action, low, high, eps, clip_u=False)


def clips_only_the_low_bound(action, low, high, noise_std, noise_clip, generator=None):
    centre, half = (high + low) / 2, (high - low) / 2
    eps = torch.clamp(torch.randn(action.shape, generator=generator) * noise_std, -noise_clip, noise_clip)
    return centre + half * torch.clamp((action - centre) / half + eps, min=-1.0)


def test_only_the_dimension_that_leaves_the_bounds_is_named(capsys):
    """u + eps clipped at -1 alone: the reply names dimension 1, which goes up past 1, and not dimension 0, which
    stays inside [-1, 1] (a dimension inside was said to go "up to" its largest u)."""
    assert not check_smooth_target_action(clips_only_the_low_bound)
    out = capsys.readouterr().out
    assert "some u leave [-1, 1] (dimension 1 goes up to 1.45), so" in out and "dimension 0" not in out, out


def bound_clip_first(action, low, high, noise_std, noise_clip, generator=None):
    centre, half = (high + low) / 2, (high - low) / 2
    u = torch.clamp((action - centre) / half, -1.0, 1.0)
    eps = torch.clamp(torch.randn(action.shape, generator=generator) * noise_std, -noise_clip, noise_clip)
    return centre + half * (u + eps)


def sum_clipped_at_c(action, low, high, noise_std, noise_clip, generator=None):
    centre, half = (high + low) / 2, (high - low) / 2
    u = (action - centre) / half + torch.randn(action.shape, generator=generator) * noise_std
    return centre + half * torch.clamp(u, -noise_clip, noise_clip)


def clip_before_sigma(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.clamp(torch.randn(action.shape, generator=generator), -noise_clip, noise_clip) * noise_std
    return smoothed(action, low, high, eps)


def clip_at_c_sigma(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.randn(action.shape, generator=generator) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip * noise_std, noise_clip * noise_std))


def zero_beyond_clip(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.randn(action.shape, generator=generator) * noise_std
    return smoothed(action, low, high, torch.where(eps.abs() > noise_clip, 0.0, eps))


def one_draw_per_row(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.randn(action.shape[0], 1, generator=generator) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def reseeds_the_global_rng(action, low, high, noise_std, noise_clip, generator=None):
    torch.manual_seed(generator.initial_seed())
    eps = torch.randn(action.shape) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def randn_like(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.randn_like(action) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def one_draw_for_all_rows(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.randn(action.shape[1], generator=generator) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def uniform(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.rand(action.shape, generator=generator) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def in_place(action, low, high, noise_std, noise_clip, generator=None):
    half = (high - low) / 2
    eps = torch.clamp(torch.randn(action.shape, generator=generator) * noise_std, -noise_clip, noise_clip)
    action += half * eps
    return torch.clamp(action, low, high)


def bounds_overwritten(action, low, high, noise_std, noise_clip, generator=None):
    """Computes a~ right, then clips u with the given bounds turned into [-1, 1] in place."""
    centre, half = (high + low) / 2, (high - low) / 2
    eps = torch.clamp(torch.randn(action.shape, generator=generator) * noise_std, -noise_clip, noise_clip)
    u = torch.max(torch.min((action - centre) / half + eps, high.fill_(1.0)), low.fill_(-1.0))
    return centre + half * u


def float64(action, low, high, noise_std, noise_clip, generator=None):
    return right(action, low, high, noise_std, noise_clip, generator).double()


def clips_in_action_units(action, low, high, noise_std, noise_clip, generator=None):
    """Was told only "with no noise, a~ must be a' itself"."""
    return right(action, low, high, noise_std, noise_clip, generator).clamp(-1.0, 1.0)


def divides_by_zero(action, low, high, noise_std, noise_clip, generator=None):
    """Blamed on noise_std, "with noise_std = 0 your function still adds noise", as NaN equals no NaN."""
    return right(action, low, high, noise_std, noise_clip, generator) / 0 * 0


def returns_u(action, low, high, noise_std, noise_clip, generator=None):
    centre, half = (high + low) / 2, (high - low) / 2
    eps = torch.clamp(torch.randn(action.shape, generator=generator) * noise_std, -noise_clip, noise_clip)
    return torch.clamp((action - centre) / half + eps, -1.0, 1.0)


def forgets_half(action, low, high, noise_std, noise_clip, generator=None):
    centre, half = (high + low) / 2, (high - low) / 2
    eps = torch.clamp(torch.randn(action.shape, generator=generator) * noise_std, -noise_clip, noise_clip)
    return centre + torch.clamp((action - centre) / half + eps, -1.0, 1.0)


def placeholder(action, low, high, noise_std, noise_clip, generator=None):
    centre, half = (high + low) / 2, (high - low) / 2
    return centre + half * ((action - centre) / half)


def flattened(action, low, high, noise_std, noise_clip, generator=None):
    return right(action, low, high, noise_std, noise_clip, generator).reshape(-1)


def two_dimensions_written_in(action, low, high, noise_std, noise_clip, generator=None):
    """Right for the checker's two action dimensions; on Pendulum it broadcasts a~ to (N, 2)."""
    eps = torch.randn(action.shape[0], 2, generator=generator) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def clip_bounds_swapped(action, low, high, noise_std, noise_clip, generator=None):
    """torch.clamp with min > max sets every value to max: the noise is -c everywhere."""
    eps = torch.randn(action.shape, generator=generator) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, noise_clip, -noise_clip))


def u_clip_bounds_swapped(action, low, high, noise_std, noise_clip, generator=None):
    centre, half = (high + low) / 2, (high - low) / 2
    eps = torch.randn(action.shape, generator=generator) * noise_std
    return centre + half * torch.clamp((action - centre) / half + eps.clamp(-noise_clip, noise_clip), 1.0, -1.0)


def reseeds_the_global_rng_from_the_generator(action, low, high, noise_std, noise_clip, generator=None):
    """Reproducible, and new noise at each call, but every later draw in the notebook follows the new seed."""
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=generator)))
    eps = torch.randn(action.shape) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def clip_written_in(action, low, high, noise_std, noise_clip, generator=None):
    """TD3's c = 0.5 written into the function instead of noise_clip: it passed, every clip measured at 0.5."""
    eps = torch.randn(action.shape, generator=generator) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -0.5, 0.5))


WRONG = {
    placeholder: "no noise was added",
    clip_written_in: "with c = 0.3 the noise in u reaches [0.50, 0.50], expected +-0.3: clip to the noise_clip you",
    scaled_twice: "scaled twice",
    clip_scaled: "you clipped it at +-c h, but in u the clip needs no h",
    in_action_units: "in the action's units",
    tutorial: "in the action's units",
    without_sigma: "with noise_std = 0 your function still adds noise",
    variance: "sigma squared",
    no_noise_clip: "beyond +-c = +-0.5",
    no_bound_clip: "(dimension 0 goes down to -1.45, dimension 1 goes up to 1.45)",
    bound_clip_first: "clip u + eps to [-1, 1] after adding the noise",
    sum_clipped_at_c: "clip the noise eps alone to [-c, c]",
    randn_like: "torch.randn and torch.randn_like draw from torch's global generator",
    one_draw_for_all_rows: "every row got the same noise",
    uniform: "torch.rand draws from [0, 1)",
    in_place: "in place",
    bounds_overwritten: "changed the given low and high in place",
    float64: "a~ is torch.float64, expected torch.float32",
    divides_by_zero: "there is NaN or infinity in a~",
    clips_in_action_units: "you clipped a~ to [-1, 1] in the action's units",
    returns_u: "you returned u itself",
    forgets_half: "left out the half-range",
    flattened: "one smoothed action per row",
    clip_before_sigma: "you clipped the standard normal to [-c, c] before multiplying it by sigma",
    clip_at_c_sigma: "the noise in u stops at [0.20, 0.20], +-c sigma",
    zero_beyond_clip: "moves every value beyond +-c onto +-c",
    one_draw_per_row: "every dimension of a row got the same noise (correlation 1.00",
    reseeds_the_global_rng: "a second call with the same generator gave the same noise as the first",
    two_dimensions_written_in: "on Pendulum's one action dimension (low = [-2], high = [2]), it returned shape"
    " (64, 2) for actions of shape (64, 1)",
    clip_bounds_swapped: "the noise in u is -c = -0.5 in every row and dimension: torch.clamp(eps, noise_clip,"
    " -noise_clip)?",
    u_clip_bounds_swapped: "every action came back as low: torch.clamp(u, 1, -1)?",
    reseeds_the_global_rng_from_the_generator: "changed torch's global random state",
}


def test_names_each_wrong_answer_in_the_normalised_coordinates(assert_rejected):
    assert_rejected(check_smooth_target_action, WRONG)


def test_a_student_who_scaled_twice_is_not_told_to_scale_more(capsys):
    assert not check_smooth_target_action(scaled_twice)
    out = capsys.readouterr().out
    assert "(sigma h)" not in out and "expected sigma * h" not in out, out
    assert "expected sigma = 0.2 in every dimension" in out


def test_a_swapped_clip_is_not_blamed_on_the_draw(capsys):
    """clamp(eps, c, -c) gives the same noise in every row: the reply said to draw eps with the batch's shape."""
    assert not check_smooth_target_action(clip_bounds_swapped)
    assert "every row got the same noise" not in capsys.readouterr().out


def test_a_global_seed_set_inside_is_undone(capsys):
    torch.manual_seed(123)
    before = torch.get_rng_state()
    assert not check_smooth_target_action(reseeds_the_global_rng_from_the_generator)
    assert torch.equal(torch.get_rng_state(), before)


def test_the_randn_like_reply_is_true_of_every_supported_torch(capsys):
    """The reply said "torch.randn_like takes no generator": recent torch versions' does (generator=), the
    oldest the course supports (2.2) does not."""
    assert not check_smooth_target_action(randn_like)
    out = capsys.readouterr().out
    assert "takes no generator" not in out and "randn_like takes a generator only in recent torch versions" in out, out


def scales_swapped(action, low, high, noise_std, noise_clip, generator=None):
    eps = torch.randn(action.shape, generator=generator) * noise_clip
    return smoothed(action, low, high, torch.clamp(eps, -noise_std, noise_std))


def test_noise_std_and_noise_clip_swapped_are_named(capsys):
    """The reply said only "the noise in u never goes past [0.40, 0.40], expected +-c = +-0.5"."""
    assert not check_smooth_target_action(scales_swapped)
    out = capsys.readouterr().out
    assert "noise_std and noise_clip are swapped" in out and "a noise of std c clipped at +-sigma" in out, out


def reseeds_the_global_rng_with_zero(action, low, high, noise_std, noise_clip, generator=None):
    """The noise from the generator, right, and a torch.manual_seed(0) left in: every later draw follows seed 0."""
    torch.manual_seed(0)
    eps = torch.randn(action.shape, generator=generator) * noise_std
    return smoothed(action, low, high, torch.clamp(eps, -noise_clip, noise_clip))


def test_a_global_seed_is_named_whatever_seed_the_notebook_holds(capsys):
    """After the notebook's own torch.manual_seed(0), with no draw since, the same seed inside went unseen."""
    torch.manual_seed(0)
    before = torch.get_rng_state()
    assert not check_smooth_target_action(reseeds_the_global_rng_with_zero)
    assert "changed torch's global random state" in capsys.readouterr().out
    assert torch.equal(torch.get_rng_state(), before)
