"""td3_steps.files: atomic writes, and paths that cannot be written refused before anything is written."""

import errno
import os
import subprocess
from pathlib import Path

import imageio_ffmpeg
import numpy as np
import pytest
from PIL import Image

import td3_steps.files
import td3_steps.render
from td3_steps import TD3, EvalCallback, Policy, make_env
from td3_steps.files import make_parents, write_atomically, write_text_atomically
from td3_steps.render import check_video_path, record_episode, write_video


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path):
    file = tmp_path / "run.json"
    write_text_atomically(file, "old")

    def half_then_fail(f):
        f.write(b"ne")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_atomically(file, half_then_fail)
    assert file.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_failed_write_names_the_file_asked_for_not_its_temporary_one(tmp_path, monkeypatch):
    def refused(file, write):
        raise PermissionError(13, "Permission denied", str(file))

    monkeypatch.setattr(td3_steps.files, "write_synced", refused)
    with pytest.raises(PermissionError, match=r"Cannot write .*run.json: Permission denied$"):
        write_text_atomically(tmp_path / "run.json", "new")


def test_a_failed_clean_up_hides_nothing_and_a_blocked_temporary_file_is_named(tmp_path, monkeypatch):
    (tmp_path / "run.json.tmp").mkdir()  # left by someone: the temporary file cannot be made
    with pytest.raises(IsADirectoryError, match=r"Cannot write .*run.json: Is a directory \(at .*run.json.tmp"):
        write_text_atomically(tmp_path / "run.json", "new")

    def no_space(file, write):
        raise OSError(28, "No space left on device", str(file))

    def read_only(self, missing_ok=False):  # as unlink on a read-only disk does, even for a missing file
        raise OSError(30, "Read-only file system", str(self))

    monkeypatch.setattr(td3_steps.files, "write_synced", no_space)
    monkeypatch.setattr(Path, "unlink", read_only)
    with pytest.raises(OSError, match=r"Cannot write .*metrics.csv: No space left on device$"):
        write_text_atomically(tmp_path / "metrics.csv", "new")


def test_a_device_or_pipe_is_refused_not_replaced_by_a_file(tmp_path):
    path = tmp_path / "fifo"  # as /dev/null would be, which a test must not risk
    os.mkfifo(path)
    kind = path.stat().st_mode
    with pytest.raises(ValueError, match="a device, a pipe or a socket"):
        write_text_atomically(path, "x")
    assert path.stat().st_mode == kind and not path.with_name(path.name + ".tmp").exists()


