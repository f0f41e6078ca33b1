"""Checker for notebooks/01_replay_memory.ipynb: `add` for a ring buffer held in a dict.

The student writes `add(memory, obs, action, reward, next_obs, terminated, truncated)`, where
`memory` is what `new_memory(capacity, obs_dim, action_dim)` returns: preallocated float32
tensors ("obs", "action", "reward", "next_obs", "terminated", "truncated"; rewards and flags
shaped (capacity, 1)) and the integers "position", "size" and "capacity".

The case: transitions 0 to 4 into a memory of 3 slots, so the ring wraps; transition 1 is
truncated (a time limit), transition 3 terminated, so the transitions after them start from a reset
observation, not from the s' before. Every number of transition t is built from t (the reward with
a fraction), so the checker can tell which transition each slot holds. It records what the student's add
did after each call (position, size, slots, fields, flags) and compares each part with the
right one; each part has its table of the wrong answers students give. Then, if all is right, a
second memory, of another capacity (4) and other sizes (obs_dim 4, action_dim 2), gets transitions 0
to 4 again, the last one both terminated and truncated, then 5 to 8, round the ring onto it: a capacity
written into add as 3, a position kept outside the memory dict (a global), sizes written into add (action[0],
obs two numbers at a time), `terminated and not truncated`, or a terminated flag written only when it is set
show there.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

import torch

from . import Mistake, checker, dtype_problem, kind_of, match_mistake, report, run_safely

CAPACITY, OBS_DIM, ACTION_DIM = 3, 2, 1
ADDS = 5  # transitions 0 to 4 into 3 slots
TRUNCATED, TERMINATED = 1, 3  # transition 1 hits a time limit, transition 3 a terminal state
EMPTY = -1  # a slot that holds no transition yet
REWARD = 30.5  # transition t's reward is REWARD + t: a fraction, which a reward rounded to an int loses
FIELDS = ("obs", "action", "reward", "next_obs", "terminated", "truncated")


def new_memory(capacity: int, obs_dim: int, action_dim: int) -> dict:
    """An empty ring buffer as a dict: preallocated tensors, position 0, size 0."""
    sizes = {"obs": obs_dim, "action": action_dim, "reward": 1, "next_obs": obs_dim, "terminated": 1, "truncated": 1}
    memory: dict = {name: torch.zeros(capacity, size) for name, size in sizes.items()}
    memory.update(position=0, size=0, capacity=capacity)
    return memory


def transition(t: int, obs_dim: int = OBS_DIM, action_dim: int = ACTION_DIM) -> tuple:
    """Transition t, recognisable in every field: obs t, 10 + t, 20 + t, ...; action 20 + t, -(20 + t), ...;
    reward 30.5 + t. Its next_obs is transition t + 1's obs, except where t ends an episode (truncated or
    terminated): there s' is t + 0.5, 10.5 + t, ..., and transition t + 1 starts from a reset observation."""
    end = t + 0.5 if t in (TRUNCATED, TERMINATED) else t + 1.0
    obs, next_obs = ([start + 10.0 * k for k in range(obs_dim)] for start in (float(t), end))
    action = [(20.0 + t) * (-1) ** k for k in range(action_dim)]
    return obs, action, REWARD + t, next_obs, t == TERMINATED, t == TRUNCATED


# What the right add gives after each of the five adds.
RIGHT_POSITIONS = (1, 2, 0, 1, 2)
RIGHT_SIZES = (1, 2, 3, 3, 3)
RIGHT_SLOTS = ((0, EMPTY, EMPTY), (0, 1, EMPTY), (0, 1, 2), (3, 1, 2), (3, 4, 2))
RIGHT_TERMINATED = tuple(int(t == TERMINATED) for t in range(ADDS))  # the flag stored with each transition
RIGHT_TRUNCATED = tuple(int(t == TRUNCATED) for t in range(ADDS))
WRAP = "memory['position'] = (i + 1) % memory['capacity']"
OTHER_CAPACITY, OTHER_OBS_DIM, OTHER_ACTION_DIM = 4, 4, 2  # the second memory's
BOTH = ADDS - 1  # in the second memory, transition 4 is terminated and truncated at once

