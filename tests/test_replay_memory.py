"""td3_steps.replay_memory: step 1 (store transitions) and step 4 (sample a batch)."""

import re

import numpy as np
import pytest
import torch

from td3_steps import ReplayMemory, replay_memory
from td3_steps.replay_memory import SAMPLE_ARGUMENTS


# ---------------------------------------------------------------- step 1: replay memory
def test_memory_stores_float32_and_wraps_at_capacity():
    memory = ReplayMemory(capacity=3, obs_dim=2, action_dim=1)
    for i in range(5):
        memory.add([i, i], [i], reward=float(i), next_obs=[i + 1, i + 1], terminated=False, truncated=i == 4)
    assert len(memory) == 3 and memory.position == 2
    assert memory.obs.dtype == torch.float32
    # slots 0 and 1 were overwritten by transitions 3 and 4; slot 2 still holds transition 2
    assert memory.reward[:, 0].tolist() == [3.0, 4.0, 2.0]
    assert memory.truncated[:, 0].tolist() == [0.0, 1.0, 0.0]
    assert memory.terminated.sum() == 0  # truncated is stored apart, never as terminated


def test_memory_state_dict_round_trip():
    memory = ReplayMemory(capacity=4, obs_dim=1, action_dim=1)
    for i in range(6):
        memory.add([i], [0.5], 1.0, [i + 1], i == 5)
    copy = ReplayMemory(capacity=4, obs_dim=1, action_dim=1)
    copy.load_state_dict(memory.state_dict())
    assert (copy.position, copy.size) == (memory.position, memory.size)
    assert torch.equal(copy.obs, memory.obs) and torch.equal(copy.terminated, memory.terminated)
    with pytest.raises(ValueError, match="does not fit"):
        ReplayMemory(capacity=5, obs_dim=1, action_dim=1).load_state_dict(memory.state_dict())


def test_memory_rejects_bad_sizes_devices_and_dtypes_and_empty_sampling():
    with pytest.raises(ValueError, match="positive integer"):
        ReplayMemory(capacity=0, obs_dim=1, action_dim=1)
    with pytest.raises(ValueError, match="empty"):
        ReplayMemory(capacity=2, obs_dim=1, action_dim=1).sample(1)
    for obs_dim, action_dim in ((0, 1), (3, -1), (3.0, 1), ((84, 84, 0), 1), (None, 1), (3, True), ((), 1), ([], 1)):
        with pytest.raises(ValueError, match=rf"positive integer sizes.*got obs_dim={re.escape(repr(obs_dim))}"):
            ReplayMemory(capacity=2, obs_dim=obs_dim, action_dim=action_dim)
    memory = ReplayMemory(capacity=2, obs_dim=np.int64(3), action_dim=np.int64(2))  # as np.prod(space.shape) gives
    assert memory.obs.shape == (2, 3) and memory.action.shape == (2, 2)
    for device in (None, "cpu0", 5):
        with pytest.raises(ValueError, match=re.escape(f"Unknown device {device!r}: use 'auto', 'cpu' or 'cuda'")):
            ReplayMemory(capacity=2, obs_dim=3, action_dim=2, device=device)
    with pytest.raises(ValueError, match="obs_dtype must be a torch.dtype such as torch.uint8, got 'uint8'"):
        ReplayMemory(capacity=2, obs_dim=3, action_dim=2, obs_dtype="uint8")


