"""td3_steps.checkpoint: what a checkpoint holds, resume bit for bit, atomic writes, verified loads, clear errors."""

import copy
import dataclasses
import hashlib
import json
import os
import re
import shutil
import threading
import warnings
import zipfile

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

from td3_steps import TD3, CheckpointError, LinearSchedule, Policy, ReplayMemory, TD3Config, checkpoint
from td3_steps.cli import main
from td3_steps.seeding import ACTING, UPDATES, derived_seed


def as_version_1(checkpoint):
    """Turn a checkpoint written now into one of version 1, as td3_steps wrote before checksums.json."""
    (checkpoint / "checksums.json").unlink()
    meta = json.loads((checkpoint / "meta.json").read_text())
    (checkpoint / "meta.json").write_text(json.dumps({**meta, "version": 1}, indent=2))


# ---------------------------------------------------------------- resume
def test_resume_mid_episode_is_bit_identical(tmp_path, small_config, params, same):
    straight = TD3("Pendulum-v1", small_config, seed=1, device="cpu").learn(650)

    first = TD3("Pendulum-v1", small_config, seed=1, device="cpu").learn(330)  # mid-episode (episodes are 200)
    first.save(tmp_path / "ckpt", include_memory=True)
    resumed = TD3.load(tmp_path / "ckpt", device="cpu")
    assert resumed.num_steps == 330 and resumed.critic_updates == first.critic_updates
    resumed.learn(320)

    for name in ("actor", "actor_target", "critics", "critic_targets"):
        assert same(params(getattr(straight, name)), params(getattr(resumed, name))), name
    for name in ("actor_optimizer", "critic_optimizer"):
        a, b = getattr(straight, name).state_dict()["state"], getattr(resumed, name).state_dict()["state"]
        assert all(torch.equal(a[k]["exp_avg_sq"], b[k]["exp_avg_sq"]) for k in a)
    assert torch.equal(straight.memory.obs, resumed.memory.obs)
    assert (straight.episodes, straight.critic_updates) == (resumed.episodes, resumed.critic_updates)


def test_a_variant_loads_as_itself_with_its_own_hyperparameters(tmp_path, small_config):
    """A subclass's hyperparameters live in its config_class, which the checkpoint saves: set in __init__ they came
    back at their defaults without a word, and a TD3Config subclass was refused. TD3.load refuses such a checkpoint,
    naming the class that loads it."""

    @dataclasses.dataclass(frozen=True)
    class TD3BCConfig(TD3Config):
        alpha: float = 2.5

    class TD3BC(TD3):
        config_class = TD3BCConfig

    model = TD3BC("Pendulum-v1", **small_config.to_dict(), alpha=1.0, seed=1, device="cpu")
    model.learn(130).save(tmp_path / "ckpt")
    loaded = TD3BC.load(tmp_path / "ckpt", device="cpu")
    assert type(loaded) is TD3BC and loaded.config == model.config and loaded.config.alpha == 1.0
    with pytest.raises(CheckpointError, match=r"no field 'alpha'.*saved by a variant of TD3 .* load it with that"):
        TD3.load(tmp_path / "ckpt", device="cpu")
    with pytest.raises(TypeError, match=r"config must be a TD3BCConfig, got TD3Config: use TD3BCConfig\(\.\.\.\)"):
        TD3BC("Pendulum-v1", small_config)


def test_stable_baselines3_keywords_of_load_say_what_does_their_work(tmp_path, small_config):
    """TD3.load(path, learning_rate=...) and custom_objects= got Python's bare "unexpected keyword argument"; the
    hyperparameter's reply is a call that works."""
    TD3("Pendulum-v1", small_config, seed=1, device="cpu").learn(130).save(tmp_path / "ckpt")
    for keywords, words in (
        ({"custom_objects": {"learning_rate": 0.0}}, "'custom_objects' (Stable-Baselines3's; here TD3.load(path, con"),
        ({"force_reset": True}, "'force_reset' (Stable-Baselines3's; here load goes on with the episode in progress"),
        ({"devic": "cpu"}, "TD3.load() takes no argument 'devic' (did you mean 'device'?)"),
        ({"learning_rate": 1e-4}, "config=TD3.load(path, memory=False).config.replace(learning_rate=...))"),
    ):
        with pytest.raises(TypeError) as raised:
            TD3.load(tmp_path / "ckpt", device="cpu", **keywords)
        assert words in str(raised.value), raised.value
    path = tmp_path / "ckpt"
    loaded = TD3.load(path, config=TD3.load(path, memory=False).config.replace(learning_rate=1e-4), device="cpu")
    assert loaded.config.learning_rate == 1e-4 and loaded.num_steps == 130
    assert TD3.load(path, device="cpu", force_reset=False).num_steps == 130  # what load does, as learn's reset_num_...


def test_a_variant_with_a_required_field_is_told_to_give_a_config_for_a_plain_checkpoint(tmp_path, small_config):
    """A plain TD3 checkpoint has no value for a variant's field without a default: loading it raised the dataclass's
    bare TypeError; it says to give the config, and with one it loads."""

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Required(TD3Config):
        beta: float

    class Variant(TD3):
        config_class = Required

    TD3("Pendulum-v1", small_config, seed=1, device="cpu").learn(130).save(tmp_path / "ckpt")
    with pytest.raises(CheckpointError, match=r"saved without 'beta' .* Variant\.load\(path, config=Required\(beta="):
        Variant.load(tmp_path / "ckpt", device="cpu")
    loaded = Variant.load(tmp_path / "ckpt", config=Required(**small_config.to_dict(), beta=0.5), device="cpu")
    assert loaded.config.beta == 0.5 and loaded.num_steps == 130
    # beta=... given to load, as Stable-Baselines3 takes it: its reply's config.replace cannot load this checkpoint
    with pytest.raises(
        TypeError, match=r"saved without beta .* Variant\.load\(path, config=Required\(beta=\.\.\., net"
    ):
        Variant.load(tmp_path / "ckpt", device="cpu", beta=0.5)
    with pytest.raises(TypeError, match=r"^Variant\.load\(\) takes no argument 'devic' \(did you mean 'device'\?\)"):
        Variant.load(tmp_path / "ckpt", devic="cpu")  # was named TD3.load()


def test_a_mid_episode_checkpoint_loaded_into_another_env_says_it_may_be_another_env(tmp_path, small_config):
    """The warning blamed the env's determinism alone, where the env given to load was made with other arguments."""
    TD3("Pendulum-v1", small_config, seed=1, device="cpu").learn(130).save(tmp_path / "ckpt")
    with pytest.warns(UserWarning, match=r"did not replay .* or it is not the environment the checkpoint was saved"):
        loaded = TD3.load(tmp_path / "ckpt", gym.make("Pendulum-v1", g=2.0), device="cpu")
    assert loaded.num_steps == 130