POSITION_MISTAKES = [
    Mistake(
        lambda positions: set(positions) == {0},
        "position never moves: after storing at slot i, write the next slot back into memory['position'],"
        " going round to slot 0 after the last one (changing a local variable such as i is not enough)",
    ),
    Mistake(
        lambda positions: max(positions) >= CAPACITY,
        f"position ran past the last slot (slots are 0 to {CAPACITY - 1}): wrap it, {WRAP}",
    ),
    Mistake(
        (1, 0, 1, 0, 1),
        "position wraps one slot too early, so the last slot is never written:"
        f" (i + 1) % capacity, not % (capacity - 1); {WRAP}",
    ),
    Mistake(
        (1, 2, 0, 1, 1),
        "once the memory was full, every add wrote slot 0: memory['size'] stays at the capacity then, so"
        f" size % capacity is always 0. Write at memory['position'], which keeps going round; {WRAP}",
    ),
    Mistake(
        (1, 2, 0, 0, 0),
        "position stops at 0 once the memory is full: it keeps going round, so that each new"
        f" transition overwrites the oldest; {WRAP}",
    ),
]

ONE_SHORT = (1, 2, 2, 2, 2)  # the sizes of min(size + 1, capacity - 1), and of max(size, position)
SIZE_MISTAKES = [
    Mistake(
        lambda sizes: set(sizes) == {0},
        "size never counts: after each add, raise memory['size'] by one, up to the capacity at most",
    ),
    Mistake(
        lambda sizes: max(sizes) > CAPACITY,
        f"size grew past the capacity ({CAPACITY}): size counts the stored transitions and can never exceed"
        " the capacity, min(size + 1, capacity)",
    ),
    Mistake(
        RIGHT_POSITIONS,
        "size went back to 0 with position at the wrap: size counts the stored transitions, which stay"
        " at capacity once the memory is full, min(size + 1, capacity)",
    ),
    Mistake(
        ONE_SHORT,
        "size stops one short of the capacity: min(size + 1, capacity), not capacity - 1",
    ),
]
FOLLOWS_POSITION = (  # ONE_SHORT, though an add to a memory already full leaves size = capacity
    f"size stayed {CAPACITY - 1} after transition {CAPACITY - 1} filled the last slot, as position wrapped to 0"
    f" (yet in a memory already full it does stay {CAPACITY}): size must not be read from position, as"
    " max(size, position) is; it counts the stored transitions, min(size + 1, capacity)"
)

SLOT_MISTAKES = [
    Mistake(
        (0, 1, 2),
        "the memory stopped storing once it was full: a ring buffer overwrites its oldest transition"
        " (at position) with each new one",
    ),
    Mistake(
        (0, 1, 4),
        "once full, each new transition overwrote the newest (the last slot): write at"
        " memory['position'], which wraps round to the oldest",
    ),
]


class Flags(NamedTuple):
    """The terminated and truncated flags stored with each transition 0 to 4 (1 or 0)."""

    terminated: tuple
    truncated: tuple


SWAPPED = Flags(RIGHT_TRUNCATED, RIGHT_TERMINATED)


def _stale(flags: tuple) -> tuple:
    """The flags an add stores when it writes a flag only where it is set (`if truncated: ... = 1.0`): a transition
    that overwrites a slot keeps the flag of the one before it there, transition t - CAPACITY, if that one had it."""
    return tuple(flag | (flags[t - CAPACITY] if t >= CAPACITY else 0) for t, flag in enumerate(flags))


def _stale_message(name: str, right: tuple) -> str:
    t = next(t for t, (kept, flag) in enumerate(zip(_stale(right), right)) if kept != flag)
    return (
        f"transition {t} was not {name}, but its slot holds {name} = 1: it overwrote transition {t - CAPACITY},"
        f" which was, and that 1 stayed. A flag written only when it is set (`if {name}: memory['{name}'][i] = 1.0`)"
        " leaves an overwritten slot's old flag in place: write it at every add, 1.0 or 0.0,"
        f" memory['{name}'][i] = float({name})"
    )


