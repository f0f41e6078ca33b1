"""The step 4 checker accepts a right sampler and names each wrong one students write."""

import random

import numpy as np
import torch

from td3_steps import Batch
from td3_steps.exercises.step04 import check_sample_batch


def sampler(draw, convert=None, change=None):
    """A sampler from its parts: draw(size, n, generator) -> indices, convert(values, j) -> tensor."""

    def column(rows, j):
        values = np.array([row[j] for row in rows])
        if convert:
            return convert(values, j)
        tensor = torch.as_tensor(values, dtype=torch.float32)
        return tensor.unsqueeze(1) if j in (2, 4) else tensor

    def sample(storage, batch_size, generator=None):
        rows = [storage[i] for i in draw(len(storage), batch_size, generator)]
        batch = Batch(*(column(rows, j) for j in range(5)))
        return change(batch) if change else batch

    return sample


def uniform(size, n, generator):
    return torch.randint(0, size, (n,), generator=generator).tolist()


def without_replacement(size, n, generator):
    return torch.randperm(size, generator=generator)[:n].tolist()


def numpy_without_replacement(size, n, generator):
    rng = np.random.default_rng(int(torch.randint(0, 2**31, (1,), generator=generator)))
    return rng.choice(size, n, replace=False).tolist()


def random_slice(size, n, generator):
    start = int(torch.randint(0, size - n + 1, (1,), generator=generator))
    return list(range(start, start + n))


def test_accepts_a_right_sampler(capsys):
    assert check_sample_batch(sampler(uniform))
    assert capsys.readouterr().out.count("Correct!") == 1


def sample_todo(storage, batch_size, generator=None):
    """The notebook's untouched exercise."""
    rows = storage[:batch_size]
    obs, action, reward, next_obs, terminated = (torch.tensor(np.array(column)) for column in zip(*rows))
    return Batch(obs, action, reward, next_obs, terminated)


def sample_not_written(storage, batch_size, generator=None):
    raise NotImplementedError


def sample_misaligned(storage, batch_size, generator=None):
    batch = sampler(uniform)(storage, batch_size, generator)
    return batch._replace(reward=batch.reward.roll(1, dims=0))


def sample_separate_indices(storage, batch_size, generator=None):
    fields = [sampler(uniform)(storage, batch_size, generator)[j] for j in range(5)]
    return Batch(*fields)


def sample_python_random(storage, batch_size, generator=None):
    return sampler(lambda size, n, g: random.sample(range(size), n))(storage, batch_size, generator)


def sample_own_generator(storage, batch_size, generator=None):
    return sampler(uniform)(storage, batch_size, torch.Generator().manual_seed(0))


def sample_and_pop(storage, batch_size, generator=None):
    """Takes the drawn transitions out of the memory, like a queue."""
    batch = sampler(uniform)(storage, batch_size, generator)
    for k in sorted(set(batch.obs[:, 0].long().tolist()), reverse=True):
        storage.pop(k - 1)
    return batch


def shuffle_then_take(storage, batch_size, generator=None):
    order = torch.randperm(len(storage), generator=generator).tolist()
    storage[:] = [storage[i] for i in order]
    return sampler(lambda size, n, g: range(n))(storage, batch_size, generator)


def sample_and_scale_stored_obs(storage, batch_size, generator=None):
    batch = sampler(uniform)(storage, batch_size, generator)
    storage[0][0][:] = 0.0
    return batch


def recent(size, n, generator):
    weights = torch.arange(1.0, size + 1)
    return torch.multinomial(weights, n, replacement=True, generator=generator).tolist()


def one_index_for_the_batch(size, n, generator):
    return torch.randint(0, size, (1,), generator=generator).tolist() * n


def rounded(size, n, generator):
    """round(rand * (len - 1)): the two end transitions get half a step each, half the chance of the others."""
    return (torch.rand(n, generator=generator) * (size - 1)).round().long().tolist()