def test_resume_is_bit_identical_with_the_stateful_options(tmp_path, small_config, toy_env, params, same):
    config = small_config.replace(
        learning_starts=30, noise_type="ornstein-uhlenbeck", train_freq=(1, "episode"), gradient_steps=-1,
        learning_rate=LinearSchedule(1e-3, 1e-4), exploration_noise=LinearSchedule(0.3, 0.05), random_exploration=0.2,
    )  # fmt: skip
    straight = TD3(toy_env(), config, seed=2, device="cpu").learn(63)
    first = TD3(toy_env(), config, seed=2, device="cpu")
    first.learn(63, callback=lambda m: m.num_steps < 33)  # stopped mid-episode: OU state and steps pending
    first.save(tmp_path / "ckpt", include_memory=True)
    resumed = TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")
    assert resumed._episode_return == first._episode_return  # the episode in progress, as far as it went
    resumed.learn(30)
    assert torch.equal(resumed.noise.x, straight.noise.x)
    for name in ("actor", "critics", "actor_target", "critic_targets"):
        assert same(params(getattr(straight, name)), params(getattr(resumed, name))), name
    assert torch.equal(straight.memory.action, resumed.memory.action)


def test_a_checkpoint_saved_on_another_kind_of_device_loads_and_trains_on(tmp_path, small_config, params, same):
    """A CUDA generator's state (16 bytes: seed and offset) does not fit a CPU generator (tests/test_cuda.py saves
    on a GPU where there is one; here the state a GPU writes is put in by hand). The networks, optimizers, memory
    and counters load as they are; the generators are seeded afresh for the step, derived_seed(seed, stream, step)."""
    model = TD3("Pendulum-v1", small_config, seed=3, device="cpu").learn(250)
    meta, state = checkpoint.agent_state(model)
    cuda_state = torch.tensor([3, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0], dtype=torch.uint8)
    checkpoint.write_checkpoint(tmp_path / "gpu", meta, {**state, "act_rng": cuda_state, "update_rng": cuda_state},
                                model.memory.state_dict())  # fmt: skip
    loaded = TD3.load(tmp_path / "gpu", device="cpu")
    assert loaded.num_steps == 250 and same(params(loaded.critics), params(model.critics))
    for generator, stream in ((loaded.act_rng, ACTING), (loaded.update_rng, UPDATES)):
        assert torch.equal(
            generator.get_state(), torch.Generator().manual_seed(derived_seed(3, stream, 250)).get_state()
        )
    loaded.learn(100)
    assert loaded.num_steps == 350 and not same(params(loaded.critics), params(model.critics))


def test_checkpoints_of_the_course_version_still_load(tmp_path, toy_env, toy_config, params, same):
    model = TD3(toy_env(), toy_config, seed=1, device="cpu").learn(13)  # mid-episode
    model.save(tmp_path / "ckpt", include_memory=True)
    as_version_1(tmp_path / "ckpt")
    meta_file, state_file = tmp_path / "ckpt" / "meta.json", tmp_path / "ckpt" / "state.pt"
    meta = json.loads(meta_file.read_text())  # remove what later versions added
    for name in ("custom_networks", "steps_since_training"):
        del meta[name]
    meta["config"] = {k: v for k, v in meta["config"].items() if k in {
        "learning_rate", "buffer_size", "learning_starts", "batch_size", "tau", "gamma", "train_freq", "gradient_steps",
        "policy_delay", "target_policy_noise", "target_noise_clip", "exploration_noise", "net_arch", "n_critics",
        "mixed_precision"}}  # fmt: skip
    meta_file.write_text(json.dumps(meta))
    state = torch.load(state_file, weights_only=True)
    del state["noise"]
    torch.save(state, state_file)
    resumed = TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")
    assert same(params(resumed.learn(7).actor), params(model.learn(7).actor))


