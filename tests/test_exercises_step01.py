"""The step 1 checker accepts a right ring buffer and names each wrong `add` students write."""

import numpy as np
import torch

from td3_steps.exercises.step01 import check_add


def add_right(memory, obs, action, reward, next_obs, terminated, truncated):
    i = memory["position"]
    memory["obs"][i] = torch.as_tensor(obs)
    memory["action"][i] = torch.as_tensor(action)
    memory["reward"][i] = float(reward)
    memory["next_obs"][i] = torch.as_tensor(next_obs)
    memory["terminated"][i] = float(terminated)
    memory["truncated"][i] = float(truncated)
    memory["position"] = (i + 1) % memory["capacity"]
    memory["size"] = min(memory["size"] + 1, memory["capacity"])


def add_with_if(memory, obs, action, reward, next_obs, terminated, truncated):
    """Right too, written the long way a student may write it."""
    i = memory["position"]
    for name, value in zip(("obs", "action", "next_obs"), (obs, action, next_obs)):
        memory[name][i] = torch.tensor(value, dtype=torch.float32)
    memory["reward"][i, 0] = reward
    memory["terminated"][i, 0] = terminated
    memory["truncated"][i, 0] = truncated
    memory["position"] += 1
    if memory["position"] == memory["capacity"]:
        memory["position"] = 0
    if memory["size"] < memory["capacity"]:
        memory["size"] += 1


def test_accepts_a_right_add(capsys):
    assert check_add(add_right)
    assert check_add(add_with_if)
    assert capsys.readouterr().out.count("Correct!") == 2


def then(change):
    """A wrong add: the right one, then `change(memory, position_before, size_before)`."""

    def add(memory, *transition):
        i, size = memory["position"], memory["size"]
        add_right(memory, *transition)
        change(memory, i, size)

    return add


def with_flags(rule):
    """A wrong add that stores rule(terminated, truncated) -> (terminated, truncated) instead."""

    def add(memory, obs, action, reward, next_obs, terminated, truncated):
        add_right(memory, obs, action, reward, next_obs, *rule(terminated, truncated))

    return add


def add_todo(memory, obs, action, reward, next_obs, terminated, truncated):
    """The notebook's untouched exercise."""
    i = memory["position"]
    memory["obs"][i] = torch.as_tensor(obs)


def add_nothing(memory, obs, action, reward, next_obs, terminated, truncated):
    pass


def add_not_written(memory, obs, action, reward, next_obs, terminated, truncated):
    raise NotImplementedError


def add_local_position(memory, obs, action, reward, next_obs, terminated, truncated):
    i = memory["position"]
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    memory["position"], memory["size"] = i, memory["size"]
    i = (i + 1) % memory["capacity"]  # advances a local variable only


def add_advance_first(memory, obs, action, reward, next_obs, terminated, truncated):
    i = (memory["position"] + 1) % memory["capacity"]
    memory["position"] = i
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    memory["position"] = i


def add_stop_when_full(memory, obs, action, reward, next_obs, terminated, truncated):
    if memory["size"] < memory["capacity"]:
        add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    else:
        memory["position"] = (memory["position"] + 1) % memory["capacity"]


def add_at_size(memory, obs, action, reward, next_obs, terminated, truncated):
    position = memory["position"]
    memory["position"] = min(memory["size"], memory["capacity"] - 1)  # writes at size, not position
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    memory["position"] = (position + 1) % memory["capacity"]


def add_at_size_modulo(memory, obs, action, reward, next_obs, terminated, truncated):
    memory["position"] = memory["size"] % memory["capacity"]  # the slot read from size, 0 forever once full
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)


def add_by_concatenation(memory, obs, action, reward, next_obs, terminated, truncated):
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    memory["reward"] = torch.cat([memory["reward"], torch.tensor([[float(reward)]])])  # grows like a list


def add_rebinding_a_field(memory, obs, action, reward, next_obs, terminated, truncated):
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    memory["obs"] = obs  # replaces the whole tensor by this one observation


def add_swapped_states(memory, obs, action, reward, next_obs, terminated, truncated):
    add_right(memory, next_obs, action, reward, obs, terminated, truncated)


def add_without_action(memory, obs, action, reward, next_obs, terminated, truncated):
    add_right(memory, obs, [0.0], reward, next_obs, terminated, truncated)


def add_tensor_position(memory, obs, action, reward, next_obs, terminated, truncated):
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    memory["position"] = memory["position"] + 0.5


