"""Recording an agent: one deterministic episode as RGB frames, written to a GIF or an MP4."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

from .checkpoint import containing_checkpoint
from .counts import is_count, is_number
from .envs import make_env
from .files import check_file_path, check_writable, make_parents, write_atomically
from .seeding import check_seed


def record_episode(model, env, max_steps: int = 400, seed: int = 0) -> tuple[list[np.ndarray], float]:
    """Frames of one deterministic episode of `model` in `env`, and its return; `env` is an env id, or an env made
    with render_mode='rgb_array' (make_env(env_id, render_mode="rgb_array")). An env made from an id is closed at
    the end; an env given stays open, to record again or close."""
    if not callable(getattr(model, "predict", None)):
        raise TypeError(f"record_episode records a model with predict(obs), a TD3 or a Policy; got {model!r:.80}.")
    if not is_count(max_steps, 1):
        raise ValueError(f"record_episode: max_steps must be a whole number >= 1, got {max_steps!r}.")
    seed = check_seed(seed)
    if isinstance(env, str):
        env = rendering_env(env)
        try:
            return record_episode(model, env, max_steps, seed)
        finally:
            env.close()
    if getattr(env, "render_mode", None) != "rgb_array":
        raise ValueError(
            "record_episode needs an env that renders frames: pass its id, or make it with"
            f" make_env(env_id, render_mode='rgb_array'); got {env!r:.80}."
        )
    obs, _ = env.reset(seed=seed)
    frames, total = [env.render()], 0.0
    for _ in range(max_steps):
        action, _ = model.predict(obs)
        obs, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        frames.append(env.render())
        if terminated or truncated:
            break
    return frames, total


def rendering_env(env_id: str):
    """make_env(env_id, render_mode="rgb_array"), or a ValueError that says what to change when the environment's
    __init__ takes no render_mode: gymnasium passes it as a keyword, and the TypeError that followed ("Base() takes
    no arguments") did not say that rendering was what failed."""
    try:
        return make_env(env_id, render_mode="rgb_array")
    except TypeError as error:
        try:  # made without one, the environment shows that the render_mode was what it did not take
            make_env(env_id).close()
        except Exception:
            raise error from None
        raise ValueError(
            f"Cannot render {env_id}: its environment's __init__ takes no render_mode, so it cannot be made to render"
            " frames (render_mode='rgb_array'). Give it one, def __init__(self, render_mode=None), kept as"
            " self.render_mode, and a render() that returns the frame as an RGB array (H, W, 3) of uint8 when"
            " render_mode == 'rgb_array' (see gymnasium.Env.render)."
        ) from error


GIF_MAX_FPS = 50


def check_video_path(path, fps=30) -> Path:
    """A path write_video can write at `fps` frames a second: a .gif (at most GIF_MAX_FPS), or an .mp4 with ffmpeg
    on PATH (either in any case: .GIF), and not a directory."""
    path = check_file_path(path)
    if path.suffix.lower() not in (".gif", ".mp4"):
        raise ValueError(f"Cannot write {path}: choose a .gif or .mp4 file name.")
    if not (is_number(fps) and 0.01 <= fps <= 1000):
        raise ValueError(f"write_video: fps must be a number from 0.01 to 1000 (frames per second), got {fps!r}.")
    if path.suffix.lower() == ".gif" and fps > GIF_MAX_FPS:
        raise ValueError(
            f"write_video: a GIF shows at most {GIF_MAX_FPS} frames a second (its delays are whole hundredths of a"
            f" second, and players show one under 2 as 10), got fps {fps!r}: give {GIF_MAX_FPS} or fewer, or write"
            " an .mp4."
        )
    if path.suffix.lower() == ".mp4" and shutil.which("ffmpeg") is None:
        raise ValueError("Writing an MP4 needs ffmpeg on PATH (e.g. apt-get install ffmpeg); or write a .gif.")
    checkpoint = containing_checkpoint(path.parent)
    if checkpoint is not None:
        raise ValueError(
            f"Cannot write {path}: {checkpoint} is a checkpoint directory, which the next save replaces whole (and"
            f" refuses to while it holds other files). Write it beside it, e.g. {checkpoint.parent / path.name}."
        )
    if path.is_file() and path.stat().st_size and not _is_video(path):  # an empty one holds nothing to lose
        raise FileExistsError(
            f"{path} exists and is no {path.suffix[1:].upper()} video, and writing would replace it: give another name,"
            " or move it away first."
        )
    check_writable(path)  # before the episode is recorded, not after
    return path


def _is_video(path: Path) -> bool:
    """Whether `path` begins as a GIF (GIF87a, GIF89a) or an MP4 (an ftyp box) does: a video to write over."""
    with open(path, "rb") as f:
        head = f.read(12)
    return head.startswith(b"GIF8") or head[4:8] == b"ftyp"


def check_frames(frames) -> None:
    """A ValueError unless `frames` is a non-empty list of RGB images, uint8 arrays (H, W, 3), all of one shape,
    at least 1 x 1."""
    if isinstance(frames, (list, tuple)) and frames:
        first = frames[0]
        shape = getattr(first, "shape", None)
        if all(isinstance(f, np.ndarray) and f.dtype == np.uint8 and f.shape == shape for f in frames) and (
            len(shape) == 3 and shape[2] == 3 and min(shape) > 0
        ):
            return
        got = f"{len(frames)} frames, the first of shape {shape} and dtype {getattr(first, 'dtype', None)}"
    else:
        got = f"{frames!r:.80}"
    raise ValueError(
        "write_video takes a non-empty list of RGB frames, uint8 arrays of one shape (H, W, 3), H and W at least 1,"
        " as env.render()"
        f" gives them in rgb_array mode; got {got}. Floats in [0, 1] convert with (frame * 255).astype(np.uint8)."
    )


def write_video(frames: list[np.ndarray], path, fps: int = 30) -> None:
    """A GIF through Pillow (installed with matplotlib), written atomically, or an MP4 through an ffmpeg on PATH.

    `frames` are RGB images, uint8 arrays of one shape (H, W, 3), as env.render() gives them in rgb_array mode.
    """
    check_frames(frames)
    path = check_video_path(path, fps)
    make_parents(path)
    if path.suffix.lower() == ".gif":
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
        video = np.stack(frames).tobytes()
        # ffmpeg writes the temporary file write_atomically opened (by its name), which is then synced and renamed
        write_atomically(path, lambda f: subprocess.run([*command, f.name], input=video, check=True))