def test_a_memory_larger_than_the_machine_says_so_and_what_to_lower(monkeypatch):
    """torch's "[enforce fail at alloc_cpu.cpp:127] ... can't allocate memory" reached `train --buffer-size` users.
    10**17 transitions of 40 bytes are more than even a 57-bit address space, so no machine allocates them. The
    free memory is compared before anything is allocated; where it is not known, torch's failure is explained."""
    needs = r"of 100,000,000,000,000,000 transitions needs 3,725,290,298\.5 GiB on cpu, "
    with pytest.raises(
        ValueError,
        match=needs + r"more than 90% of the [\d,.]+ .iB free: lower the capacity \(TD3Config.buffer_size\)\.",
    ):
        ReplayMemory(capacity=10**17, obs_dim=3, action_dim=1)
    monkeypatch.setattr(replay_memory, "check_memory", lambda *args: None)  # a system that does not say
    with pytest.raises(ValueError, match=needs + r"and it could not be allocated: lower the capacity"):
        ReplayMemory(capacity=10**17, obs_dim=3, action_dim=1)
    assert ReplayMemory.bytes_needed(10, (3,), 1, torch.float32) == ReplayMemory(10, 3, 1).nbytes == 10 * 40


def test_a_transition_that_does_not_fit_is_named_and_not_stored():
    memory = ReplayMemory(10, obs_dim=3, action_dim=2)
    obs, action = np.zeros(3), np.zeros(2)
    unfit = {
        "obs has shape (2,), this memory was made with obs_dim=(3,), action_dim=2": (obs[:2], action, 0.0, obs, False),
        "action has shape (3,)": (obs, obs, 0.0, obs, False),
        "next_obs is not an array of one shape": (obs, action, 0.0, [[1.0], [2.0, 3.0]], False),
        "obs holds <U1 values, not real numbers": (["a", "b", "c"], action, 0.0, obs, False),
        "action holds <U21 values, not real numbers": (obs, np.array(["1", 0], dtype=object), 0.0, obs, False),
        "reward must be one number, got 'x'": (obs, action, "x", obs, False),
        "terminated must be True or False, got None": (obs, action, 0.0, obs, None),
    }
    for message, transition in unfit.items():
        with pytest.raises(ValueError, match=re.escape(f"ReplayMemory.add: {message}")):
            memory.add(*transition)
    assert (memory.size, memory.position) == (0, 0)
    memory.add(obs, torch.zeros(2), np.float32(1.0), obs, np.bool_(True))
    assert (memory.size, memory.position) == (1, 1)
    memory.add(np.array([1, 2.5, 3], dtype=object), action, 0.0, obs, False)  # Python numbers, as predict reads them
    assert memory.obs[1].tolist() == [1.0, 2.5, 3.0]


# ---------------------------------------------------------------- step 4: sample a batch
def test_a_bad_batch_size_or_generator_is_one_clear_error():
    memory = ReplayMemory(capacity=2, obs_dim=3, action_dim=2)
    memory.add(np.zeros(3), np.zeros(2), 0.0, np.zeros(3), False)
    for batch_size, generator in ((-1, None), (1.5, None), ("3", None), (None, None)):
        with pytest.raises(ValueError, match=re.escape(f"{SAMPLE_ARGUMENTS}; got {batch_size!r}, {generator!r}.")):
            memory.sample(batch_size, generator)
    with pytest.raises(TypeError, match=r"ReplayMemory.sample: generator must be a torch.Generator or None, got 5"):
        memory.sample(2, 5)


def test_batch_shapes_and_uniform_sampling():
    memory = ReplayMemory(capacity=10, obs_dim=3, action_dim=2)
    for i in range(10):
        memory.add([i] * 3, [0, 0], float(i), [i] * 3, terminated=i == 9)
    batch = memory.sample(4, generator=torch.Generator().manual_seed(0))
    assert batch.obs.shape == (4, 3) and batch.action.shape == (4, 2) and batch.next_obs.shape == (4, 3)
    assert batch.reward.shape == (4, 1) and batch.terminated.shape == (4, 1)
    assert torch.equal(batch.reward[:, 0], batch.obs[:, 0])  # one index for every field
    counts = torch.bincount(memory.sample(20_000, torch.Generator().manual_seed(1)).reward[:, 0].long(), minlength=10)
    assert counts.min() > 1800 and counts.max() < 2200  # 2000 expected each; std about 42


def test_sampling_sees_only_stored_transitions():
    memory = ReplayMemory(capacity=100, obs_dim=1, action_dim=1)
    for _ in range(3):
        memory.add([1.0], [0.0], 1.0, [1.0], False)
    assert torch.all(memory.sample(500).reward == 1.0)  # never an empty slot