TERMINATED_MISTAKES = [
    Mistake(
        lambda flags: flags == SWAPPED,
        "terminated and truncated are swapped: store terminated in memory['terminated'] and truncated"
        " in memory['truncated']",
    ),
    Mistake(
        lambda flags: flags.terminated == tuple(a | b for a, b in zip(RIGHT_TERMINATED, RIGHT_TRUNCATED)),
        f"transition {TRUNCATED} was truncated (a time limit) but you stored terminated = 1: that is"
        " done = terminated or truncated. Store the two flags apart: a time limit is not a terminal"
        " state, so the target must still bootstrap from s'",
    ),
    Mistake(
        lambda flags: flags.terminated == tuple(1 - d for d in RIGHT_TERMINATED),
        "memory['terminated'] holds 1 - terminated (a 'not done' mask): store the flag itself,"
        " 1.0 for a terminal transition; step 9 computes the (1 - terminated) factor",
    ),
    Mistake(
        lambda flags: set(flags.terminated) == {0},
        f"transition {TERMINATED} was terminated but memory['terminated'] stayed 0: store the flag at slot i,"
        " as a number (1.0 for a terminal transition)",
    ),
]
TRUNCATED_MISTAKES = [
    Mistake(
        lambda flags: set(flags.truncated) == {0},
        f"transition {TRUNCATED} was truncated but memory['truncated'] stayed 0: store that flag too, at slot i,"
        " as a number",
    ),
    Mistake(  # transition 4 overwrites truncated transition 1 (with CAPACITY 3); a terminated one: the second memory
        lambda flags: flags.truncated == _stale(RIGHT_TRUNCATED),
        _stale_message("truncated", RIGHT_TRUNCATED),
    ),
]


def _which(memory: dict, slot: int) -> int | None:
    """The transition slot `slot` holds, read from its reward, action or obs; EMPTY, or None if unknown."""
    for name, first in (("reward", REWARD), ("action", 20.0), ("obs", 0.0)):
        t = float(memory[name][slot, 0]) - first
        if t.is_integer() and 0 <= t < ADDS and (name != "obs" or float(memory["obs"][slot, 1]) == 10.0 + t):
            return int(t)
    if all(not memory[name][slot].any() for name in ("obs", "action", "reward", "next_obs")):
        return EMPTY
    return None


def _flag(value) -> int | float:
    """A stored flag as an int, 1 or 0, or the number itself where it is no whole number (nan, inf, 0.5)."""
    number = float(value)
    return int(number) if number.is_integer() else number


def _shape(value) -> tuple | str:
    """A tensor's shape, or what else the value is (a student's add may replace a tensor)."""
    return tuple(value.shape) if isinstance(value, torch.Tensor) else kind_of(value)


def _as_int(value) -> int | None:
    try:
        return int(value) if float(value) == int(value) else None
    except (TypeError, ValueError, RuntimeError):
        return None


class Trace(NamedTuple):
    """What the student's add did, call by call (shorter than ADDS if a call raised)."""

    positions: tuple
    sizes: tuple
    slots: tuple  # after each add, the transition each slot holds
    fields: dict  # field name -> (transition, what was stored, what it should be) for the first wrong one
    split: tuple | None  # (transition t, position before its add, {field: its slot}) if t's fields parted
    flags: Flags | None  # None when some transition could not be found in the memory
    grown: dict  # field name -> its new shape (or type), if add replaced a preallocated tensor
    retyped: dict  # field name -> what dtype_problem says of it, if add replaced its tensor by one not float32
    copied: bool  # whether add returned a dict other than the memory it was given (a copy it worked on?)
    raised: str | None


def _wrong_fields(memory: dict, slots: tuple, obs_dim: int, action_dim: int) -> dict:
    """For obs, action, reward and next_obs: (t, what was stored, what it should be) at the first slot, of those
    holding a known transition t, whose value of that field is wrong (add may also change an earlier slot)."""
    wrong: dict = {}
    for slot, t in enumerate(slots):
        if t is None or t == EMPTY:
            continue
        obs, action, reward, next_obs, _, _ = transition(t, obs_dim, action_dim)
        for name, right in (("obs", obs), ("action", action), ("reward", [reward]), ("next_obs", next_obs)):
            stored = memory[name][slot].tolist()
            if stored != right:
                wrong.setdefault(name, (t, stored, right))
    return wrong


def _homes(memory: dict, t: int) -> dict[str, set[int]]:
    """For obs, action, reward and next_obs: the slots that hold transition t's value of that field."""
    obs, action, reward, next_obs, _, _ = transition(t)
    values = {"obs": obs, "action": action, "reward": [reward], "next_obs": next_obs}
    return {
        name: {slot for slot in range(CAPACITY) if memory[name][slot].tolist() == value}
        for name, value in values.items()
    }


