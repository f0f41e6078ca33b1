"""Steps per second of td3_steps and Stable-Baselines3's TD3 with identical hyperparameters.

    pip install -e ".[bench,bullet]"
    python benchmarks/speed.py                       # Pendulum-v1 and HalfCheetahBulletEnv-v0
    python benchmarks/speed.py --envs Pendulum-v1 --rounds 3 --steps 1000
    python benchmarks/speed.py --bf16 yes            # time bfloat16 autocast even where it is emulated

Both libraries train the same setting: 400-300 networks, batch 256, Adam 1e-3, tau 0.005,
gamma 0.98, policy delay 2, target noise 0.2 clipped to 0.5 and exploration noise 0.1 (both
relative to the half-range: Stable-Baselines3 adds them in its [-1, 1] scaled action space),
one gradient step per environment step. After the random-action warm-up each agent trains in
segments of --steps, the agents taking turns, so that a slow spell of the machine hits all of
them alike; the table reports each agent's median segment speed and its ratio to
Stable-Baselines3's. It also prints the replay memory's size for 1M HalfCheetahBulletEnv-v0
transitions.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
import torch

from td3_steps import TD3, ReplayMemory, TD3Config, make_env
from td3_steps.devices import has_fast_bfloat16

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


def td3_steps_agent(env_id: str, warmup: int, seed: int, mixed_precision: bool):
    config = TD3Config(
        **HYPERPARAMETERS, learning_starts=warmup, exploration_noise=0.1, net_arch=(400, 300),
        mixed_precision=mixed_precision,
    )  # fmt: skip
    model = TD3(env_id, config, seed=seed, device="cpu")
    return model, lambda steps: model.learn(steps)


def sb3_agent(env_id: str, warmup: int, seed: int):
    from stable_baselines3 import TD3 as SB3TD3
    from stable_baselines3.common.noise import NormalActionNoise

    env = make_env(env_id)
    n = env.action_space.shape[0]
    model = SB3TD3(
        "MlpPolicy", env, learning_starts=warmup, train_freq=1, gradient_steps=1,
        action_noise=NormalActionNoise(np.zeros(n), 0.1 * np.ones(n)), policy_kwargs=dict(net_arch=[400, 300]),
        seed=seed, device="cpu", verbose=0, **HYPERPARAMETERS,
    )  # fmt: skip
    return model, lambda steps: model.learn(steps, reset_num_timesteps=False)


def measure(env_id: str, warmup: int, steps: int, rounds: int, seed: int, bf16: bool) -> dict[str, float]:
    agents = {
        "Stable-Baselines3": sb3_agent(env_id, warmup, seed)[1],
        "td3_steps fp32": td3_steps_agent(env_id, warmup, seed, mixed_precision=False)[1],
    }
    if bf16:
        agents["td3_steps bf16"] = td3_steps_agent(env_id, warmup, seed, mixed_precision=True)[1]
    for learn in agents.values():  # the random-action warm-up and the first updates, not timed
        learn(warmup + 200)
    speeds: dict[str, list[float]] = {name: [] for name in agents}
    for r in range(rounds):
        order = list(agents) if r % 2 == 0 else list(reversed(agents))
        for name in order:
            start = time.perf_counter()
            agents[name](steps)
            speeds[name].append(steps / (time.perf_counter() - start))
    return {name: statistics.median(values) for name, values in speeds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", default=["Pendulum-v1", "HalfCheetahBulletEnv-v0"])
    parser.add_argument("--warmup", type=int, default=1_000, help="random-action steps before training")
    parser.add_argument("--steps", type=int, default=1_500, help="environment steps per timed segment")
    parser.add_argument("--rounds", type=int, default=4, help="timed segments per agent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--bf16",
        choices=["auto", "yes", "no"],
        default="auto",
        help="time mixed_precision=True too (auto: only where bfloat16 is native, not emulated)",
    )
    args = parser.parse_args()
    bf16 = args.bf16 == "yes" or (args.bf16 == "auto" and has_fast_bfloat16(torch.device("cpu")))
    untimed = "not timed (--bf16 no)" if args.bf16 == "no" else "not timed (emulated)"

    import stable_baselines3

    print(f"Machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads, "
          f"torch {torch.__version__}, Stable-Baselines3 {stable_baselines3.__version__}")  # fmt: skip
    print(f"Setting: 400-300, batch 256, warm-up {args.warmup}, {args.rounds} rounds of {args.steps} steps\n")
    print("| environment | Stable-Baselines3 | td3_steps fp32 | td3_steps bf16 |")
    print("|---|---|---|---|")
    for env_id in args.envs:
        speeds = measure(env_id, args.warmup, args.steps, args.rounds, args.seed, bf16)
        base = speeds["Stable-Baselines3"]
        cells = [f"{base:.0f} steps/s"] + [
            f"{speeds[name]:.0f} steps/s ({speeds[name] / base:.2f}x)" if name in speeds else untimed
            for name in ("td3_steps fp32", "td3_steps bf16")
        ]
        print(f"| {env_id} | {' | '.join(cells)} |", flush=True)

    env = make_env("HalfCheetahBulletEnv-v0")
    obs_dim, action_dim = env.observation_space.shape[0], env.action_space.shape[0]
    memory = ReplayMemory(1_000_000, obs_dim, action_dim)
    print(f"\nReplay memory for 1M HalfCheetahBulletEnv-v0 transitions (obs {obs_dim}, action {action_dim}, "
          f"{memory.obs.dtype}): {memory.nbytes / 2**20:.0f} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
