"""td3_steps.shapes: the (B, 1) guard on rewards, flags, Q-values and targets, and the critics' tuple of them."""

import pytest
import torch

from td3_steps import bellman_target, clipped_double_q, critic_loss
from td3_steps.shapes import check_column


@pytest.mark.parametrize("shape", [(4, 1, 1), (4, 2)])
def test_only_a_column_passes_as_one(shape):
    """A (B, 1, 1) tensor (ndim not checked) against a (B, 1) one broadcasts to (B, B, 1), the bug the guard is for;
    a (B, 2) one (width not checked) takes a pair of critics' Q-values for one critic's."""
    column, wrong = torch.ones(4, 1), torch.ones(shape)
    message = rf"has shape \({', '.join(map(str, shape))}\), expected \(B, 1\)"
    with pytest.raises(ValueError, match=rf"next_q {message}"):
        bellman_target(column, torch.zeros(4, 1), wrong, 0.99)
    with pytest.raises(ValueError, match=rf"Q1 {message}"):
        clipped_double_q((wrong, wrong))
    with pytest.raises(ValueError, match=rf"target {message}"):
        critic_loss((column, column), wrong)


def test_the_unsqueeze_hint_comes_only_where_it_fixes_the_shape():
    """A flat vector of another length than the batch was told to unsqueeze(1), which gives a column of the wrong
    length still."""
    with pytest.raises(ValueError, match=r"reward has shape \(5,\), expected \(4, 1\)") as caught:
        check_column("reward", torch.ones(5), 4)
    assert "unsqueeze" not in str(caught.value)
    with pytest.raises(ValueError, match=r"reward has shape \(4,\), expected \(4, 1\).* reward.unsqueeze\(1\)"):
        check_column("reward", torch.ones(4), 4)