def trace(add) -> Trace:
    """Run transitions 0 to 4 through `add` on a fresh memory and record what happened."""
    memory = new_memory(CAPACITY, OBS_DIM, ACTION_DIM)
    shapes = {name: _shape(memory[name]) for name in FIELDS}
    positions, sizes, slots, fields, flags, raised, split, copied = [], [], [], {}, [], None, None, False
    for t in range(ADDS):
        start = memory["position"]
        returned, raised = run_safely(add, memory, *transition(t), what=f"add(memory, transition {t})")
        copied = copied or (isinstance(returned, dict) and returned is not memory)
        if raised and t == 0 and "out of bounds" in raised:
            raised += (
                ", in an empty memory whose position is 0: is the slot read from somewhere else than"
                " memory['position'], such as a global that kept its value from an earlier run?"
            )
        if raised or any(_shape(memory[name]) != shapes[name] for name in FIELDS):
            break
        bad = [name for name in ("position", "size") if type(memory[name]) is not int]
        if bad:
            value = memory[bad[0]]
            raised = (
                f"after add(memory, transition {t}), memory['{bad[0]}'] is {value!r}, of type"
                f" {type(value).__name__}: it must stay a Python int (a slot number, a count), as new_memory made"
                " it. Compute it with Python's % and min, or convert it with int(...). The package's ReplayMemory"
                " keeps its counters as ints too, and its load_state_dict refuses a saved memory whose position"
                " or size is anything else"
            )
            break
        positions.append(memory["position"])
        sizes.append(memory["size"])
        slots.append(tuple(_which(memory, slot) for slot in range(CAPACITY)))
        homes = _homes(memory, t)
        if split is None and all(homes.values()) and not set.intersection(*homes.values()):
            split = (t, start, {name: min(held) for name, held in homes.items()})
        for name, wrong in _wrong_fields(memory, slots[-1], OBS_DIM, ACTION_DIM).items():
            fields.setdefault(name, wrong)
        where = slots[-1].index(t) if t in slots[-1] else None
        if where is None:
            flags.append(None)
            continue
        flags.append((_flag(memory["terminated"][where, 0]), _flag(memory["truncated"][where, 0])))
    grown = {name: _shape(memory[name]) for name in FIELDS if _shape(memory[name]) != shapes[name]}
    retyped = {name: dtype_problem(memory[name], f"memory[{name!r}]") for name in FIELDS if name not in grown}
    retyped = {name: problem for name, problem in retyped.items() if problem}
    found = flags and None not in flags
    stored_flags = Flags(*(tuple(pair[i] for pair in flags) for i in (0, 1))) if found else None
    return Trace(
        tuple(positions), tuple(sizes), tuple(slots), fields, split, stored_flags, grown, retyped, copied, raised
    )


def _field_problem(name: str, t: int, stored: list, right: list, wrong: Collection[str] = ()) -> str:
    """What is wrong with transition t's `name` (a list of numbers as stored, and as it should be); `wrong`: the
    names of all the fields found wrong, this one included (obs and next_obs both wrong may be a swap)."""
    obs, _, _, next_obs, terminated, _ = transition(t, obs_dim=len(right))
    value = "float(reward)" if name == "reward" else f"torch.as_tensor({name})"
    if not any(stored) and name == "next_obs" and terminated:
        return (
            f"memory['next_obs'] of transition {t}, a terminated one, holds zeros: store s' as it is given, whatever"
            " the flags; the Bellman target's (1 - terminated) of step 9 is what keeps it out of the target"
        )
    if not any(stored):
        return f"memory['{name}'] was not written: store it too, at slot i, as memory['obs'] is stored"
    other = "next_obs" if name == "obs" else "obs"
    if name in ("obs", "next_obs") and stored == (next_obs if name == "obs" else obs):
        if other in wrong:
            return "obs and next_obs are swapped: memory['obs'][i] holds s, memory['next_obs'][i] holds s'"
        return (
            f"transition {t}'s {name} is {right}, but its slot holds {stored}, its {other}: memory['{name}'][i] was"
            f" given {other} (a copy-paste slip?), while memory['{other}'][i] holds {other} as it should. Store"
            f" {name} there, memory['{name}'][i] = {value}"
        )
    whole = f"store the whole vector as it is given, memory['{name}'][i] = {value}, whatever its size"
    if len(right) > 1 and stored == [right[0]] * len(right):
        return f"transition {t}'s {name} is {right}, but its slot holds {stored}, {name}[0] in every number: {whole}"
    kept = next(n for n in range(len(right)) if stored[n] != right[n])
    if kept and not any(stored[kept:]):
        return (
            f"transition {t}'s {name} is {right}, but its slot holds {stored}: only its first {kept} of"
            f" {len(right)} numbers were stored; {whole}"
        )
    if name == "reward" and stored[0] == int(right[0]):
        return (
            f"transition {t}'s reward is {right[0]}, but its slot holds {stored[0]}: the reward was rounded to a"
            f" whole number. Rewards are real numbers: store {value}"
        )
    if name == "next_obs" and t + 1 < ADDS and stored == transition(t + 1, obs_dim=len(right))[0]:
        return (
            f"transition {t}'s next_obs is {right}, but its slot holds {stored}, the obs of transition {t + 1}:"
            f" transition {t} ended its episode (it was {'truncated' if t == TRUNCATED else 'terminated'}), so"
            f" transition {t + 1} starts from a reset observation, not from s'. Store next_obs as it is given,"
            " and leave the slots of earlier transitions alone"
        )
    return f"transition {t}'s {name} is {right}, but its slot holds {stored}: store {name} as it is given"