def test_checkpoint_without_memory_still_loads(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(150)
    model.save(tmp_path / "ckpt")
    assert not (tmp_path / "ckpt" / "replay_memory.pt").exists()
    loaded = TD3.load(tmp_path / "ckpt", device="cpu")
    assert len(loaded.memory) == 0
    obs = np.zeros(3, np.float32)
    assert np.array_equal(loaded.predict(obs)[0], model.predict(obs)[0])


def test_saving_over_a_checkpoint_with_a_memory_without_one_says_so(tmp_path, small_config):
    """TD3.load, learn, save to the same path (include_memory=False by default) dropped the memory without a word."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(150)
    model.save(tmp_path / "ckpt", include_memory=True)
    with pytest.warns(UserWarning, match=r"ckpt held a replay memory, which this save \(include_memory=False\) left"):
        TD3.load(tmp_path / "ckpt", device="cpu").save(tmp_path / "ckpt")
    assert not (tmp_path / "ckpt" / "replay_memory.pt").exists()


def test_a_plain_callable_schedule_saves_and_asks_for_the_config_on_load(tmp_path, toy_env, toy_config):
    noise = LinearSchedule(0.3, 0.05)
    config = toy_config.replace(learning_rate=lambda progress: 1e-3 * progress + 1e-5, exploration_noise=noise)
    model = TD3(toy_env(), config, seed=0, device="cpu").learn(12)
    model.save(tmp_path / "ckpt")  # never fails: the work is saved
    with pytest.raises(CheckpointError, match=r"learning_rate was a Python callable.*config=") as caught:
        TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")
    advice = re.search(r"TD3Config\(learning_rate=\.\.\., (.*)\)\)\.$", str(caught.value)).group(1)
    assert advice == (  # the settings as saved, as Python that TD3Config takes
        "buffer_size=5000, learning_starts=10, batch_size=8,"
        " exploration_noise=LinearSchedule(start=0.3, end=0.05, end_fraction=1.0), net_arch=[32, 32]"
    )
    assert eval(f"TD3Config({advice})") == config.replace(learning_rate=1e-3)
    assert TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu", config=config).num_steps == 12
    # a config that forgets the saved networks is told so, and not sent back to TD3.load(path) alone
    with pytest.raises(CheckpointError, match=r"config.net_arch is \[400, 300\] here, \[32, 32\] in the checkpoint"):
        TD3.load(tmp_path / "ckpt", env=toy_env(), config=TD3Config(learning_rate=config.learning_rate))


# ---------------------------------------------------------------- writing and reading
def test_a_stable_baselines3_zip_name_is_told_where_the_checkpoint_is(tmp_path, small_config):
    """Stable-Baselines3's save("x") writes x.zip, and its users load "x.zip": TD3.save("x") writes the directory x,
    and loading x.zip said "No checkpoint at x.zip" alone. An empty directory is told what a checkpoint holds."""
    TD3("Pendulum-v1", small_config, device="cpu").save(tmp_path / "td3_pendulum")
    with pytest.raises(CheckpointError, match=r"td3_pendulum.zip: .* \(TD3.save adds no .zip: .*td3_pendulum\?\)\.$"):
        TD3.load(tmp_path / "td3_pendulum.zip")
    with pytest.raises(
        CheckpointError, match=r"No checkpoint at .*other.zip: give the directory that TD3.save wrote\.$"
    ):
        TD3.load(tmp_path / "other.zip")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match=r"it has no meta.json\): give the directory that TD3.save wrote"):
        TD3.load(tmp_path / "empty")


def test_a_stable_baselines3_model_file_is_named_not_called_damaged(tmp_path, small_config):
    """A zip that torch did not write (Stable-Baselines3's model.save writes data and policy.pth in one) got torch's
    "[enforce fail at inline_container.cc:180] . file in archive is not in a subdirectory: data", and TD3.load of it
    said only that it is a file."""
    model = TD3("Pendulum-v1", small_config, device="cpu")
    with zipfile.ZipFile(tmp_path / "sb3_model.zip", "w") as archive:
        for name in ("data", "policy.pth", "pytorch_variables.pth", "_stable_baselines3_version"):
            archive.writestr(name, "{}")
    for name, held in (("notes", "notes.txt"), ("data_alone", "data"), ("policy_alone", "policy.pth")):
        with zipfile.ZipFile(tmp_path / f"{name}.zip", "w") as archive:  # a model.save writes both: neither is one
            archive.writestr(held, "hi")
    sb3 = r"\(a Stable-Baselines3 model, which its model.save writes: stable_baselines3.TD3.load reads it; td3_steps"
    torch_did_not = "is not a file td3_steps wrote: it is a zip archive that torch.save did not write"
    for load in (Policy.load, model.load_replay_memory):
        with pytest.raises(CheckpointError, match=rf"{torch_did_not} {sb3}"):
            load(tmp_path / "sb3_model.zip")
        for name in ("notes", "data_alone", "policy_alone"):
            with pytest.raises(CheckpointError, match=rf"{torch_did_not}\.$"):
                load(tmp_path / f"{name}.zip")
    with pytest.raises(CheckpointError, match=rf"sb3_model.zip is a file {sb3}.*; a td3_steps checkpoint is the"):
        TD3.load(tmp_path / "sb3_model.zip")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_path_that_is_no_regular_file_is_refused_without_being_opened(tmp_path):
    """The check for a Stable-Baselines3 zip opened any non-directory path: TD3.load of a named pipe waited forever
    for a writer (and an unreadable file raised a bare PermissionError), where it said at once that it is a file."""
    fifo = tmp_path / "ckpt"
    os.mkfifo(fifo)
    said = []

    def load():
        with pytest.raises(CheckpointError, match="ckpt is a file; a td3_steps checkpoint is the directory") as error:
            TD3.load(fifo)
        said.append(str(error.value))

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():  # blocked in open(): a writer's open releases it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail("TD3.load opened the named pipe and waited for a writer")
    assert said


def test_save_replaces_atomically(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.save(tmp_path / "ckpt")
    model.learn(120)
    model.save(tmp_path / "ckpt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]  # no .tmp or .old left behind
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["checksums.json", "meta.json", "state.pt"]
    assert TD3.load(tmp_path / "ckpt", device="cpu").num_steps == 120


def test_a_failed_save_keeps_the_old_checkpoint_and_leaves_nothing_half_written(tmp_path, small_config, monkeypatch):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(10)
    model.save(tmp_path / "ckpt")
    model.learn(10)

    def disk_full(obj, f):
        f.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", disk_full)
    with pytest.raises(OSError, match="No space left"):
        model.save(tmp_path / "ckpt")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]
    assert TD3.load(tmp_path / "ckpt", device="cpu").num_steps == 10


def test_save_never_replaces_a_directory_that_holds_more_than_a_checkpoint(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("a week of work")
    (tmp_path / "ckpt.old").mkdir()  # not left by a save: it holds a file no checkpoint has
    (tmp_path / "ckpt.old" / "plot.png").write_bytes(b"png")
    for path, blocking in [
        (tmp_path / "project", "project"),
        (tmp_path / "ckpt", "ckpt.old"),
        (tmp_path, tmp_path.name),
    ]:
        with pytest.raises(
            CheckpointError, match=rf"{blocking} holds more than a td3_steps checkpoint .*would be lost"
        ):
            model.save(path)
    assert (tmp_path / "project" / "notes.txt").read_text() == "a week of work"
    assert (tmp_path / "ckpt.old" / "plot.png").exists() and not (tmp_path / "ckpt").exists()
    for path in (".", ".."):
        with pytest.raises(CheckpointError, match="give it a name"):
            model.save(path)
    with pytest.raises(ValueError, match="The checkpoint directory must be a path; got an empty one"):
        model.save("")


def test_a_save_through_a_symbolic_link_writes_where_it_points_and_keeps_the_link(tmp_path, small_config):
    """save("latest") where latest -> real replaced the link by a directory, left latest.old a link, and the next
    save failed with "[Errno 20] Not a directory"."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(10)
    (tmp_path / "disk").mkdir()
    (tmp_path / "latest").symlink_to(tmp_path / "disk" / "ckpt")  # dangling until the first save
    (tmp_path / "actor.pt").symlink_to(tmp_path / "disk" / "actor.pt")
    for steps in (10, 20, 30):
        model.save(tmp_path / "latest")
        model.save_policy(tmp_path / "actor.pt")
        assert (tmp_path / "latest").is_symlink() and (tmp_path / "actor.pt").is_symlink()
        assert TD3.load(tmp_path / "disk" / "ckpt", device="cpu").num_steps == steps
        model.learn(10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["actor.pt", "disk", "latest"]
    assert sorted(p.name for p in (tmp_path / "disk").iterdir()) == ["actor.pt", "ckpt"]
    assert Policy.load(tmp_path / "actor.pt").actor is not None


def test_a_read_while_a_training_saves_reads_the_new_checkpoint_not_a_damaged_one(tmp_path, small_config, monkeypatch):
    """evaluate or render on a running run failed now and then: "does not match its sha256 ... damaged", or "No
    checkpoint at", when the training's save replaced the directory between two reads."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(10)
    model.save(tmp_path / "ckpt")
    read, calls = checkpoint._read_files, []

    def racing(path, *args):  # the training's save lands in the middle of the first read
        calls.append(path)
        if len(calls) == 1:
            model.learn(10)
            model.save(tmp_path / "ckpt")
            raise CheckpointError(f"{path}/state.pt does not match its sha256")
        return read(path, *args)

    monkeypatch.setattr(checkpoint, "_read_files", racing)
    assert TD3.load(tmp_path / "ckpt", device="cpu").num_steps == 20 and len(calls) == 2
    calls.clear()
    monkeypatch.setattr(checkpoint, "_read_files", lambda path, *args: calls.append(path) or read(path, *args))
    (tmp_path / "ckpt" / "state.pt").write_bytes(b"damaged")  # damaged for good: said at once, not retried
    with pytest.raises(CheckpointError, match="does not match"):
        TD3.load(tmp_path / "ckpt", device="cpu")
    assert len(calls) == 1


def test_a_crash_between_the_renames_is_recovered(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(10)
    model.save(tmp_path / "ckpt")
    (tmp_path / "ckpt").rename(tmp_path / "ckpt.old")  # as if the process died after the first rename
    assert TD3.load(tmp_path / "ckpt", device="cpu").num_steps == 10
    (tmp_path / "latest").symlink_to(tmp_path / "ckpt")  # a save through the link left ckpt.old, not latest.old
    assert TD3.load(tmp_path / "latest", device="cpu").num_steps == 10


def test_evaluate_and_render_find_the_checkpoint_a_crash_between_the_renames_left(tmp_path, small_config, capsys):
    run = tmp_path / "run"
    TD3("Pendulum-v1", small_config, seed=0, device="cpu").save(run / "checkpoint")
    (run / "checkpoint").rename(run / "checkpoint.old")  # a save's first rename, then a crash:
    (run / "checkpoint.tmp").mkdir()  # the new checkpoint, half written, never renamed
    (run / "checkpoint.tmp" / "meta.json").write_text("{")
    main(["evaluate", str(run), "--episodes", "1"])
    assert capsys.readouterr().out.startswith("Pendulum-v1: ")
    main(["render", str(run), "--max-steps", "5", "--out", str(tmp_path / "agent.gif")])
    assert (tmp_path / "agent.gif").exists()


# ---------------------------------------------------------------- verified on load
def test_an_edited_meta_json_is_refused(tmp_path, toy_env, toy_config):
    """relu -> tanh changes no shape: loaded, the ReLU-trained weights would run through tanh without a word."""
    TD3(toy_env(), toy_config, seed=0, device="cpu").learn(12).save(tmp_path / "ckpt")
    meta_file = tmp_path / "ckpt" / "meta.json"
    meta = meta_file.read_text()
    assert meta.count('"activation": "relu"') == 1
    meta_file.write_text(meta.replace('"activation": "relu"', '"activation": "tanh"'))
    with pytest.raises(CheckpointError, match=r"meta.json does not match its sha256 .* edited by hand.*retrain"):
        TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")


def test_a_flipped_byte_in_a_weight_tensor_is_refused(tmp_path, toy_env, toy_config, flip_a_byte_of):
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(20)
    model.save(tmp_path / "ckpt", include_memory=True)
    state_file, memory_file = tmp_path / "ckpt" / "state.pt", tmp_path / "ckpt" / "replay_memory.pt"
    weight = model.actor.state_dict()["net.hidden.0.weight"]
    flip_a_byte_of(state_file, weight)
    damaged = torch.load(state_file, weights_only=True)["actor"]["net.hidden.0.weight"]
    assert not torch.equal(damaged, weight)  # torch alone reads another policy without a word
    with pytest.raises(CheckpointError, match=r"state.pt does not match its sha256 .*damaged"):
        TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")

    model.save(tmp_path / "ckpt", include_memory=True)
    flip_a_byte_of(memory_file, model.memory.obs[:20])
    with pytest.raises(CheckpointError, match=r"replay_memory.pt does not match its sha256"):
        TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")
    assert TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu", memory=False).num_steps == 20  # not read


def test_an_agent_loaded_without_its_memory_gathers_learning_starts_transitions_before_it_updates(
    tmp_path, toy_env, toy_config, params, same
):
    """Its first batches were one transition drawn batch_size times: the memory held what learn had just added."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(30)
    model.save(tmp_path / "ckpt")  # without the memory, as EvalCallback's best model is saved
    loaded = TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")
    before, updates = params(loaded.critics), loaded.critic_updates
    loaded.learn(toy_config.learning_starts)
    assert loaded.memory.size == toy_config.learning_starts and loaded.critic_updates == updates
    assert same(before, params(loaded.critics))
    loaded.learn(1)
    assert loaded.critic_updates == updates + 1


def without(key):
    return lambda contents: {k: v for k, v in contents.items() if k != key}


HAND_DAMAGE = {  # case: (file, what is done to its contents, the words of the error)
    "meta.json without seed": ("meta.json", without("seed"), "lacks seed"),
    "meta.json without num_steps": ("meta.json", without("num_steps"), "lacks num_steps"),
    "meta.json with no number of steps": ("meta.json", lambda meta: {**meta, "num_steps": None}, "num_steps is None"),
    "state.pt without act_rng": ("state.pt", without("act_rng"), "lacks act_rng"),
    "state.pt holding a list": ("state.pt", lambda state: list(state.values()), "holds a list, not the dict"),
}  # fmt: skip


@pytest.mark.parametrize("case", HAND_DAMAGE)
def test_hand_damaged_files_are_errors_that_name_the_file_and_what_is_wrong(case, tmp_path, toy_env, toy_config):
    name, damage, words = HAND_DAMAGE[case]
    TD3(toy_env(), toy_config, seed=0, device="cpu").learn(12).save(tmp_path / "ckpt")
    as_version_1(tmp_path / "ckpt")  # no checksums to catch the edit first, as in checkpoints written before them
    file = tmp_path / "ckpt" / name
    if name == "meta.json":
        file.write_text(json.dumps(damage(json.loads(file.read_text()))))
    else:
        torch.save(damage(torch.load(file, weights_only=True)), file)
    with pytest.raises(CheckpointError, match=rf"{name} {words}.*retrain"):
        TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")


def test_network_settings_that_do_not_fit_the_saved_tensors_are_named(tmp_path, toy_env, toy_config):
    TD3(toy_env(), toy_config, seed=0, device="cpu").save(tmp_path / "ckpt")

    def box(n):
        return spaces.Box(-1.0, 1.0, (n,), np.float32)

    for config, env, words in [
        (toy_config.replace(net_arch=(16,)), toy_env(),
         r"config.net_arch is \[16\] here, \[32, 32\] in the checkpoint.*keep the network settings as saved"),
        (toy_config.replace(n_critics=3), toy_env(), r"config.n_critics is 3 here, 2 in the checkpoint"),
        (toy_config, toy_env(observation_space=box(3)),
         r"observation size 3 here, 2 in the checkpoint \(its actor's first Linear weight is \(32, 2\)\)"),
        (toy_config, toy_env(action_space=box(2)),
         r"action size 2 here, 1 in the checkpoint \(its actor's action_low is \(1,\)\)"),
    ]:  # fmt: skip
        with pytest.raises(CheckpointError, match=words):
            TD3.load(tmp_path / "ckpt", env=env, device="cpu", config=config)


def test_a_config_with_other_networks_is_refused_and_other_training_settings_load(tmp_path, toy_env, toy_config):
    """An activation passed to load ran the saved weights through tanh instead of ReLU, silently; a noise type
    passed to load raised KeyError: 'x' from restoring the saved noise's state."""
    model = TD3(toy_env(), toy_config.replace(noise_type="normal"), seed=0, device="cpu")
    model.learn(12)
    model.save(tmp_path / "ckpt", include_memory=True)
    for change, words in [
        ({"activation": "tanh"}, r"config.activation is 'tanh' here, 'relu' in the checkpoint"),
        ({"layer_norm": True, "share_features_extractor": True}, r"config.layer_norm is True here, False in the"
         r" checkpoint; config.share_features_extractor is True here, False in the checkpoint\. Its weights fit"),
    ]:  # fmt: skip
        with pytest.raises(CheckpointError, match=words):
            TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu", config=model.config.replace(**change))
    with pytest.raises(CheckpointError, match=r"a replay memory of capacity 5000, and config.buffer_size is 50 here"):
        TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu", config=model.config.replace(buffer_size=50))
    smaller = TD3.load(
        tmp_path / "ckpt", env=toy_env(), device="cpu", memory=False, config=model.config.replace(buffer_size=50)
    )
    assert smaller.memory.capacity == 50 and smaller.memory.size == 0
    changed = model.config.replace(learning_rate=1e-4, batch_size=4, noise_type="ornstein-uhlenbeck")
    loaded = TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu", config=changed)
    assert loaded.config == changed and loaded.num_steps == 12
    assert not loaded.noise.x.any(), "the new noise type starts from its own initial state"
    loaded.learn(20)


def test_a_version_2_checkpoint_without_its_checksums_is_refused(tmp_path, toy_env, toy_config):
    TD3(toy_env(), toy_config, seed=0, device="cpu").save(tmp_path / "ckpt")
    (tmp_path / "ckpt" / "checksums.json").unlink()
    with pytest.raises(CheckpointError, match=r"has no checksums.json, which TD3.save writes last.*retrain"):
        TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")


def test_corrupt_and_foreign_checkpoints_get_clear_errors(tmp_path, small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.save(tmp_path / "ckpt")
    meta = json.loads((tmp_path / "ckpt" / "meta.json").read_text())
    with pytest.raises(CheckpointError, match="No checkpoint"):
        TD3.load(tmp_path / "missing")
    (tmp_path / "ckpt" / "state.pt").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="state.pt does not match its sha256"):
        TD3.load(tmp_path / "ckpt")
    as_version_1(tmp_path / "ckpt")
    with pytest.raises(CheckpointError, match="corrupt"):
        TD3.load(tmp_path / "ckpt")
    (tmp_path / "ckpt" / "meta.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(CheckpointError, match="not a td3_steps checkpoint"):
        TD3.load(tmp_path / "ckpt")
    for version in ("2", [2], 2.0, None):
        (tmp_path / "ckpt" / "meta.json").write_text(json.dumps({**meta, "version": version}))
        with pytest.raises(CheckpointError, match=r"meta.json gives version .*, not a whole number.*retrain"):
            TD3.load(tmp_path / "ckpt")
    (tmp_path / "ckpt" / "meta.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="corrupt"):
        TD3.load(tmp_path / "ckpt")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with pytest.raises(CheckpointError, match="no meta.json"):
        TD3.load(foreign)
    for load in (Policy.load, model.load_replay_memory):  # a directory where a file belongs: say which reads what
        with pytest.raises(CheckpointError, match="is a directory, and a file was expected here: TD3.load reads"):
            load(foreign)


def test_a_version_1_checkpoint_edited_to_another_architecture_is_refused(tmp_path, small_config):
    TD3("Pendulum-v1", small_config, seed=0, device="cpu").save(tmp_path / "ckpt")
    as_version_1(tmp_path / "ckpt")
    meta_file = tmp_path / "ckpt" / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["config"]["net_arch"] = [16]
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"does not fit this agent: net_arch \[16\] here, \[32, 32\] in the"):
        TD3.load(tmp_path / "ckpt", device="cpu")


def test_checkpoints_load_with_weights_only(tmp_path, monkeypatch, small_config):
    calls = []
    original = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: calls.append(k.get("weights_only")) or original(*a, **k))
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(120)
    model.save(tmp_path / "ckpt", include_memory=True)
    TD3.load(tmp_path / "ckpt", device="cpu")
    model.save_policy(tmp_path / "policy.pt")
    Policy.load(tmp_path / "policy.pt")
    assert calls == [True, True, True]


# ---------------------------------------------------------------- parameters and the replay memory alone
def test_get_and_set_parameters(toy_env, toy_config, params, same):
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(20)
    other = TD3(toy_env(), toy_config, seed=1, device="cpu")
    other.set_parameters(model.get_parameters())
    for name in ("actor", "actor_target", "critics", "critic_targets"):
        assert same(params(getattr(model, name)), params(getattr(other, name)))
    assert other.actor_optimizer.state_dict()["state"].keys() == model.actor_optimizer.state_dict()["state"].keys()
    # torch's Optimizer.load_state_dict keeps the tensors it is given: other would then step model's Adam moments
    kept = copy.deepcopy(model.get_parameters())
    other.learn(20)
    for name in ("actor_optimizer", "critic_optimizer"):
        for now, then in zip(getattr(model, name).state_dict()["state"].values(), kept[name]["state"].values()):
            assert all(torch.equal(now[key], then[key]) for key in ("step", "exp_avg", "exp_avg_sq")), name
    with pytest.raises(ValueError, match=r"missing \['critic_optimizer'\], unexpected \['extra'\]"):
        other.set_parameters(
            {**{k: v for k, v in model.get_parameters().items() if k != "critic_optimizer"}, "extra": {}}
        )
    third = TD3(toy_env(), toy_config, seed=2, device="cpu")
    third.set_parameters({"actor": model.actor.state_dict()}, exact_match=False)
    assert same(params(third.actor), params(model.actor)) and not same(params(third.critics), params(model.critics))
    wide = TD3(toy_env(), toy_config.replace(net_arch=(8,)), device="cpu")
    with pytest.raises(ValueError, match="'actor' does not fit"):
        wide.set_parameters({"actor": model.actor.state_dict()}, exact_match=False)
    with pytest.raises(TypeError, match="set_parameters takes a dict of state_dicts by name, .* got list"):
        wide.set_parameters(list(model.get_parameters().values()))
    with pytest.raises(TypeError, match=r"got str: a checkpoint's are TD3\.load\(path\)\.get_parameters\(\)\.$"):
        wide.set_parameters("runs/x/checkpoint")  # Stable-Baselines3 takes a path


def test_set_parameters_refuses_an_actor_of_other_action_bounds(small_config, params, same):
    """The bounds are the actor's buffers: an agent of Pendulum took [-2, 2] from another agent's parameters while its
    env, rescaled to [-1, 1], was given actions outside its space; TD3.load refused the same case."""
    rescaled = TD3(gym.wrappers.RescaleAction(gym.make("Pendulum-v1"), -1.0, 1.0), small_config, seed=0, device="cpu")
    before = params(rescaled.actor)
    other = TD3("Pendulum-v1", small_config, seed=1, device="cpu").get_parameters()
    for name in ("actor", "actor_target"):
        with pytest.raises(ValueError, match=rf"set_parameters: '{name}' comes from an agent of another environment:"
                           r" the actor acts in low \[-2.0\], high \[2.0\]"):  # fmt: skip
            rescaled.set_parameters({name: other[name]}, exact_match=False)
    assert same(params(rescaled.actor), before) and rescaled.actor.action_high.tolist() == [1.0]


def test_a_refused_set_parameters_changes_nothing(toy_env, toy_config, params, same):
    """torch copies the tensors that fit before it refuses the rest; set_parameters must not leave them half-loaded."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(20)
    other = TD3(toy_env(), toy_config, seed=1, device="cpu").learn(20).get_parameters()
    before_params = {
        name: params(getattr(model, name)) for name in ("actor", "actor_target", "critics", "critic_targets")
    }
    before_buffers = {name: [b.clone() for b in getattr(model, name).buffers()] for name in before_params}
    optimizer_state = copy.deepcopy(model.actor_optimizer.state_dict())
    low = model.action_space.low.copy()
    bad_actor = {key: torch.zeros(1) for key in model.actor.state_dict()}  # the bounds fit, the weights do not
    bad_actor.update(action_low=model.actor.action_low.clone(), action_high=model.actor.action_high.clone())
    for parameters in (
        {"actor": bad_actor},
        {
            "actor_target": other["actor_target"],
            "critics": {**other["critics"], "members.1.net.out.bias": torch.zeros(3)},
        },
        {"actor": other["actor"], "actor_optimizer": other["critic_optimizer"]},
        {"actor": other["actor"], "critics": None},  # no state_dict: refused by name, not an AttributeError
    ):
        with pytest.raises(ValueError, match="does not fit"):
            model.set_parameters(parameters, exact_match=False)
        for name in ("actor", "actor_target", "critics", "critic_targets"):
            assert same(params(getattr(model, name)), before_params[name]), name
            assert all(torch.equal(a, b) for a, b in zip(getattr(model, name).buffers(), before_buffers[name])), name
        assert np.array_equal(model.action_space.low, low) and np.array_equal(model.env.action_space.low, low)
        state = model.actor_optimizer.state_dict()["state"]
        assert all(torch.equal(state[i]["exp_avg"], optimizer_state["state"][i]["exp_avg"]) for i in state)
    with pytest.raises(ValueError, match="set_parameters: exact_match must be True or False, got 'no'"):
        model.set_parameters({"actor": other["actor"]}, exact_match="no")  # a string was read as True
    assert same(params(model.actor), before_params["actor"])
    model.set_parameters({"actor": other["actor"]}, exact_match=False)  # a good one still loads
    assert all(torch.equal(value, other["actor"][key]) for key, value in model.actor.state_dict().items())


def test_save_and_load_the_replay_memory(tmp_path, toy_env, toy_config):
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(20)
    model.save_replay_memory(tmp_path / "memory.pt")
    fresh = TD3(toy_env(), toy_config, seed=1, device="cpu")
    fresh.load_replay_memory(tmp_path / "memory.pt")
    assert len(fresh.memory) == 20 and torch.equal(fresh.memory.obs, model.memory.obs)
    with pytest.raises(ValueError, match="does not fit"):
        ReplayMemory(10, 2, 1).load_state_dict(fresh.memory.state_dict())


def test_a_damaged_foreign_or_misfitting_replay_memory_file_is_refused(tmp_path, toy_env, toy_config, flip_a_byte_of):
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(20)
    file = tmp_path / "memory.pt"
    model.save_replay_memory(file)
    fresh = TD3(toy_env(), toy_config, seed=1, device="cpu")
    flip_a_byte_of(file, model.memory.obs[:20])
    with pytest.raises(CheckpointError, match=r"memory.pt does not match the sha256 it holds.*save_replay_memory"):
        fresh.load_replay_memory(file)
    assert len(fresh.memory) == 0

    torch.save({"format": "td3_steps policy", "actor": {}}, tmp_path / "policy.pt")
    with pytest.raises(CheckpointError, match=r"policy.pt is not a replay memory file: write one with"):
        fresh.load_replay_memory(tmp_path / "policy.pt")

    state = model.memory.state_dict()
    torch.save(state, tmp_path / "bare.pt")  # as save_replay_memory wrote it before the file had a format
    fresh.load_replay_memory(tmp_path / "bare.pt")
    assert len(fresh.memory) == 20 and torch.equal(fresh.memory.obs, model.memory.obs)

    wrong = [
        ({**state, "action": state["action"][:, :0]}, r"action is \(20, 0\) torch.float32 saved, \(20, 1\)"),
        ({k: v for k, v in state.items() if k != "reward"}, "it lacks reward"),
        ({**state, "size": 21, "position": 21}, r"obs is \(20, 2\) torch.float32 saved, \(21, 2\) torch.float32 here"),
        ({**state, "position": 5000}, "size 20 and position 5000 do not fit its capacity 5000"),
        ({**state, "size": 20.0}, "not all whole numbers"),
        ({**state, "capacity": 7}, "capacity 7 saved, 5000 here"),
        ([1, 2], "bad.pt is not a replay memory file"),
    ]
    for bad, words in wrong:
        torch.save(bad, tmp_path / "bad.pt")
        with pytest.raises((ValueError, CheckpointError), match=words):
            TD3(toy_env(), toy_config, seed=1, device="cpu").load_replay_memory(tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="does not fit this one: it is a list, not a ReplayMemory.state_dict"):
        fresh.memory.load_state_dict([1, 2])


def test_a_checkpoint_file_that_cannot_be_read_is_named_with_what_to_do(tmp_path, monkeypatch, toy_env, toy_config):
    """An unreadable state.pt, or a directory where checksums.json or state.pt belongs, raised the system's bare
    PermissionError or IsADirectoryError."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu")
    model.save(tmp_path / "ckpt")
    TD3("Pendulum-v1", toy_config, seed=0, device="cpu").save_policy(tmp_path / "policy.pt")
    with monkeypatch.context() as patched:

        def refused(file, *args, **kwargs):
            raise PermissionError(13, "Permission denied", str(file))

        patched.setattr(torch, "load", refused)
        for load in (lambda: TD3.load(tmp_path / "ckpt", env=toy_env()), lambda: Policy.load(tmp_path / "policy.pt")):
            with pytest.raises(CheckpointError, match=r"Cannot read .* \(Permission denied\): make .* readable to you"):
                load()
    (tmp_path / "ckpt" / "checksums.json").unlink()
    (tmp_path / "ckpt" / "checksums.json").mkdir()
    with pytest.raises(
        CheckpointError, match=r"checksums.json is a directory, where a td3_steps checkpoint has a file"
    ):
        TD3.load(tmp_path / "ckpt", env=toy_env())


def test_a_checkpoint_saved_again_in_the_episode_a_resume_began_in_replays_all_of_it(
    tmp_path, toy_env, toy_config, params, same
):
    """load restores the episode's actions too: a second save in the same episode (a resumed run saved again before
    the episode ends) must replay the actions taken before the first save as well as those after it."""
    straight = TD3(toy_env(), toy_config, seed=4, device="cpu").learn(30)
    first = TD3(toy_env(), toy_config, seed=4, device="cpu").learn(12)  # 2 steps into the third episode
    first.save(tmp_path / "first", include_memory=True)
    second = TD3.load(tmp_path / "first", env=toy_env(), device="cpu").learn(1)  # 3 steps in: the same episode
    second.save(tmp_path / "second", include_memory=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "did not replay to the saved state"
        resumed = TD3.load(tmp_path / "second", env=toy_env(), device="cpu")
    assert len(resumed._episode_actions) == 3
    resumed.learn(17)
    for name in ("actor", "critics", "actor_target", "critic_targets"):
        assert same(params(getattr(straight, name)), params(getattr(resumed, name))), name


def test_an_actor_or_memory_file_is_not_saved_over_a_file_torch_did_not_write(tmp_path, small_config):
    """model.save_policy("notes.txt") replaced the notes; TD3.save refused such a path already."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    for save in (model.save_policy, model.save_replay_memory, model.policy.save):
        with pytest.raises(FileExistsError, match="notes.txt exists and is not a file torch wrote"):
            save(notes)
    assert notes.read_text() == "my notes"
    for name in ("policy.pt", "memory.pt"):  # its own files, written again and again
        (tmp_path / name).touch()  # an empty file holds nothing to lose
        for _ in range(2):
            (model.save_policy if name == "policy.pt" else model.save_replay_memory)(tmp_path / name)
    assert isinstance(Policy.load(tmp_path / "policy.pt"), Policy)


def test_a_save_after_a_crash_while_writing_replaces_the_half_written_tmp(tmp_path, toy_env, toy_config):
    """A crash inside a save leaves <name>.tmp half written: the next save must write over it, not fail on it."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(12)
    (tmp_path / "ckpt.tmp").mkdir()
    (tmp_path / "ckpt.tmp" / "meta.json").write_text("{")
    model.save(tmp_path / "ckpt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]
    assert TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu").num_steps == 12


def test_a_save_after_a_crash_that_left_the_old_checkpoint_beside_the_new_one_succeeds(tmp_path, toy_env, toy_config):
    """A crash after the second rename, before <name>.old was removed, leaves both: the next save replaces them."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(12)
    model.save(tmp_path / "ckpt")
    shutil.copytree(tmp_path / "ckpt", tmp_path / "ckpt.old")
    model.learn(5).save(tmp_path / "ckpt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]
    assert TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu").num_steps == 17


def test_an_interrupt_during_a_save_keeps_the_old_checkpoint_and_leaves_nothing_half_written(
    tmp_path, toy_env, toy_config, monkeypatch
):
    """Ctrl-C (KeyboardInterrupt, no Exception) in the middle of a save must clean up as a full disk does."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(10)
    model.save(tmp_path / "ckpt")
    model.learn(5)

    def interrupted(obj, f):
        f.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.save(tmp_path / "ckpt", include_memory=True)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]
    assert TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu").num_steps == 10


def test_each_file_of_a_checkpoint_is_on_the_disk_before_it_is_renamed_into_place(
    tmp_path, toy_env, toy_config, monkeypatch
):
    """The rename is atomic only for files already flushed to the disk (fsync): a power cut after it must not leave
    a checkpoint of empty files under the real name."""
    synced, fsync = [], os.fsync

    def recording(fd):
        synced.append(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        return fsync(fd)

    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(12)
    monkeypatch.setattr(os, "fsync", recording)
    model.save(tmp_path / "ckpt", include_memory=True)
    assert {"meta.json", "state.pt", "replay_memory.pt", "checksums.json"} <= set(synced)
    assert synced[-2:] == ["ckpt.tmp", tmp_path.name]  # the folders' entries: its files, then the rename


def _rewrite_meta(directory, **changes):
    """meta.json with `changes`, and checksums.json to match it, as a td3_steps of another version would write."""
    meta_file = directory / "meta.json"
    meta_file.write_text(json.dumps({**json.loads(meta_file.read_text()), **changes}, indent=2))
    checksums = json.loads((directory / "checksums.json").read_text())
    checksums["meta.json"] = hashlib.sha256(meta_file.read_bytes()).hexdigest()
    (directory / "checksums.json").write_text(json.dumps(checksums))


def test_a_checkpoint_of_a_newer_format_asks_for_an_upgrade(tmp_path, toy_env, toy_config):
    TD3(toy_env(), toy_config, seed=0, device="cpu").learn(12).save(tmp_path / "ckpt")
    _rewrite_meta(tmp_path / "ckpt", version=checkpoint.VERSION + 1)
    with pytest.raises(CheckpointError, match=rf"written by a newer td3_steps \(format {checkpoint.VERSION + 1}\);"
                       " upgrade td3_steps"):  # fmt: skip
        TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")


def test_a_mid_episode_checkpoint_that_does_not_replay_resumes_from_the_saved_observation(tmp_path, small_config):
    """Where the env does not replay to the saved state (another g here), training goes on from the saved
    observation, as the warning says, not from wherever the other env's replay ended."""
    model = TD3("Pendulum-v1", small_config, seed=1, device="cpu").learn(130)
    model.save(tmp_path / "ckpt")
    with pytest.warns(UserWarning, match="did not replay to the saved state"):
        loaded = TD3.load(tmp_path / "ckpt", gym.make("Pendulum-v1", g=2.0), device="cpu")
    assert np.array_equal(loaded._obs, model._obs)


def test_a_larger_buffer_size_than_the_saved_memory_s_is_told_what_to_keep(tmp_path, toy_env, toy_config):
    """The advice (keep buffer_size, or load without the memory) must come for a larger buffer too, not torch's
    bare mismatch wrapped as "does not fit ... or is damaged"."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(12)
    model.save(tmp_path / "ckpt", include_memory=True)
    larger = model.config.replace(buffer_size=model.config.buffer_size + 1000)
    with pytest.raises(CheckpointError, match=rf"capacity {model.config.buffer_size}, and config.buffer_size is"
                       rf" {larger.buffer_size} here: keep buffer_size={model.config.buffer_size}"):  # fmt: skip
        TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu", config=larger)


def test_a_replay_memory_file_of_a_newer_format_asks_for_an_upgrade(tmp_path, toy_env, toy_config):
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(12)
    file = tmp_path / "memory.pt"
    model.save_replay_memory(file)
    data = torch.load(file, weights_only=True)
    data["version"] = 2
    data["sha256"] = checkpoint._memory_digest(data)  # whole and verified, but of a format this td3_steps predates
    torch.save(data, file)
    fresh = TD3(toy_env(), toy_config, seed=1, device="cpu")
    with pytest.raises(CheckpointError, match="memory.pt is a replay memory file of version 2: upgrade td3_steps"):
        fresh.load_replay_memory(file)
    assert len(fresh.memory) == 0


def test_an_actor_or_memory_file_cut_short_by_a_crash_is_written_over(tmp_path, small_config):
    """A torch file cut short (a zip's beginning, the rest missing) is one of ours, left by a crash: saving again
    replaces it, where any other file is refused."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(10)
    model.save_policy(tmp_path / "policy.pt")
    model.save_replay_memory(tmp_path / "memory.pt")
    for name in ("policy.pt", "memory.pt"):
        file = tmp_path / name
        file.write_bytes(file.read_bytes()[:200])
    model.save_policy(tmp_path / "policy.pt")
    model.save_replay_memory(tmp_path / "memory.pt")
    assert isinstance(Policy.load(tmp_path / "policy.pt"), Policy)
    TD3("Pendulum-v1", small_config, seed=1, device="cpu").load_replay_memory(tmp_path / "memory.pt")


def test_a_checkpoint_name_held_by_a_file_is_refused_and_the_file_kept(tmp_path, toy_env, toy_config):
    """save(path) where path, or the <path>.tmp or <path>.old a save puts beside it, is a file of the user's."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu")
    (tmp_path / "ckpt").write_text("my notes")
    with pytest.raises(CheckpointError, match="ckpt: a file of that name exists"):
        model.save(tmp_path / "ckpt")
    for beside in ("other.tmp", "other.old"):
        (tmp_path / beside).write_text("my notes")
        with pytest.raises(CheckpointError, match=rf"{beside} is a file, where a save puts a directory of its own"):
            model.save(tmp_path / "other")
        assert (tmp_path / beside).read_text() == "my notes"
        (tmp_path / beside).unlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"] and (tmp_path / "ckpt").read_text() == "my notes"


@pytest.mark.parametrize("path", ["/", "."])
def test_load_of_a_root_or_the_current_folder_says_it_holds_no_checkpoint(path):
    """TD3.load("/") failed inside pathlib: "PosixPath('/') has an empty name"."""
    with pytest.raises(CheckpointError, match=r"is not a td3_steps checkpoint \(it has no meta.json\)"):
        TD3.load(path)


def test_load_refuses_a_config_that_is_no_config_before_reading(tmp_path):
    """TD3.load(path, config={...}) failed deep in the load: 'dict' object has no attribute 'to_dict'."""
    with pytest.raises(TypeError, match=r"config must be a TD3Config, got dict: use TD3Config"):
        TD3.load(tmp_path / "nothing", config={"net_arch": (8,)})


def test_an_actor_file_and_a_replay_memory_file_are_not_saved_over_each_other_or_into_a_checkpoint(
    tmp_path, small_config
):
    """save_replay_memory onto the name of an actor file replaced the actor (and the other way round), and
    save_policy("RUN/checkpoint/state.pt") the checkpoint's networks: both were "a file torch wrote"."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu").learn(12)
    model.save_policy(tmp_path / "actor.pt")
    model.save_replay_memory(tmp_path / "memory.pt")
    model.save(tmp_path / "ckpt")
    files = {p: p.read_bytes() for p in [tmp_path / "actor.pt", tmp_path / "memory.pt", tmp_path / "ckpt" / "state.pt"]}
    with pytest.raises(FileExistsError, match=r"actor.pt holds a td3_steps policy file, and saving a replay memory"):
        model.save_replay_memory(tmp_path / "actor.pt")
    with pytest.raises(FileExistsError, match=r"memory.pt holds a td3_steps replay memory file, and saving a policy"):
        model.save_policy(tmp_path / "memory.pt")
    for name in ("state.pt", "mine.pt", "sub/mine.pt"):
        with pytest.raises(FileExistsError, match=r"is inside the checkpoint .*ckpt, which holds only what TD3.save"):
            model.save_policy(tmp_path / "ckpt" / name)
    assert all(p.read_bytes() == data for p, data in files.items()) and not (tmp_path / "ckpt" / "mine.pt").exists()
    model.save_policy(tmp_path / "actor.pt")  # a file of its own kind is replaced, as before
    model.save_replay_memory(tmp_path / "memory.pt")
    model.save(tmp_path / "ckpt")


def test_set_parameters_refuses_meta_tensors_by_name_and_keeps_the_agent(small_config, params, same):
    """torch's NotImplementedError ("Cannot copy out of meta tensor; no data!"), from the check of the bounds."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    before = params(model.actor)
    actor = {key: value.to("meta") for key, value in model.get_parameters()["actor"].items()}
    with pytest.raises(ValueError, match=r"set_parameters: actor\['action_low'\] is a tensor on the 'meta' device"):
        model.set_parameters({"actor": actor}, exact_match=False)
    assert same(params(model.actor), before)


def test_set_parameters_refuses_weights_that_are_not_finite_and_keeps_the_agent(small_config, params, same):
    """A NaN weight was loaded: predict gave NaN actions, save_policy wrote them, and evaluate blamed the env."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    before = params(model.actor)
    actor = {key: value.clone() for key, value in model.get_parameters()["actor"].items()}
    actor["net.out.weight"][0, 0] = float("nan")
    with pytest.raises(ValueError, match=r"set_parameters: actor\['net.out.weight'\] holds NaN or inf"):
        model.set_parameters({"actor": actor}, exact_match=False)
    assert same(params(model.actor), before)


def test_a_long_episode_in_progress_is_saved_and_replayed_whole(tmp_path, small_config):
    """The episode's actions are kept in one array that grows as the episode goes on: a checkpoint taken after it grew
    holds every action, in order, and load replays them to the same observation."""
    from gymnasium.envs.classic_control.pendulum import PendulumEnv  # no TimeLimit: its one episode never ends

    model = TD3(PendulumEnv(), small_config.replace(learning_starts=1_000), seed=0, device="cpu").learn(600)
    model.save(tmp_path / "ckpt")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "did not replay to the saved state"
        loaded = TD3.load(tmp_path / "ckpt", env=PendulumEnv(), device="cpu")
    assert len(loaded._episode_actions) == 600
    assert np.array_equal(loaded._episode_actions.array(), model._episode_actions.array())
    assert np.array_equal(loaded._obs, model._obs) and loaded._episode_return == model._episode_return