def add_position_as_a_tensor(memory, obs, action, reward, next_obs, terminated, truncated):
    """Works as an index, but the counters must stay ints (ReplayMemory.load_state_dict takes back no other)."""
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    memory["position"] = torch.tensor(int(memory["position"]))


def keeping_position_outside():
    """An add that keeps position in a variable of its own (like a global) and copies it into the memory."""
    kept = {"position": 0}

    def add(memory, obs, action, reward, next_obs, terminated, truncated):
        memory["position"] = kept["position"]
        add_right(memory, obs, action, reward, next_obs, terminated, truncated)
        kept["position"] = memory["position"]

    return add


def add_first_action_number(memory, obs, action, reward, next_obs, terminated, truncated):
    """action_dim 1 written in: action[0] fills every action dimension."""
    add_right(memory, obs, [action[0]] * memory["action"].shape[1], reward, next_obs, terminated, truncated)


def add_two_numbers_of_obs(memory, obs, action, reward, next_obs, terminated, truncated):
    """obs_dim 2 written in: obs and next_obs stored two numbers at a time."""
    i = memory["position"]
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    for name, value in (("obs", obs), ("next_obs", next_obs)):
        memory[name][i] = 0.0
        memory[name][i, 0], memory[name][i, 1] = value[0], value[1]


def add_whole_reward(memory, obs, action, reward, next_obs, terminated, truncated):
    add_right(memory, obs, action, int(reward), next_obs, terminated, truncated)


def add_next_obs_from_the_next_call(memory, obs, action, reward, next_obs, terminated, truncated):
    """Takes the previous transition's next_obs from this obs, as if every transition followed the one before."""
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    if memory["size"] > 1:
        memory["next_obs"][(memory["position"] - 2) % memory["capacity"]] = torch.as_tensor(obs)


WRONG = {
    add_todo: "position never moves",
    add_nothing: "after one add the memory is still empty",
    add_not_written: "is not written yet",
    add_local_position: "changing a local variable such as i is not enough",
    then(lambda memory, i, size: memory.update(position=i + 1)): "position ran past the last slot",
    then(
        lambda memory, i, size: memory.update(position=(i + 1) % (memory["capacity"] - 1))
    ): "last slot is never written",
    then(
        lambda memory, i, size: memory.update(position=memory["size"] % memory["capacity"])
    ): "stops at 0 once the memory is full",
    then(lambda memory, i, size: memory.update(size=size + 1)): "can never exceed the capacity",
    then(lambda memory, i, size: memory.update(size=size)): "size never counts",
    then(lambda memory, i, size: memory.update(size=memory["position"])): "size went back to 0",
    then(
        lambda memory, i, size: memory.update(size=min(size + 1, memory["capacity"] - 1))
    ): "one short of the capacity",
    add_advance_first: "the first transition went to slot 1",
    add_stop_when_full: "stopped storing once it was full",
    add_at_size: "overwrote the newest",
    add_at_size_modulo: "every add wrote slot 0: memory['size'] stays at the capacity then",
    add_by_concatenation: "memory['reward'] became a tensor of shape (4, 1)",
    add_rebinding_a_field: "memory['obs'] became a list",
    add_swapped_states: "obs and next_obs are swapped",
    add_without_action: "memory['action'] was not written",
    add_tensor_position: "it must stay a Python int",
    add_position_as_a_tensor: "is tensor(1), of type Tensor: it must stay a Python int",
    then(
        lambda memory, i, size: memory.update(position=np.mod(i + 1, memory["capacity"]))
    ): f"is {np.int64(1)!r}, of type int64: it must stay a Python int (a slot number, a count), as new_memory made it."
    " Compute it with Python's % and min, or convert it with int(...)",
    keeping_position_outside(): "not in a variable outside the memory, such as a global",
    then(
        lambda memory, i, size: memory.update(position=(i + 1) % 3, size=min(size + 1, 3))
    ): "went [1, 2, 0, 1, 2] after each add, expected [1, 2, 3, 0, 1]: it wrapped at 3",
    with_flags(lambda term, trunc: (term and not trunc, trunc)): "terminated and not truncated?",
    with_flags(lambda term, trunc: (term or trunc, trunc)): "done = terminated or truncated",
    with_flags(lambda term, trunc: (term or trunc, False)): "done = terminated or truncated",
    with_flags(lambda term, trunc: (trunc, term)): "terminated and truncated are swapped",
    with_flags(lambda term, trunc: (not term, trunc)): "(a 'not done' mask)",
    with_flags(lambda term, trunc: (False, trunc)): "memory['terminated'] stayed 0",
    with_flags(lambda term, trunc: (term, False)): "memory['truncated'] stayed 0",
    with_flags(lambda term, trunc: (term, term)): "store truncated as it is given",
    add_first_action_number: "with obs_dim 4 and action_dim 2, transition 4's action is [24.0, -24.0], but its"
    " slot holds [24.0, 24.0], action[0] in every number",
    add_two_numbers_of_obs: "only its first 2 of 4 numbers were stored",
    add_whole_reward: "the reward was rounded to a whole number",
    add_next_obs_from_the_next_call: "holds [2.0, 12.0], the obs of transition 2: transition 1 ended its episode",
}