def _split_problem(t: int, start: int, homes: dict[str, int]) -> str:
    """Transition t's fields, all written, but not all at one slot (position moved in the middle of add)."""
    fix = (
        "Read i = memory['position'] once, store every field (the flags too) at slot i, and advance position"
        " only after the last one"
    )
    wrong = [name for name, slot in homes.items() if slot != start]
    if len(wrong) == len(homes):
        where = "; ".join(f"{name} at slot {slot}" for name, slot in homes.items())
        return f"transition {t}'s fields went to different slots ({where}). {fix}"
    right = [name for name in homes if name not in wrong]
    slots = sorted({homes[name] for name in wrong})
    at = f"slot {slots[0]}" if len(slots) == 1 else f"slots {' and '.join(map(str, slots))}"
    return (
        f"transition {t}'s {' and '.join(wrong)} were written at the wrong slot: at {at}, not at slot {start}"
        f" (memory['position'] when add began), where its {' and '.join(right)} went. Did position move before"
        f" they were stored? {fix}"
    )


def _counters_problem(run: Trace) -> str | None:
    """Position and size that never changed in the memory given to add, though add stored every field of each
    transition (at slot 0, each over the one before): add set them elsewhere, in a copy of the memory if it
    returned one. None otherwise (the position and size replies then say what is wrong)."""
    stored = len(run.slots) == ADDS and all(slots[0] == t for t, slots in enumerate(run.slots)) and not run.fields
    if not stored or set(run.positions) != {0} or set(run.sizes) != {0}:
        return None
    if run.copied:
        return (
            "add worked on a copy of the memory, and returned it: memory = dict(memory) (or memory.copy()) makes a"
            " new dict, whose tensors are the memory's own, so every transition was stored at slot 0, but whose"
            " position and size are its own, and the caller's memory kept position 0 and size 0 (the caller"
            " ignores what add returns). Change the memory add is given, in place, and return nothing"
        )
    return (
        "position and size never changed in the memory given to add, though every field of each transition was"
        " stored (at slot 0, each over the one before): write them back into that memory, memory['position'] ="
        " ... and memory['size'] = ..., not into a local variable (such as i) or into a copy of the memory"
        " (memory = dict(memory) or memory.copy() makes a new dict, with the same tensors but its own position"
        " and size)"
    )


def _size_in_a_full_memory(add) -> int | None:
    """The size `add` leaves after adding to a memory already full (position 0, size = capacity), if an int."""
    memory = new_memory(CAPACITY, OBS_DIM, ACTION_DIM)
    memory.update(size=CAPACITY)
    _, raised = run_safely(add, memory, *transition(0))
    return None if raised else _as_int(memory["size"])


def _size_problem(add, sizes: tuple) -> str | None:
    """What is wrong with the size after each add, or None."""
    right = RIGHT_SIZES[: len(sizes)]
    if sizes == right:
        return None
    if sizes == ONE_SHORT and _size_in_a_full_memory(add) == CAPACITY:
        return FOLLOWS_POSITION  # not capped at capacity - 1: it missed the wrap
    return match_mistake(sizes, SIZE_MISTAKES) or f"after each add, size was {list(sizes)}, expected {list(right)}"