def even_favoured(size, n, generator):
    """Twice the chance for every other transition: unfair, yet each half of the memory gets half the draws."""
    weights = torch.tensor([1.0, 2.0]).repeat(size // 2)
    return torch.multinomial(weights, n, replacement=True, generator=generator).tolist()


def stratified(size, n, generator):
    """One index from each of n equal stretches of the memory: every transition has the same chance, but every
    batch is spread evenly by construction, not drawn independently."""
    offsets = torch.rand(n, generator=generator)
    return [min(size - 1, int((k + float(offsets[k])) * size / n)) for k in range(n)]


def flat_columns(values, j):
    return torch.as_tensor(values, dtype=torch.float32)


def row_columns(values, j):
    tensor = torch.as_tensor(values, dtype=torch.float32)
    return tensor.unsqueeze(0) if j in (2, 4) else tensor


def boolean_flags(values, j):
    tensor = torch.as_tensor(values) if j == 4 else torch.as_tensor(values, dtype=torch.float32)
    return tensor.unsqueeze(1) if j in (2, 4) else tensor


def integer_flags(values, j):
    tensor = torch.as_tensor(values.astype(np.int64)) if j == 4 else torch.as_tensor(values, dtype=torch.float32)
    return tensor.unsqueeze(1) if j in (2, 4) else tensor


def wrapped_obs(values, j):
    tensor = torch.as_tensor(values, dtype=torch.float32)
    return tensor.unsqueeze(1)


def action_as_one_column(values, j):
    """Every field but obs and next_obs viewed as a column: right only while the action has one number."""
    tensor = torch.as_tensor(values, dtype=torch.float32)
    return tensor if j in (0, 3) else tensor.view(-1, 1)


def rounded_rewards(batch):
    return batch._replace(reward=batch.reward.round())


WRONG = {
    sample_todo: "reward has shape (16,), expected (16, 1)",
    sample_not_written: "is not written yet",
    sampler(lambda size, n, g: list(range(n))): "the 16 oldest transitions",
    sampler(lambda size, n, g: list(range(size - n, size))): "the 16 newest transitions",
    sampler(random_slice): "a random start, then in order",
    sampler(
        lambda size, n, g: torch.randint(0, size - 1, (n,), generator=g).tolist()
    ): "newest transition is never drawn",
    sampler(lambda size, n, g: torch.randint(1, size, (n,), generator=g).tolist()): "index 0) is never drawn",
    sampler(lambda size, n, g: torch.randint(0, size + 1, (n,), generator=g).tolist()): "so high = len(storage)",
    lambda storage, batch_size, generator=None: storage[torch.randint(0, len(storage), (batch_size,))]: (
        "storage is a Python list, which takes one whole number at a time as an index"
    ),
    sampler(lambda size, n, g: torch.randint(0, size // 2, (n,), generator=g).tolist()): "were never drawn",
    sampler(recent): "the draws are not uniform",
    sampler(one_index_for_the_batch): "every row of the batch is the same transition",
    sampler(without_replacement): "you draw without replacement",
    sampler(numpy_without_replacement): "with replacement, as in the authors' code",
    sampler(stratified): "took 10 of its transitions from the older half of the memory, give or take 0.0",
    sampler(lambda size, n, g: torch.randint(0, size, (n,)).tolist()): "changed torch's global random state",
    sample_python_random: "random.sample",
    sample_own_generator: "not one seeded inside your function",
    sample_misaligned: "a row mixes different transitions",
    sample_separate_indices: "draw ONE set of indices",
    sampler(uniform, change=lambda b: b._replace(obs=b.next_obs, next_obs=b.obs)): "obs and next_obs are swapped",
    sampler(uniform, change=lambda b: b._replace(terminated=1 - b.terminated)): "(a 'not done' mask)",
    sampler(uniform, change=lambda b: b._replace(terminated=torch.zeros_like(b.terminated))): "does not match",
    sampler(uniform, flat_columns): "add the column with .unsqueeze(1)",
    sampler(uniform, row_columns): ".unsqueeze(0) adds the wrong axis",
    sampler(uniform, lambda values, j: torch.as_tensor(values).reshape(len(values), -1)): "numpy arrays are float64",
    sampler(uniform, boolean_flags): "store the flag as 1.0 / 0.0",
    sampler(uniform, integer_flags): "an integer tensor",
    sampler(uniform, wrapped_obs): "an extra axis of size 1",
    sampler(uniform, lambda values, j: values.astype(np.float32)): "is an ndarray, expected a torch.Tensor",
    lambda storage, batch_size, generator=None: {"obs": 1}: "expected a Batch(obs, action",
    lambda storage, batch_size, generator=None: tuple(sampler(uniform)(storage, batch_size, generator)): (
        "returned a plain tuple of five fields: wrap them in a Batch"
    ),
    sample_and_pop: "changed the memory: it held 40 transitions before the call, 26 after",
    shuffle_then_take: "reordered the memory in place",
    sample_and_scale_stored_obs: "changed the stored transition storage[0]",
    sampler(uniform, action_as_one_column): "whose actions have 2 numbers ([10 k, -10 k]) and whose rewards have a"
    " fraction (100.25 k), action has shape (32, 1): .view(-1, 1)",
    sampler(uniform, change=rounded_rewards): "the rewards were rounded to whole numbers",
}


def test_names_each_wrong_sampler(assert_rejected):
    assert_rejected(check_sample_batch, WRONG)


def test_a_bias_that_spares_the_halves_is_told_what_it_is(capsys):
    """Not uniform, with the draws split evenly between the halves: the reply said "the older half of the memory got
    50% of the draws instead of 50%"."""
    assert not check_sample_batch(sampler(rounded))
    out = capsys.readouterr().out
    assert "the oldest and the newest transitions were drawn" in out and "about half as often" in out, out
    assert "older half" not in out, out
    assert not check_sample_batch(sampler(even_favoured))
    out = capsys.readouterr().out
    assert "the draws are not uniform" in out and "where each is expected 750 times" in out, out
    assert "older half" not in out, out


def test_rewards_cut_to_their_whole_part_are_named(capsys):
    """int(reward) cuts 100.25 k's fraction off where round() rounds it to the nearest: only round() was recognised,
    and int()'s rewards got "a row mixes different transitions"."""
    for cut in (torch.trunc, lambda reward: reward.long().float()):
        assert not check_sample_batch(sampler(uniform, change=lambda b, cut=cut: b._replace(reward=cut(b.reward))))
        out = capsys.readouterr().out
        assert "the rewards were rounded to whole numbers" in out and "mixes" not in out, out