def test_names_each_wrong_add(assert_rejected):
    assert_rejected(check_add, WRONG)


def test_a_wrap_bug_says_how_to_wrap(capsys):
    assert not check_add(then(lambda memory, i, size: memory.update(position=i + 1)))
    out = capsys.readouterr().out
    assert "raised IndexError" in out and "(i + 1) % memory['capacity']" in out


def add_advancing_midway(memory, obs, action, reward, next_obs, terminated, truncated):
    """Advances position after obs and action, so the other fields land one slot further."""
    i = memory["position"]
    memory["obs"][i] = torch.as_tensor(obs)
    memory["action"][i] = torch.as_tensor(action)
    memory["position"] = (i + 1) % memory["capacity"]
    j = memory["position"]
    memory["reward"][j] = float(reward)
    memory["next_obs"][j] = torch.as_tensor(next_obs)
    memory["terminated"][j] = float(terminated)
    memory["truncated"][j] = float(truncated)
    memory["size"] = min(memory["size"] + 1, memory["capacity"])


def test_fields_written_after_position_moved_are_told_the_wrong_slot(capsys):
    """They were written, one slot too far: the reply said "not written"."""
    assert not check_add(add_advancing_midway)
    out = capsys.readouterr().out
    assert "reward and next_obs were written at the wrong slot: at slot 1, not at slot 0" in out, out
    assert "not written" not in out, out


def test_a_size_read_from_position_is_told_so(capsys):
    """max(size, position) stops one short of the capacity like min(size + 1, capacity - 1), for another reason:
    the reply said "not capacity - 1"."""
    assert not check_add(then(lambda memory, i, size: memory.update(size=max(size, memory["position"]))))
    out = capsys.readouterr().out
    assert "size must not be read from position" in out and "capacity - 1" not in out, out


def test_a_position_kept_outside_the_memory_is_told_so_on_every_run(capsys):
    """A global position was right on the first run of the check cell (one memory, starting at 0), and refused
    on the second with a bare IndexError."""
    add = keeping_position_outside()
    assert not check_add(add)
    assert "such as a global" in capsys.readouterr().out
    assert not check_add(add)
    out = capsys.readouterr().out
    assert "out of bounds" in out and "a global that kept its value from an earlier run" in out, out


def add_next_obs_given_obs(memory, obs, action, reward, next_obs, terminated, truncated):
    """A copy-paste slip: the next_obs line stores obs; obs itself is stored right."""
    add_right(memory, obs, action, reward, obs, terminated, truncated)


def test_next_obs_holding_obs_is_not_called_a_swap(capsys):
    """The reply said "obs and next_obs are swapped", though memory['obs'] held obs."""
    assert not check_add(add_next_obs_given_obs)
    out = capsys.readouterr().out
    assert "memory['next_obs'][i] was given obs (a copy-paste slip?)" in out and "swapped" not in out, out
    assert not check_add(add_swapped_states)
    assert "obs and next_obs are swapped" in capsys.readouterr().out


def add_to_a_copy(memory, obs, action, reward, next_obs, terminated, truncated):
    memory = dict(memory)
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)


def add_to_a_copy_returned(memory, obs, action, reward, next_obs, terminated, truncated):
    memory = dict(memory)
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    return memory


def test_an_add_on_a_copy_of_the_memory_is_told_so(capsys):
    """The reply said "position never moves ... changing a local variable such as i is not enough", and "size never
    counts": add set both, in a copy of the dict."""
    assert not check_add(add_to_a_copy)
    out = capsys.readouterr().out
    assert "position and size never changed in the memory given to add" in out, out
    assert "or into a copy of the memory (memory = dict(memory)" in out and "size never counts" not in out, out
    assert not check_add(add_to_a_copy_returned)
    out = capsys.readouterr().out
    assert "add worked on a copy of the memory, and returned it" in out and "position never moves" not in out, out