@pytest.mark.parametrize(
    "change, words",
    [
        ({"obs": 5.0}, r"obs has shape \(\), this memory was made with obs_dim=\(3,\)"),
        ({"next_obs": [5.0]}, r"next_obs has shape \(1,\)"),  # broadcast to [5, 5, 5] before
        ({"action": torch.zeros(1, 1)}, r"action has shape \(1, 1\)"),
        ({"terminated": 2.5}, r"terminated must be True or False, got 2.5"),  # (1 - 2.5) would flip the bootstrap
        ({"truncated": float("nan")}, r"truncated must be True or False, got nan"),
    ],
)
def test_add_refuses_a_value_that_would_be_broadcast_or_scale_the_bootstrap(change, words):
    memory = ReplayMemory(4, 3, 1)
    transition = {"obs": [0.0, 1.0, 2.0], "action": [0.5], "reward": 1.0, "next_obs": [1.0, 2.0, 3.0],
                  "terminated": False, "truncated": False}  # fmt: skip
    with pytest.raises(ValueError, match=words):
        memory.add(**{**transition, **change})
    assert len(memory) == 0 and memory.position == 0
    memory.add(**{**transition, "terminated": 1, "truncated": np.bool_(False)})  # 1, 0 and numpy bools are flags
    assert memory.terminated[0].item() == 1.0


def test_an_action_that_carries_its_graph_is_stored_without_it():
    """A student's actor(s) outside torch.no_grad(): the memory must not join the graph, or the next critic update
    reaches back into the actor (and the one after fails inside torch)."""
    memory, weight = ReplayMemory(4, 3, 1), torch.ones(1, requires_grad=True)
    memory.add(np.zeros(3), weight * 0.5, 1.0, np.ones(3), False)
    assert not memory.action.requires_grad and memory.action[0, 0] == 0.5


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"terminated": "maybe"}, "terminated must be True or False"),
        ({"reward": 1e40}, "beyond what float32 holds"),
        ({"reward": 10**400}, "reward must be one number"),
        ({"action": [0.7, 0.7]}, r"action has shape \(2,\)"),
        ({"obs": torch.zeros(3, device="meta")}, "ReplayMemory.add: obs is a tensor on the 'meta' device"),
        ({"next_obs": torch.full((3,), 1 + 2j)}, "ReplayMemory.add: next_obs holds complex64 values, not real numbers"),
        ({"action": np.array([0.5j])}, "ReplayMemory.add: action holds complex128 values, not real numbers"),
    ],
)
def test_a_refused_transition_leaves_every_stored_one_as_it_was(bad, message):
    memory = ReplayMemory(2, 3, 1)
    for k in range(2):  # full: the next one would overwrite slot 0
        memory.add(np.full(3, k), [0.1 * k], float(k), np.full(3, k + 0.5), False)
    before = {name: t.clone() for name, t in memory._tensors().items()}
    transition = {"obs": np.full(3, 7.0), "action": [0.7], "reward": 7.0, "next_obs": np.full(3, 7.0)}
    with pytest.raises(ValueError, match=message):
        memory.add(**{**transition, "terminated": False, **bad})
    assert all(torch.equal(before[name], t) for name, t in memory._tensors().items())
    assert (memory.position, memory.size) == (0, 2)


def test_a_refused_saved_memory_leaves_the_memory_as_it_was():
    """A meta tensor in the last column raised torch's NotImplementedError after the columns before it were
    overwritten: obs held the saved memory's, truncated this one's, size and position this one's."""
    memory = ReplayMemory(4, 3, 1)
    memory.add(np.ones(3), [0.1], 1.0, np.ones(3), False)
    before = {name: t.clone() for name, t in memory._tensors().items()}
    saved = memory.state_dict()
    saved["obs"] = saved["obs"] * 5
    saved["truncated"] = torch.zeros_like(saved["truncated"], device="meta")
    with pytest.raises(ValueError, match="does not fit this one: truncated is a tensor on the 'meta' device"):
        memory.load_state_dict(saved)
    assert all(torch.equal(before[name], t) for name, t in memory._tensors().items())