def _slot_problem(run: Trace) -> str | None:
    """What is wrong with where the transitions went, unless a position problem already explains it."""
    n = len(run.slots)
    if n == 0 or run.slots == RIGHT_SLOTS[:n]:
        return None
    first = run.slots[0]
    if set(first) == {EMPTY}:
        return (
            "after one add the memory is still empty: store each field at slot i = memory['position'],"
            " e.g. memory['reward'][i] = float(reward)"
        )
    if 0 not in first:
        return "after one add, no slot holds transition 0 as given: store each field at slot i = memory['position']"
    if first.index(0) != 0:
        return (
            f"the first transition went to slot {first.index(0)}, not slot 0: store at i = memory['position']"
            " first, then advance position"
        )
    if run.positions != RIGHT_POSITIONS[:n]:
        return None
    k = next(k for k in range(n) if run.slots[k] != RIGHT_SLOTS[k])
    known = match_mistake(run.slots[-1], SLOT_MISTAKES) if n == ADDS else None
    return known or (
        f"after transition {k}, the slots hold transitions {list(run.slots[k])}, expected"
        f" {list(RIGHT_SLOTS[k])} ({EMPTY} is an empty slot): write transition t at slot memory['position']"
    )


def _flag_problems(flags: Flags) -> list[str]:
    """What is wrong with the terminated and truncated flags stored with transitions 0 to 4."""
    problems = []
    for name, stored, right, mistakes in (
        ("terminated", flags.terminated, RIGHT_TERMINATED, TERMINATED_MISTAKES),
        ("truncated", flags.truncated, RIGHT_TRUNCATED, TRUNCATED_MISTAKES),
    ):
        if stored != right and not (name == "truncated" and flags == SWAPPED):
            problems.append(
                match_mistake(flags, mistakes)
                or f"memory['{name}'] holds {list(stored)} for transitions 0 to 4, expected {list(right)}:"
                f" store {name} as it is given, memory['{name}'][i] = float({name})"
            )
    return problems


def _second_memory_problems(add) -> list[str]:
    """Transitions 0 to 4 into a second, empty memory of OTHER_CAPACITY slots and other sizes, transition BOTH
    terminated and truncated at once: what goes wrong there, for an add that was right on the first memory."""
    memory = new_memory(OTHER_CAPACITY, OTHER_OBS_DIM, OTHER_ACTION_DIM)
    where = f"in a second, empty memory, of capacity {OTHER_CAPACITY},"
    positions, sizes, first = [], [], None
    for t in range(ADDS):
        obs, action, reward, next_obs, _, _ = transition(t, OTHER_OBS_DIM, OTHER_ACTION_DIM)
        flag = t == BOTH
        what = f"add(memory of capacity {OTHER_CAPACITY}, transition {t})"
        _, raised = run_safely(add, memory, obs, action, reward, next_obs, flag, flag, what=what)
        if raised:
            return [raised]
        positions.append(memory["position"])
        sizes.append(memory["size"])
        first = _which(memory, 0) if t == 0 else first
    if first != 0:
        return [
            f"{where} transition 0 was not stored at slot 0, though memory['position'] was 0: read the slot from"
            " memory['position'] and keep it there (memory['position'] = ...), not in a variable outside the"
            " memory, such as a global, which every memory shares and which keeps its value when the check runs"
            " again"
        ]
    problems = []
    for name, got, rule in (
        ("position", positions, lambda t, capacity: (t + 1) % capacity),
        ("size", sizes, lambda t, capacity: min(t + 1, capacity)),
    ):
        right, at_3 = ([rule(t, capacity) for t in range(ADDS)] for capacity in (OTHER_CAPACITY, CAPACITY))
        if got == at_3:
            problems.append(
                f"{where} memory['{name}'] went {got} after each add, expected {right}: it"
                f" {'wrapped' if name == 'position' else 'stopped'} at 3, the first memory's capacity. Read the"
                " capacity from memory['capacity']"
            )
        elif got != right:
            problems.append(f"{where} memory['{name}'] went {got} after each add, expected {right}")
    if problems:
        return problems
    slots = tuple(_which(memory, slot) for slot in range(OTHER_CAPACITY))
    wrong = _wrong_fields(memory, slots, OTHER_OBS_DIM, OTHER_ACTION_DIM)
    if wrong:
        sizes = f" with obs_dim {OTHER_OBS_DIM} and action_dim {OTHER_ACTION_DIM},"
        return [f"{where}{sizes} {_field_problem(name, *found, wrong)}" for name, found in wrong.items()]
    slot = BOTH % OTHER_CAPACITY
    if slots[slot] != BOTH:
        return problems
    stored = _flag(memory["terminated"][slot, 0]), _flag(memory["truncated"][slot, 0])
    if stored == (0, 1):
        return [
            f"{where} transition {BOTH} was both terminated and truncated (a terminal state reached at the very"
            " step of the time limit), but memory['terminated'] holds 0 for it: terminated and not truncated?"
            " A terminal state is worth 0 however the episode was cut, so its target must not bootstrap: store"
            " terminated as it is given, memory['terminated'][i] = float(terminated)"
        ]
    if stored != (1, 1):
        return [
            f"{where} transition {BOTH} was both terminated and truncated, but its slot holds terminated ="
            f" {stored[0]} and truncated = {stored[1]}: store each flag as it is given"
        ]
    last = ADDS + OTHER_CAPACITY - 1  # once more round the ring, onto transition BOTH's slot, with no flag set
    for t in range(ADDS, last + 1):
        obs, action, reward, next_obs, _, _ = transition(t, OTHER_OBS_DIM, OTHER_ACTION_DIM)
        what = f"add(memory of capacity {OTHER_CAPACITY}, transition {t})"
        _, raised = run_safely(add, memory, obs, action, reward, next_obs, False, False, what=what)
        if raised:
            return [raised]
    stale = [name for name in ("terminated", "truncated") if _flag(memory[name][slot, 0]) != 0]
    return [
        f"{where} transition {last} was neither terminated nor truncated, but its slot holds {name} = 1: it"
        f" overwrote transition {BOTH}, which was, and that 1 stayed. A flag written only when it is set (`if {name}:"
        f" memory['{name}'][i] = 1.0`) leaves an overwritten slot's old flag in place: write it at every add, 1.0 or"
        f" 0.0, memory['{name}'][i] = float({name})"
        for name in stale[:1]
    ]