def test_a_directory_that_takes_no_new_files_is_named_before_a_checkpoint_is_begun(tmp_path, monkeypatch):
    """EvalCallback's best_model_path failed at the first improvement, hours in, naming <path>.tmp."""

    def refused(**kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(td3_steps.files.tempfile, "TemporaryFile", refused)
    with pytest.raises(PermissionError, match=r"Cannot write .*best: .* does not take new files \(Permission denied\)"):
        EvalCallback(5, 1, best_model_path=tmp_path / "runs" / "best")
    assert not (tmp_path / "runs").exists()


def test_a_save_over_a_checkpoint_is_refused_where_its_folder_takes_no_new_files(tmp_path, read_only, small_config):
    """The checkpoint directory itself was tried, not the folder where a save makes <ck>.tmp and <ck>.old: saving
    again into a read-only folder was a bare PermissionError about <ck>.tmp."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    runs, checkpoint = tmp_path / "runs", tmp_path / "runs" / "ck"
    model.save(checkpoint)
    before = {p.name: p.read_bytes() for p in checkpoint.iterdir()}
    for folder in (runs, checkpoint):  # the folder it is saved in, and then the checkpoint it replaces whole too
        read_only(folder)
        words = rf"^Cannot write {checkpoint}: {folder} does not take new files \(Permission denied\)\. Choose"
        with pytest.raises(PermissionError, match=words):
            model.save(checkpoint)
        assert [p.name for p in runs.iterdir()] == ["ck"]
        assert {p.name: p.read_bytes() for p in checkpoint.iterdir()} == before


def test_a_policy_or_memory_file_in_a_read_only_folder_says_choose_another_path(tmp_path, read_only, small_config):
    """save_policy and save_replay_memory into a read-only folder were a bare "[Errno 30] Read-only file system", where
    TD3.save said what to do."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    read_only(tmp_path)
    for save, name in ((model.save_policy, "policy.pt"), (model.save_replay_memory, "memory.pt")):
        with pytest.raises(PermissionError, match=rf"^Cannot write {tmp_path / name}: {tmp_path} does not take new"
                           r" files \(Permission denied\)\. Choose another path\.$"):  # fmt: skip
            save(tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_cannot_be_made_is_named_with_the_file_to_write(tmp_path, monkeypatch, small_config):
    """save_policy("ro/x/policy.pt") in a read-only folder was mkdir's bare "[Errno 13] Permission denied: 'ro/x'"."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")

    def refused(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refused)
    file = tmp_path / "ro" / "x" / "policy.pt"
    with pytest.raises(PermissionError, match=rf"^Cannot write {file}: the directory {file.parent} cannot be made"
                       r" \(Permission denied\)\. Choose another path\.$"):  # fmt: skip
        model.save_policy(file)
    assert list(tmp_path.iterdir()) == []


def test_a_path_under_a_file_or_onto_a_directory_is_one_clear_error(tmp_path, small_config):
    (tmp_path / "notes.txt").write_text("keep me")
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    for save in (model.save, model.save_policy, model.save_replay_memory):
        with pytest.raises(NotADirectoryError, match=r"notes.txt/x: .*notes.txt is a file, not a directory"):
            save(tmp_path / "notes.txt" / "x")
    for save in (model.save_policy, model.save_replay_memory):
        with pytest.raises(IsADirectoryError, match="it is a directory. Give a file name"):
            save(tmp_path)
    with pytest.raises(NotADirectoryError, match="notes.txt is a file"):
        check_video_path(tmp_path / "notes.txt" / "agent.gif")
    with pytest.raises(IsADirectoryError, match="it is a directory. Give a file name"):
        check_video_path(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("not_a_path", [None, 5, b"runs/x", ["runs"]])
def test_a_value_that_is_no_path_is_named_where_a_path_is_taken(tmp_path, monkeypatch, small_config, not_a_path):
    """Python's "expected str, bytes or os.PathLike object, not NoneType" named neither the argument nor the fix;
    tensorboard_log=5 made a directory named "5"."""
    monkeypatch.chdir(tmp_path)
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    calls = {
        "The checkpoint directory": [model.save, lambda p: TD3.load(p)],
        "The policy file": [model.save_policy, Policy.load],
        "The replay memory file": [model.save_replay_memory, model.load_replay_memory],
        "The file to write": [lambda p: write_video([np.zeros((8, 8, 3), np.uint8)], p)],
        "tensorboard_log": [],
    }
    if not_a_path is not None:  # None is how these two say "none"
        calls["The checkpoint directory"].append(lambda p: EvalCallback(5, best_model_path=p))
        calls["tensorboard_log"].append(lambda p: TD3("Pendulum-v1", small_config, tensorboard_log=p))
    for what, takes_a_path in calls.items():
        for call in takes_a_path:
            with pytest.raises(TypeError, match=rf"^{what} must be a path, a str or a pathlib.Path; got "):
                call(not_a_path)
    assert list(tmp_path.iterdir()) == []


def test_an_empty_path_is_refused_not_read_as_the_current_directory(tmp_path, monkeypatch, small_config):
    """Path("") is ".": tensorboard_log="" wrote its events into the working directory, and TD3.load("") said
    "No checkpoint at ."."""
    monkeypatch.chdir(tmp_path)
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    for call in (model.save, TD3.load, model.save_policy, Policy.load, model.save_replay_memory,
                 lambda p: TD3("Pendulum-v1", small_config, tensorboard_log=p)):  # fmt: skip
        for empty in ("", " "):
            with pytest.raises(ValueError, match=rf" must be a path; got an empty one, '{empty}'\.$"):
                call(empty)
    assert list(tmp_path.iterdir()) == []


def test_a_gif_is_written_whole(tmp_path, monkeypatch):
    frames = [np.full((8, 12, 3), 40 * k, np.uint8) for k in range(4)]
    write_video(frames, tmp_path / "videos" / "agent.gif", fps=10)
    gif = Image.open(tmp_path / "videos" / "agent.gif")
    assert (gif.n_frames, gif.info["duration"]) == (4, 100)
    before = (tmp_path / "videos" / "agent.gif").read_bytes()

    def fail(self, f, **kwargs):
        f.write(b"GIF89a")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Image.Image, "save", fail)
    with pytest.raises(OSError, match="No space left"):
        write_video(frames, tmp_path / "videos" / "agent.gif")
    assert (tmp_path / "videos" / "agent.gif").read_bytes() == before
    assert [p.name for p in (tmp_path / "videos").iterdir()] == ["agent.gif"]


def test_video_file_names_are_taken_in_any_case(tmp_path, monkeypatch):
    """render --out agent.GIF was refused: "choose a .gif or .mp4 file name"."""
    frames = [np.full((8, 12, 3), 40 * k, np.uint8) for k in range(3)]
    write_video(frames, tmp_path / "agent.GIF", fps=10)
    assert Image.open(tmp_path / "agent.GIF").n_frames == 3
    ffmpeg_on_path(monkeypatch, tmp_path / "bin", Path(imageio_ffmpeg.get_ffmpeg_exe()))
    write_video(frames, tmp_path / "agent.Mp4", fps=10)
    assert (tmp_path / "agent.Mp4").read_bytes()[4:8] == b"ftyp"  # an MP4, not a GIF


def ffmpeg_on_path(monkeypatch, folder: Path, program: Path) -> None:
    folder.mkdir()
    (folder / "ffmpeg").symlink_to(program)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_an_mp4_is_written_whole(tmp_path, monkeypatch):
    frames = [np.full((9, 12, 3), 40 * k, np.uint8) for k in range(4)]  # an odd height: padded to even
    ffmpeg_on_path(monkeypatch, tmp_path / "bin", Path(imageio_ffmpeg.get_ffmpeg_exe()))
    write_video(frames, tmp_path / "agent.mp4", fps=10)
    before = (tmp_path / "agent.mp4").read_bytes()
    assert before[4:8] == b"ftyp" and len(before) > 500  # an MP4's first box
    broken = tmp_path / "broken-ffmpeg"  # writes part of a file, then fails, as on a full disk
    broken.write_text('#!/bin/sh\nfor last; do :; done\nprintf partial > "$last"\nexit 1\n')
    broken.chmod(0o755)
    ffmpeg_on_path(monkeypatch, tmp_path / "bin2", broken)
    with pytest.raises(subprocess.CalledProcessError):
        write_video(frames, tmp_path / "agent.mp4")
    assert (tmp_path / "agent.mp4").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.mp4", "bin", "bin2", "broken-ffmpeg"]


def test_record_episode_takes_an_env_id_or_a_rendering_env_and_says_so(small_config, monkeypatch):
    """Notebook 15 records with these. An env made without render_mode="rgb_array" gave frames of None, which
    write_video then failed on; max_steps=0 and a model without predict gave Python's errors."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    frames, total = record_episode(model, "Pendulum-v1", max_steps=3)
    env = make_env("Pendulum-v1", render_mode="rgb_array")
    again, same_total = record_episode(model, env, max_steps=3)
    assert len(frames) == 4 and frames[0].shape[2] == 3 and total == same_total
    assert all(np.array_equal(a, b) for a, b in zip(frames, again))
    other, _ = record_episode(model, "Pendulum-v1", max_steps=1, seed=5)  # notebook 15 records its worst episode's
    assert not np.array_equal(other[0], frames[0])
    with pytest.raises(ValueError, match="seed"):
        record_episode(model, "Pendulum-v1", seed=-1)
    closed = []
    env.close = lambda: closed.append(env)  # a Bullet env, once closed, has no physics server to record with
    record_episode(model, env, max_steps=3)
    assert closed == []  # an env given stays open, to record again; one made from an id is closed
    monkeypatch.setattr(td3_steps.render, "rendering_env", lambda env_id: env)
    record_episode(model, "Pendulum-v1", max_steps=3)
    assert closed == [env]
    with pytest.raises(ValueError, match=r"needs an env that renders frames: pass its id, or make it with"):
        record_episode(model, make_env("Pendulum-v1"))
    with pytest.raises(ValueError, match=r"max_steps must be a whole number >= 1, got 0\."):
        record_episode(model, "Pendulum-v1", max_steps=0)
    with pytest.raises(TypeError, match=r"records a model with predict\(obs\), a TD3 or a Policy; got None\."):
        record_episode(None, "Pendulum-v1")


@pytest.mark.parametrize(
    ("frames", "fps", "words"),
    [([], 10, r"got \[\]\."), ([np.zeros((8, 8, 3))], 10, r"got 1 frames, the first of shape \(8, 8, 3\) and dtype float64"),
     ([np.zeros((8, 8), np.uint8)], 10, r"the first of shape \(8, 8\)"),
     ([np.zeros((0, 0, 3), np.uint8)], 10, r"H and W at least 1.*the first of shape \(0, 0, 3\)"),
     ([np.zeros((8, 8, 3), np.uint8), np.zeros((9, 8, 3), np.uint8)], 10, r"got 2 frames"),
     ("frames", 10, r"got 'frames'"), ([np.zeros((8, 8, 3), np.uint8)], 0, r"fps must be a number from 0.01 to 1000"), ([np.zeros((8, 8, 3), np.uint8)], 1e-4, r"fps must be a number from 0.01"),
     ([np.zeros((8, 8, 3), np.uint8)], None, r"fps must be a number from 0.01 to 1000"),
     ([np.zeros((8, 8, 3), np.uint8)], 60, r"a GIF shows at most 50 frames a second .* give 50 or fewer, or write an .mp4")],
)  # fmt: skip
def test_write_video_refuses_frames_it_cannot_write_before_writing_anything(tmp_path, frames, fps, words):
    """An empty list was an IndexError and fps=0 a ZeroDivisionError, both after the folder was made; 2-D float
    frames were written without a word, and (H, W, 3) float ones failed inside Pillow."""
    with pytest.raises(ValueError, match=words):
        write_video(frames, tmp_path / "videos" / "agent.gif", fps=fps)
    assert list(tmp_path.iterdir()) == []


def test_a_gif_plays_at_the_frames_per_second_asked_for(tmp_path):
    """fps 60 wrote delays of 17 ms, which a GIF stores as 1 hundredth and players show as 10: 10 frames a second."""
    from PIL import Image

    write_video([np.full((8, 8, 3), k, np.uint8) for k in (0, 255)], tmp_path / "agent.gif", fps=50)
    with Image.open(tmp_path / "agent.gif") as gif:
        assert gif.n_frames == 2 and gif.info["duration"] == 20


def test_write_video_replaces_a_video_but_not_another_file_of_that_name(tmp_path):
    """A text file named notes.gif was replaced by the GIF, where every other writer refuses a file not its own."""
    frames = [np.zeros((4, 4, 3), np.uint8), np.full((4, 4, 3), 255, np.uint8)]
    (tmp_path / "notes.gif").write_text("my notes")
    with pytest.raises(FileExistsError, match=r"notes.gif exists and is no GIF video, and writing would replace it"):
        write_video(frames, tmp_path / "notes.gif")
    assert (tmp_path / "notes.gif").read_text() == "my notes"
    write_video(frames, tmp_path / "agent.gif", fps=10)
    write_video(frames[:1], tmp_path / "agent.gif", fps=10)  # a GIF is replaced
    assert Image.open(tmp_path / "agent.gif").n_frames == 1


def test_the_temporary_file_is_flushed_and_synced_before_it_is_renamed(tmp_path, monkeypatch):
    file, events = tmp_path / "run.json", []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        if os.path.isdir(os.readlink(f"/proc/self/fd/{fd}")):  # the folder's entries: the rename, through a power cut
            events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        else:
            events.append(("fsync", os.fstat(fd).st_size))  # what the disk is asked to keep: all of it, not a buffer
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", os.fspath(src), os.fspath(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(td3_steps.files.os, "fsync", fsync)
    monkeypatch.setattr(td3_steps.files.os, "replace", replace)
    write_text_atomically(file, "new contents")
    assert events == [("fsync", len("new contents")), ("replace", f"{file}.tmp", str(file)), ("fsync", str(tmp_path))]
    assert file.read_text() == "new contents"


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    (tmp_path / "links").mkdir()
    target = tmp_path / "real" / "run.json"
    target.write_text("old")
    link = tmp_path / "links" / "run.json"
    link.symlink_to(os.path.join("..", "real", "run.json"))  # relative, as ln -s makes them
    monkeypatch.chdir(tmp_path)  # a relative link is read from its own folder, not the working one
    write_text_atomically(link, "new")
    assert link.is_symlink() and os.readlink(link) == os.path.join("..", "real", "run.json")
    assert target.read_text() == "new"
    assert sorted(p.name for p in (tmp_path / "links").iterdir()) == ["run.json"]
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["run.json"]


def test_a_stale_temporary_file_left_by_a_crash_is_written_over_not_appended_to(tmp_path):
    file = tmp_path / "run.json"
    (tmp_path / "run.json.tmp").write_bytes(b"half of an old write")
    write_text_atomically(file, "new")
    assert file.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_an_interrupt_while_writing_leaves_the_old_file_and_no_temporary_one(tmp_path):
    file = tmp_path / "run.json"
    write_text_atomically(file, "old")

    def interrupted(f):
        f.write(b"ne")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(file, interrupted)
    assert file.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_name_too_long_only_with_its_tmp_suffix_names_the_temporary_file(tmp_path):
    name = "x" * (255 - len(".json") - 2) + ".json"  # 253 characters: fits; with ".tmp", 257 do not
    with pytest.raises(OSError, match=r"File name too long \(at .*\.json\.tmp, which is written first") as raised:
        write_text_atomically(tmp_path / name, "new")
    assert raised.value.errno == errno.ENAMETOOLONG and list(tmp_path.iterdir()) == []


def test_make_parents_makes_every_missing_folder(tmp_path):
    make_parents(tmp_path / "a" / "b" / "c" / "run.json")
    assert (tmp_path / "a" / "b" / "c").is_dir()


class Still:
    def predict(self, obs):
        return np.zeros(1, np.float32), None


@pytest.fixture
def rendering_toy_env(toy_env):
    class Rendering(toy_env):
        render_mode = "rgb_array"

        def render(self):
            return np.full((4, 4, 3), self.t, np.uint8)

    return Rendering


@pytest.mark.parametrize(("terminate_at", "steps"), [(None, 5), (3, 3)])
def test_an_episode_is_recorded_to_its_end_and_no_further(rendering_toy_env, terminate_at, steps):
    """ToyEnv truncates at step 5, or terminates at `terminate_at`: the frames are the reset's and each step's."""
    frames, total = record_episode(Still(), rendering_toy_env(terminate_at=terminate_at), max_steps=50)
    assert [int(frame[0, 0, 0]) for frame in frames] == list(range(steps + 1))
    assert total == pytest.approx(-0.5 * steps)


def test_a_gif_loops_forever(tmp_path):
    write_video([np.full((4, 4, 3), k, np.uint8) for k in (0, 255)], tmp_path / "agent.gif", fps=10)
    with Image.open(tmp_path / "agent.gif") as gif:
        assert gif.info.get("loop") == 0  # the NETSCAPE extension's 0: repeat forever (absent: play once)


def test_an_mp4_has_the_frames_rate_size_and_pixel_format_asked_for(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "ffmpeg").symlink_to(Path(imageio_ffmpeg.get_ffmpeg_exe()))
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    frames = [np.full((9, 12, 3), 40 * k, np.uint8) for k in range(4)]  # 9 high: padded to 10
    write_video(frames, tmp_path / "agent.mp4", fps=10)
    reader = imageio_ffmpeg.read_frames(str(tmp_path / "agent.mp4"))
    meta = next(reader)
    assert meta["fps"] == 10.0 and meta["size"] == (12, 10) and meta["pix_fmt"].startswith("yuv420p")
    assert sum(1 for _ in reader) == 4


def test_an_empty_file_of_the_videos_name_is_written_over(tmp_path):
    """An empty file holds nothing to lose (a `touch agent.gif`, or a write cut short before its first byte)."""
    (tmp_path / "agent.gif").touch()
    write_video([np.zeros((4, 4, 3), np.uint8)], tmp_path / "agent.gif", fps=10)
    assert (tmp_path / "agent.gif").read_bytes().startswith(b"GIF8")


def test_an_mp4_without_ffmpeg_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ValueError, match=r"Writing an MP4 needs ffmpeg on PATH"):
        write_video([np.zeros((4, 4, 3), np.uint8)], tmp_path / "videos" / "agent.mp4", fps=10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


def test_check_writable_looks_where_a_symbolic_link_points(tmp_path, monkeypatch):
    """The folder holding the link was checked, and write_atomically then made its .tmp where the link points: a
    folder there that takes no new files passed the early check and failed hours later, at the save."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "run.json").write_text("{}")
    (tmp_path / "run.json").symlink_to(tmp_path / "elsewhere" / "run.json")
    checked = []
    monkeypatch.setattr(td3_steps.files, "_check_takes_files", lambda path, directory: checked.append(directory))
    td3_steps.files.check_writable(tmp_path / "run.json")
    assert checked == [tmp_path / "elsewhere"]
