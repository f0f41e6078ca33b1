"""Steps per second of td3_steps and Stable-Baselines3's TD3 with identical hyperparameters.

    pip install -e ".[bench,bullet]"
    python benchmarks/speed.py                       # Pendulum-v1 and HalfCheetahBulletEnv-v0
    python benchmarks/speed.py --envs Pendulum-v1 --repeats 3 --steps 1000
    python benchmarks/speed.py --bf16 yes            # time bfloat16 autocast even where it is emulated
    python benchmarks/speed.py --threads 1           # both libraries on one torch thread
    python benchmarks/speed.py --device cuda --envs Pendulum-v1   # both libraries on a CUDA GPU

Both libraries train the same setting: 400-300 networks, batch 256, Adam 1e-3, tau 0.005,
gamma 0.98, policy delay 2, target noise 0.2 clipped to 0.5 and exploration noise 0.1 (both
relative to the half-range: Stable-Baselines3 adds them in its [-1, 1] scaled action space),
one gradient step per environment step, --warmup random-action steps before training.

Two figures per environment:

- whole steps, as a user's run spends them: each measurement is a fresh process that calls
  learn(warmup + steps) and times it from the end of the warm-up to the end of learn (acting,
  the env, the replay memory, the updates, the bookkeeping: everything). The libraries take turns,
  --repeats times each; the table reports each one's median.
- updates alone: both agents in one process, after the warm-up, time segments of --updates
  gradient steps (td3_steps' train_step; Stable-Baselines3's train(gradient_steps=1), as its
  learn calls it), taking turns --rounds times; the table reports the median segment.

The libraries take turns so that a slow spell of the machine hits them alike; below the table, the
script prints every measurement and the ratio of the two libraries' measurements in each round. It also
prints the replay memory's size for 1M HalfCheetahBulletEnv-v0 transitions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np
import torch
from common import require_stable_baselines3, run_child

from td3_steps import TD3, ReplayMemory, SpaceError, TD3Config, make_env
from td3_steps.cli import at_least
from td3_steps.devices import has_fast_bfloat16
from td3_steps.envs import check_action_space

HYPERPARAMETERS = dict(
    learning_rate=1e-3,
    buffer_size=200_000,
    batch_size=256,
    tau=0.005,
    gamma=0.98,
    policy_delay=2,
    target_policy_noise=0.2,
    target_noise_clip=0.5,
)
AGENTS = ("Stable-Baselines3", "td3_steps fp32", "td3_steps bf16")


def td3_steps_agent(env_id: str, warmup: int, seed: int, mixed_precision: bool, device: str) -> TD3:
    config = TD3Config(
        **HYPERPARAMETERS, learning_starts=warmup, exploration_noise=0.1, net_arch=(400, 300),
        mixed_precision=mixed_precision,
    )  # fmt: skip
    return TD3(env_id, config, seed=seed, device=device)


def sb3_agent(env_id: str, warmup: int, seed: int, device: str):
    from stable_baselines3 import TD3 as SB3TD3
    from stable_baselines3.common.noise import NormalActionNoise

    env = make_env(env_id)
    n = env.action_space.shape[0]
    return SB3TD3(
        "MlpPolicy", env, learning_starts=warmup, train_freq=1, gradient_steps=1,
        action_noise=NormalActionNoise(np.zeros(n), 0.1 * np.ones(n)), policy_kwargs=dict(net_arch=[400, 300]),
        seed=seed, device=device, verbose=0, **HYPERPARAMETERS,
    )  # fmt: skip


def make_agent(name: str, env_id: str, warmup: int, seed: int, device: str):
    if name == "Stable-Baselines3":
        return sb3_agent(env_id, warmup, seed, device)
    return td3_steps_agent(env_id, warmup, seed, mixed_precision=name == "td3_steps bf16", device=device)


# ---------------------------------------------------------------- whole steps, one fresh process each
def whole_steps_in_this_process(name: str, env_id: str, warmup: int, steps: int, seed: int, device: str) -> float:
    """learn(warmup + steps), timed from the step that ends the warm-up to the end of learn: steps/s.

    A callback notes the time after step `warmup`; each library runs its own callbacks after every step anyway.
    """
    agent = make_agent(name, env_id, warmup, seed, device)
    started: list[float] = []
    if name == "Stable-Baselines3":
        from stable_baselines3.common.callbacks import BaseCallback

        class WarmupEnd(BaseCallback):
            def _on_step(self) -> bool:
                if self.num_timesteps == warmup:
                    started.append(time.perf_counter())
                return True

        agent.learn(warmup + steps, callback=WarmupEnd())
    else:

        def warmup_end(model: TD3) -> None:
            if model.num_steps == warmup:
                started.append(time.perf_counter())

        agent.learn(warmup + steps, callback=warmup_end)
    return steps / (time.perf_counter() - started[0])


def whole_steps(
    names, env_id: str, warmup: int, steps: int, repeats: int, seed: int, device: str
) -> dict[str, list[float]]:
    """The steps/s of each agent in `repeats` fresh processes, the agents taking turns."""
    speeds: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names if r % 2 == 0 else reversed(names):
            command = [sys.executable, __file__, "--child", name, "--envs", env_id, "--warmup", str(warmup),
                       "--steps", str(steps), "--seed", str(seed), "--threads", str(torch.get_num_threads()),
                       "--device", device]  # fmt: skip
            out = run_child(command, f"The measurement of {name} on {env_id}")
            speeds[name].append(json.loads(out.splitlines()[-1])["steps_per_s"])
    return speeds


# ---------------------------------------------------------------- the updates alone, in one process
def updates_alone(
    names, env_id: str, warmup: int, updates: int, rounds: int, seed: int, device: str
) -> dict[str, list[float]]:
    """The updates/s of each agent in `rounds` segments of `updates` gradient steps, taking turns.

    On a GPU each segment ends when the GPU has finished its work (torch.cuda.synchronize), not when the host
    has queued it."""
    finish = torch.cuda.synchronize if device == "cuda" else lambda: None
    segments = {}
    for name in names:
        agent = make_agent(name, env_id, warmup, seed, device)
        agent.learn(warmup + 200)  # the random-action warm-up and the first updates, not timed
        if name == "Stable-Baselines3":  # train(gradient_steps=1) as its learn calls it, once a step
            segments[name] = lambda n, agent=agent: [agent.train(1, agent.batch_size) for _ in range(n)]
        else:
            segments[name] = lambda n, agent=agent: [agent.train_step() for _ in range(n)]
    speeds: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            finish()
            start = time.perf_counter()
            segments[name](updates)
            finish()
            speeds[name].append(updates / (time.perf_counter() - start))
    return speeds


def row(env_id: str, measure: str, unit: str, samples: dict[str, list[float]], untimed: str) -> str:
    """A table row of each agent's median and its ratio to Stable-Baselines3's."""
    speeds = {name: statistics.median(values) for name, values in samples.items()}
    base = speeds["Stable-Baselines3"]
    cells = [f"{base:.0f} {unit}"] + [
        f"{speeds[name]:.0f} {unit} ({speeds[name] / base:.2f}x)" if name in speeds else untimed for name in AGENTS[1:]
    ]
    return f"| {env_id} | {measure} | {' | '.join(cells)} |"


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        return platform.processor() or platform.machine()
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "")
    flags = [flag for flag in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f" {flag}" in info]
    return f"{name or platform.machine()} ({', '.join(flags) or 'no AVX2'}), {os.cpu_count()} cores"


def env_problem(env_id: str) -> str | None:
    """Why both libraries cannot train in `env_id` (it cannot be made, or its actions are not a bounded Box), or
    None."""
    try:
        env = make_env(env_id)
    except (ValueError, ImportError) as error:
        return " ".join(str(error).split())
    try:
        check_action_space(env.action_space)
    except SpaceError as error:
        return f"{env_id}: {' '.join(str(error).split())}"
    finally:
        env.close()
    return None


def main(argv: list[str] | None = None) -> None:
    # Stable-Baselines3's learn() makes a log folder, by default a new one in /tmp for every agent: one for all
    os.environ.setdefault("SB3_LOGDIR", os.path.join(tempfile.gettempdir(), "td3_steps-speed-sb3-log"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", default=["Pendulum-v1", "HalfCheetahBulletEnv-v0"])
    positive = at_least(1)
    parser.add_argument("--warmup", type=positive, default=1_000, help="random-action steps before training")
    parser.add_argument(
        "--steps", type=positive, default=3_000, help="whole steps timed after the warm-up, per process"
    )
    parser.add_argument("--repeats", type=positive, default=3, help="processes per agent for the whole steps")
    parser.add_argument("--updates", type=positive, default=500, help="gradient steps per timed segment")
    parser.add_argument("--rounds", type=positive, default=3, help="timed segments of updates per agent")
    parser.add_argument("--seed", type=at_least(0), default=0)
    parser.add_argument(
        "--threads", type=at_least(0), default=0, help="torch threads for both libraries (0: torch's default)"
    )
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="where both libraries compute")
    parser.add_argument(
        "--bf16",
        choices=["auto", "yes", "no"],
        default="auto",
        help="time mixed_precision=True too (auto: only where bfloat16 is native, not emulated)",
    )
    parser.add_argument("--child", choices=AGENTS, help=argparse.SUPPRESS)  # one whole-steps measurement
    args = parser.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    if args.child is not None:
        speed = whole_steps_in_this_process(args.child, args.envs[0], args.warmup, args.steps, args.seed, args.device)
        print(json.dumps({"steps_per_s": speed}))
        return
    # before the first measurement: what would fail in it, or after all of them
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error(
            "--device cuda: no CUDA GPU is available here (torch.cuda.is_available() is False); use --device cpu"
        )
    for env_id in args.envs:
        problem = env_problem(env_id)
        if problem is not None:
            parser.error(f"--envs: {problem}")
    require_stable_baselines3(parser)
    bf16 = args.bf16 == "yes" or (args.bf16 == "auto" and has_fast_bfloat16(torch.device(args.device)))
    names = list(AGENTS if bf16 else AGENTS[:2])
    untimed = "not timed (--bf16 no)" if args.bf16 == "no" else "not timed (emulated)"

    import stable_baselines3

    gpu = f"{torch.cuda.get_device_name()}, " if args.device == "cuda" else ""
    print(f"Machine: {gpu}{cpu_name()}, {torch.get_num_threads()} torch threads, "
          f"torch {torch.__version__}, Stable-Baselines3 {stable_baselines3.__version__}, "
          f"Python {platform.python_version()}")  # fmt: skip
    print(f"Setting: 400-300, batch 256, warm-up {args.warmup}; whole steps: {args.steps} steps in each of "
          f"{args.repeats} processes per agent; updates alone: {args.rounds} segments of {args.updates}\n")  # fmt: skip
    print("| environment | measured | Stable-Baselines3 | td3_steps fp32 | td3_steps bf16 |")
    print("|---|---|---|---|---|")
    measured = []
    for env_id in args.envs:
        samples = whole_steps(names, env_id, args.warmup, args.steps, args.repeats, args.seed, args.device)
        print(row(env_id, "whole steps", "steps/s", samples, untimed), flush=True)
        measured.append((env_id, "whole steps", samples))
        samples = updates_alone(names, env_id, args.warmup, args.updates, args.rounds, args.seed, args.device)
        print(row(env_id, "updates alone", "updates/s", samples, untimed), flush=True)
        measured.append((env_id, "updates alone", samples))
    print("\nEach measurement, in the order taken (the spread says how steady the machine was), and the ratio of each")
    print("td3_steps measurement to Stable-Baselines3's of the same round (taken minutes apart at most: less moved by")
    print("a slow spell of the machine than the medians above):")
    for env_id, measure, samples in measured:
        print(f"  {env_id}, {measure}: " + "; ".join(
            f"{name} {', '.join(f'{value:.0f}' for value in values)}" for name, values in samples.items()
        ))  # fmt: skip
        for name in names[1:]:
            ratios = [ours / base for ours, base in zip(samples[name], samples["Stable-Baselines3"])]
            print(f"    {name} / Stable-Baselines3 by round: {', '.join(f'{r:.2f}x' for r in ratios)};"
                  f" median {statistics.median(ratios):.2f}x")  # fmt: skip

    if "HalfCheetahBulletEnv-v0" not in args.envs:
        return
    env = make_env("HalfCheetahBulletEnv-v0")
    obs_dim, action_dim = env.observation_space.shape[0], env.action_space.shape[0]
    memory = ReplayMemory(1_000_000, obs_dim, action_dim)
    print(f"\nReplay memory for 1M HalfCheetahBulletEnv-v0 transitions (obs {obs_dim}, action {action_dim}, "
          f"{memory.obs.dtype}): {memory.nbytes / 2**20:.0f} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
