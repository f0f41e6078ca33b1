"""Checker for notebooks/01_replay_memory.ipynb: adding a transition to a ring buffer.

The student writes `add(memory, obs, action, reward, next_obs, terminated, truncated)`, where
`memory` is the dict that `new_memory(capacity, obs_dim, action_dim)` returns: preallocated
float32 tensors ("obs", "action", "reward", "next_obs", "terminated", "truncated"; rewards and
flags shaped (capacity, 1)) and the integers "position", "size" and "capacity".
"""

from __future__ import annotations

import torch

from . import report

FIELDS = ("obs", "action", "reward", "next_obs", "terminated", "truncated")


def new_memory(capacity: int, obs_dim: int, action_dim: int) -> dict:
    """An empty ring buffer as a dict: preallocated tensors, position 0, size 0."""
    sizes = {"obs": obs_dim, "action": action_dim, "reward": 1, "next_obs": obs_dim, "terminated": 1, "truncated": 1}
    memory: dict = {name: torch.zeros(capacity, size) for name, size in sizes.items()}
    memory.update(position=0, size=0, capacity=capacity)
    return memory


def _transition(t: int, terminated: bool = False, truncated: bool = False) -> tuple:
    """Transition number t, easy to recognise: every number in it is built from t."""
    obs = [float(t), 10.0 + t]
    action = [-float(t)]
    return obs, action, 100.0 + t, [float(t + 1), 11.0 + t], terminated, truncated


def _expected_slots(transitions: list[tuple], capacity: int) -> dict[int, int]:
    """Which transition (by number) each slot must hold after adding them all in order."""
    return {i % capacity: i for i in range(len(transitions))}


def check_add(add) -> bool:
    """Add transitions to small memories with `add`; say in words what goes wrong."""
    problems: list[str] = []
    capacity = 3
    # Transition 1 is truncated (a time limit), 3 is terminated (a real end).
    transitions = [_transition(t, terminated=(t == 3), truncated=(t == 1)) for t in range(5)]

    # 1. The first transition lands in slot 0 and moves position and size on.
    memory = new_memory(capacity, 2, 1)
    try:
        add(memory, *transitions[0])
    except Exception as error:  # noqa: BLE001 - the student's code may raise anything
        return report([f"add raised {type(error).__name__}: {error}"], "")
    obs0, action0, reward0, next_obs0, _, _ = transitions[0]
    if not torch.allclose(memory["obs"][0], torch.tensor(obs0)):
        problems.append(
            f"after one add, memory['obs'][0] is {memory['obs'][0].tolist()}, expected {obs0}: store obs at slot position."
        )
    if not torch.allclose(memory["action"][0], torch.tensor(action0)) or not torch.allclose(
        memory["next_obs"][0], torch.tensor(next_obs0)
    ):
        problems.append("after one add, the action or next_obs at slot 0 is not the one given: store every field.")
    if float(memory["reward"][0, 0]) != reward0:
        problems.append(f"after one add, memory['reward'][0] is {memory['reward'][0].tolist()}, expected [{reward0}].")
    if memory["position"] != 1:
        problems.append(f"after one add, position is {memory['position']}, expected 1: advance it by one.")
    if memory["size"] != 1:
        problems.append(f"after one add, size is {memory['size']}, expected 1: count the transitions stored.")
    if problems:
        return report(problems, "")

    # 2. Five transitions into three slots: the ring wraps and overwrites the oldest.
    memory = new_memory(capacity, 2, 1)
    for number, transition in enumerate(transitions):
        try:
            add(memory, *transition)
        except Exception as error:  # noqa: BLE001
            hint = (
                " Did position run past the last slot? Wrap it: (position + 1) % capacity."
                if number >= capacity
                else ""
            )
            message = (
                f"adding transition {number} to a memory of capacity {capacity} raised {type(error).__name__}: {error}."
            )
            return report([message + hint], "")
        if not 0 <= memory["position"] < capacity:
            problems.append(
                f"after {number + 1} adds, position is {memory['position']}: it must stay in [0, {capacity - 1}];"
                " wrap it with (position + 1) % capacity."
            )
            break
    if problems:
        return report(problems, "")
    if memory["position"] != len(transitions) % capacity:
        problems.append(
            f"after {len(transitions)} adds into {capacity} slots, position is {memory['position']},"
            f" expected {len(transitions) % capacity} (the slot of the oldest transition, the next to be overwritten)."
        )
    if memory["size"] != capacity:
        problems.append(
            f"after {len(transitions)} adds into {capacity} slots, size is {memory['size']}, expected {capacity}:"
            " size counts stored transitions and can never exceed the capacity (min(size + 1, capacity))."
        )
    for slot, number in _expected_slots(transitions, capacity).items():
        stored = float(memory["reward"][slot, 0])
        if stored != 100.0 + number:
            problems.append(
                f"slot {slot} holds the transition with reward {stored}, expected transition {number}"
                f" (reward {100.0 + number}): each new transition overwrites the oldest one."
            )
            break

    # 3. terminated and truncated are stored apart.
    memory = new_memory(capacity, 2, 1)
    for transition in transitions[:3]:
        try:
            add(memory, *transition)
        except Exception as error:  # noqa: BLE001
            return report([f"add raised {type(error).__name__}: {error}"], "")
    if float(memory["terminated"][1, 0]) != 0.0:
        problems.append(
            "transition 1 was truncated (a time limit) but you stored terminated = 1: store the two flags apart;"
            " a time limit is not a terminal state, so the target must still bootstrap from s'."
        )
    if float(memory["truncated"][1, 0]) != 1.0:
        problems.append("transition 1 was truncated but memory['truncated'][1] is not 1: store the truncated flag too.")
    memory = new_memory(capacity, 2, 1)
    for transition in transitions[2:5]:
        try:
            add(memory, *transition)
        except Exception as error:  # noqa: BLE001
            return report([f"add raised {type(error).__name__}: {error}"], "")
    if float(memory["terminated"][1, 0]) != 1.0:
        problems.append(
            "transition 3 was terminated but memory['terminated'] does not say so: store terminated as 1.0."
        )
    if float(memory["truncated"][1, 0]) != 0.0:
        problems.append("transition 3 was terminated, not truncated, but memory['truncated'] says 1.")
    return report(
        problems,
        "Your ring buffer wraps at capacity, overwrites the oldest transition first,"
        " and keeps terminated apart from truncated.",
    )