@checker
def check_add(add) -> bool:
    """Add transitions 0 to 4 to a memory of 3 slots with `add`, then to one of 4 slots; say in words what goes
    wrong."""
    run = trace(add)
    problems = [run.raised] if run.raised else []
    for name, shape in run.grown.items():
        now = f"a tensor of shape {shape}" if isinstance(shape, tuple) else shape
        problems.append(
            f"memory['{name}'] became {now}: a ring buffer is allocated once; write into its slot,"
            f" memory['{name}'][i] = ..., never replace the tensor (memory['{name}'] = ...) or torch.cat onto it"
        )
    if run.retyped:
        first, *others = run.retyped.values()
        names = ", ".join(f"memory[{name!r}]" for name in list(run.retyped)[1:])
        also = f" So {'are' if len(others) > 1 else 'is'} {names}." if others else ""
        problems.append(
            f"{first}.{also} A ring buffer is allocated once, float32 as new_memory made it: write into its"
            " slots, memory[name][i] = ..., never replace a tensor (memory[name] = memory[name].double(), or any"
            " other new one)"
        )
    n = len(run.positions)
    counters = _counters_problem(run)
    if counters:
        problems.append(counters)
    elif run.positions != RIGHT_POSITIONS[:n]:
        problems.append(
            match_mistake(run.positions, POSITION_MISTAKES)
            or f"after each add, position was {list(run.positions)}, expected {list(RIGHT_POSITIONS[:n])}"
        )
    if not counters:
        problems.append(_size_problem(add, run.sizes))
    if run.split:  # every field was written, some at the wrong slot: that explains the slots, fields and flags
        problems.append(_split_problem(*run.split))
    else:
        problems.append(_slot_problem(run))
        problems += [
            _field_problem(name, t, stored, right, run.fields) for name, (t, stored, right) in run.fields.items()
        ]
        if run.flags is not None and n == ADDS:
            problems += _flag_problems(run.flags)
    problems = [problem for problem in problems if problem] or _second_memory_problems(add)
    return report(
        list(dict.fromkeys(problems)),  # each problem once
        "your ring buffer stores every field at position, wraps at capacity, overwrites the oldest"
        " transition first and keeps terminated apart from truncated.",
    )
