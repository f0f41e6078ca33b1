"""Recording an agent: one deterministic episode as RGB frames, written to a GIF or an MP4."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

from .files import check_file_path, make_parents, write_atomically


def record_episode(model, env, max_steps: int = 400, seed: int = 0) -> tuple[list[np.ndarray], float]:
    """Frames of one deterministic episode of `model` in `env` (made with render_mode='rgb_array')."""
    obs, _ = env.reset(seed=seed)
    frames, total = [env.render()], 0.0
    for _ in range(max_steps):
        action, _ = model.predict(obs)
        obs, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        frames.append(env.render())
        if terminated or truncated:
            break
    env.close()
    return frames, total


def check_video_path(path) -> Path:
    """A path write_video can write: a .gif, or an .mp4 with ffmpeg on PATH, and not a directory."""
    path = check_file_path(path)
    if path.suffix not in (".gif", ".mp4"):
        raise ValueError(f"Cannot write {path}: choose a .gif or .mp4 file name.")
    if path.suffix == ".mp4" and shutil.which("ffmpeg") is None:
        raise ValueError("Writing an MP4 needs ffmpeg on PATH (e.g. apt-get install ffmpeg); or write a .gif.")
    return path


def write_video(frames: list[np.ndarray], path, fps: int = 30) -> None:
    """A GIF through Pillow (installed with matplotlib), written atomically, or an MP4 through an ffmpeg on PATH."""
    path = check_video_path(path)
    make_parents(path)
    if path.suffix == ".gif":
        from PIL import Image

        images = [Image.fromarray(frame) for frame in frames]
        write_atomically(path, lambda f: images[0].save(
            f, format="GIF", save_all=True, append_images=images[1:], duration=round(1000 / fps), loop=0
        ))  # fmt: skip
    else:
        height, width, _ = frames[0].shape
        command = [shutil.which("ffmpeg"), "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s",
                   f"{width}x{height}", "-r", str(fps), "-i", "-", "-pix_fmt", "yuv420p", "-vf",
                   "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-f", "mp4"]  # fmt: skip
        video = np.stack(frames).astype(np.uint8).tobytes()
        # ffmpeg writes the temporary file write_atomically opened (by its name), which is then synced and renamed
        write_atomically(path, lambda f: subprocess.run([*command, f.name], input=video, check=True))