def add_flags_when_set(memory, obs, action, reward, next_obs, terminated, truncated):
    """Writes a flag only where it is 1: an overwritten slot keeps the flag of the transition before."""
    i = memory["position"]
    memory["obs"][i] = torch.as_tensor(obs)
    memory["action"][i] = torch.as_tensor(action)
    memory["reward"][i] = float(reward)
    memory["next_obs"][i] = torch.as_tensor(next_obs)
    if terminated:
        memory["terminated"][i] = 1.0
    if truncated:
        memory["truncated"][i] = 1.0
    memory["position"] = (i + 1) % memory["capacity"]
    memory["size"] = min(memory["size"] + 1, memory["capacity"])


def test_a_flag_written_only_when_set_is_told_why_it_is_wrong(capsys):
    """The reply said to store truncated as it is given, but not why: the old flag of an overwritten slot stays."""
    assert not check_add(add_flags_when_set)
    out = capsys.readouterr().out
    assert "transition 4 was not truncated, but its slot holds truncated = 1: it overwrote transition 1" in out, out
    assert "leaves an overwritten slot's old flag in place" in out, out


def test_a_terminated_flag_written_only_when_set_is_caught_when_a_terminated_slot_is_overwritten(capsys):
    """It passed: no check overwrote a terminated transition, so its stale 1, which stops an ordinary
    transition's bootstrap in training, never showed."""

    def add(memory, obs, action, reward, next_obs, terminated, truncated):
        i = memory["position"]
        for name, value in (("obs", obs), ("action", action), ("next_obs", next_obs)):
            memory[name][i] = torch.as_tensor(value)
        memory["reward"][i] = float(reward)
        if terminated:
            memory["terminated"][i] = 1.0
        memory["truncated"][i] = float(truncated)
        memory["position"] = (i + 1) % memory["capacity"]
        memory["size"] = min(memory["size"] + 1, memory["capacity"])

    assert not check_add(add)
    out = capsys.readouterr().out
    assert "transition 8 was neither terminated nor truncated, but its slot holds terminated = 1" in out, out


def add_in_float64(memory, obs, action, reward, next_obs, terminated, truncated):
    """Replaces each tensor by a float64 one of the same shape, then stores into it."""
    for name in ("obs", "action", "reward", "next_obs", "terminated", "truncated"):
        memory[name] = memory[name].double()
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)


def test_a_memory_turned_float64_is_refused(capsys):
    """Same shapes, right values: the checker said Correct, though the notebook's memory is float32."""
    assert not check_add(add_in_float64)
    out = capsys.readouterr().out
    assert "memory['obs'] is torch.float64, expected torch.float32" in out and "So are memory['action']" in out, out
    assert "never replace a tensor" in out, out


def add_next_obs_zeroed_when_terminated(memory, obs, action, reward, next_obs, terminated, truncated):
    """Zeros for s' where the episode terminated: the done-masking of the target, done twice and in the wrong place."""
    add_right(memory, obs, action, reward, next_obs, terminated, truncated)
    if terminated:
        memory["next_obs"][(memory["position"] - 1) % memory["capacity"]] = 0.0


def test_a_next_obs_zeroed_when_terminated_is_told_to_store_it_as_given(capsys):
    assert not check_add(add_next_obs_zeroed_when_terminated)
    out = capsys.readouterr().out
    assert "a terminated one, holds zeros: store s' as it is given, whatever the flags" in out, out
    assert "was not written" not in out


def test_a_nan_or_an_infinity_stored_is_named_not_raised(capsys):
    """A NaN reward made the checker itself raise "ValueError: cannot convert float NaN to integer" while it looked
    for the transition a slot holds (an infinity an OverflowError), and a NaN flag the same while it read the flags."""
    for value in (float("nan"), float("inf")):

        def add_reward(memory, obs, action, reward, next_obs, terminated, truncated, value=value):
            add_right(memory, obs, action, value, next_obs, terminated, truncated)

        assert not check_add(add_reward)
        assert f"transition 0's reward is [30.5], but its slot holds [{value}]" in capsys.readouterr().out

    def add_nan_flag(memory, obs, action, reward, next_obs, terminated, truncated):
        add_right(memory, obs, action, reward, next_obs, terminated, truncated)
        memory["truncated"][(memory["position"] - 1) % memory["capacity"]] = float("nan")

    assert not check_add(add_nan_flag)
    assert "memory['truncated'] holds [nan, nan, nan, nan, nan]" in capsys.readouterr().out