def test_a_saved_memory_whose_position_is_not_its_size_is_refused_until_full():
    """Position 5 with 1 transition stored would write the next ones past slots never filled, which sample reads."""
    memory = ReplayMemory(10, 3, 1)
    memory.add(np.zeros(3), [0.0], 0.0, np.zeros(3), False)
    state = {**memory.state_dict(), "position": 5}
    with pytest.raises(ValueError, match="size 1 and position 5 do not fit its capacity 10"):
        ReplayMemory(10, 3, 1).load_state_dict(state)


def test_a_sampled_truncation_is_not_a_termination():
    """Truncated only: the sampled terminated flag stays 0, so that the target bootstraps from s'."""
    memory = ReplayMemory(4, obs_dim=2, action_dim=1)
    memory.add(np.zeros(2), np.zeros(1), 1.0, np.ones(2), terminated=False, truncated=True)
    batch = memory.sample(16, torch.Generator().manual_seed(0))
    assert torch.all(batch.terminated == 0.0) and torch.all(batch.next_obs == 1.0)


def test_an_action_straight_from_the_actor_is_told_its_shape():
    """A (1, 1) action that still requires grad (actor(obs[None]) without torch.no_grad()) got torch's "Can't call
    numpy() on Tensor that requires grad" from the check that explains the failure."""
    memory = ReplayMemory(4, obs_dim=3, action_dim=1)
    action = torch.zeros(1, 1, requires_grad=True) * 2
    with pytest.raises(ValueError, match=r"ReplayMemory.add: action has shape \(1, 1\), this memory was made with"):
        memory.add(np.zeros(3), action, 0.0, np.zeros(3), False)
    assert memory.size == 0


# ---------------------------------------------------------------- found by mutating the code (each fails on its mutant)
def test_a_negative_reward_is_stored_with_its_sign():
    """The tests stored rewards >= 0 alone, so a memory that stored |r| (Pendulum's rewards are all negative) passed
    them; so did one that stored r for the sampled batch only."""
    memory = ReplayMemory(4, obs_dim=2, action_dim=1)
    memory.add(np.zeros(2), [0.0], -2.5, np.ones(2), False)
    assert memory.reward[0, 0].item() == -2.5
    assert memory.sample(3, torch.Generator().manual_seed(0)).reward[:, 0].tolist() == [-2.5] * 3


def test_a_termination_is_not_stored_as_a_truncation():
    """truncated is stored as given, apart from terminated both ways: a terminated transition keeps truncated 0 (the
    saved memory, and any variant that reads the column, would otherwise see a time limit that never came)."""
    memory = ReplayMemory(4, obs_dim=2, action_dim=1)
    memory.add(np.zeros(2), [0.0], 1.0, np.ones(2), terminated=True, truncated=False)
    assert (memory.terminated[0, 0].item(), memory.truncated[0, 0].item()) == (1.0, 0.0)


@pytest.mark.parametrize(("capacity", "stored", "position"), [(10, 5, 2), (4, 4, 4)])
def test_a_saved_memory_whose_position_is_not_a_next_slot_is_refused(capacity, stored, position):
    """Until a memory is full its next slot is its size: position 2 with 5 stored would overwrite transitions 2 to 4
    next. Once full, the position is below the capacity: position 4 of 4 would write past the last row."""
    memory = ReplayMemory(capacity, 3, 1)
    for _ in range(stored):
        memory.add(np.zeros(3), [0.0], 0.0, np.zeros(3), False)
    state = {**memory.state_dict(), "position": position}
    with pytest.raises(ValueError, match=rf"size {stored} and position {position} do not fit its capacity {capacity}"):
        ReplayMemory(capacity, 3, 1).load_state_dict(state)
