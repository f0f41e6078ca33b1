"""The step 4 checker accepts a correct sampler and rejects the common wrong ones, in words."""

import numpy as np
import torch

from td3_steps import Batch
from td3_steps.exercises.step04 import check_sample_batch


def _sampler(draw, as_float32=True, column=True):
    def sample(storage, batch_size, generator=None):
        rows = [storage[i] for i in draw(len(storage), batch_size, generator)]

        def field(j):
            values = np.array([row[j] for row in rows])
            return torch.as_tensor(values, dtype=torch.float32) if as_float32 else torch.as_tensor(values)

        reward, terminated = field(2), field(4)
        if column:
            reward, terminated = reward.unsqueeze(1), terminated.unsqueeze(1)
        return Batch(field(0), field(1), reward, field(3), terminated)

    return sample


def uniform(size, n, generator):
    return torch.randint(0, size, (n,), generator=generator).tolist()


def test_accepts_a_correct_sampler(capsys):
    assert check_sample_batch(_sampler(uniform))
    assert "Correct!" in capsys.readouterr().out


def test_rejects_flat_columns_and_float64(capsys):
    assert not check_sample_batch(_sampler(uniform, as_float32=False, column=False))
    out = capsys.readouterr().out
    assert "reward has shape (16,), expected (16, 1)" in out and "torch.float64" in out


def test_rejects_the_oldest_transitions(capsys):
    assert not check_sample_batch(_sampler(lambda size, n, g: list(range(n))))
    assert "consecutive" in capsys.readouterr().out


def test_rejects_off_by_one_and_biased_and_unseeded(capsys):
    assert not check_sample_batch(_sampler(lambda size, n, g: torch.randint(0, size - 1, (n,), generator=g).tolist()))
    assert "newest transition is never drawn" in capsys.readouterr().out

    def recent(size, n, g):
        return torch.multinomial(torch.arange(1.0, size + 1), n, replacement=True, generator=g).tolist()

    assert not check_sample_batch(_sampler(recent))
    assert "not uniform" in capsys.readouterr().out
    assert not check_sample_batch(_sampler(lambda size, n, g: torch.randint(0, size, (n,)).tolist()))
    assert "generator" in capsys.readouterr().out


def test_rejects_misaligned_rows_and_survives_errors(capsys):
    def misaligned(storage, batch_size, generator=None):
        batch = _sampler(uniform)(storage, batch_size, generator)
        return batch._replace(reward=batch.reward.roll(1, dims=0))

    assert not check_sample_batch(misaligned)
    assert "mixes different transitions" in capsys.readouterr().out

    def broken(storage, batch_size, generator=None):
        raise IndexError("list index out of range")

    assert not check_sample_batch(broken)
    assert "raised IndexError" in capsys.readouterr().out
