"""td3_steps.files: atomic writes, and paths that cannot be written refused before anything is written."""

import os
import subprocess
from pathlib import Path

import imageio_ffmpeg
import numpy as np
import pytest
from PIL import Image

from td3_steps import TD3
from td3_steps.files import write_atomically, write_text_atomically
from td3_steps.render import check_video_path, write_video


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path):
    file = tmp_path / "run.json"
    write_text_atomically(file, "old")

    def half_then_fail(f):
        f.write(b"ne")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_atomically(file, half_then_fail)
    assert file.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["run.json"]


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
