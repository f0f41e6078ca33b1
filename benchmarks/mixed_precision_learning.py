"""Does bfloat16 autocast change learning? Pendulum-v1 returns, fp32 against mixed precision.

    python benchmarks/mixed_precision_learning.py               # seeds 0 1 2, 12,000 steps
    python benchmarks/mixed_precision_learning.py --net 400 300 --batch 256

Each seed trains twice with the same config but for `mixed_precision`, and the table gives the
final evaluation (10 deterministic episodes) and the best evaluation (every 1,000 steps) of each.
"""

from __future__ import annotations

import argparse
import statistics

from common import add_evaluated_steps, config_or_error, evaluations

from td3_steps import TD3Config
from td3_steps.cli import at_least


def run(config: TD3Config, seed: int, steps: int) -> tuple[float, float]:
    values = [value for _, value in evaluations(config, seed, steps)]
    return values[-1], max(values)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=at_least(0), nargs="+", default=[0, 1, 2])
    add_evaluated_steps(parser, 12_000)
    parser.add_argument("--net", type=at_least(1), nargs="+", help="hidden sizes (default: the pendulum preset's)")
    parser.add_argument("--batch", type=at_least(1), help="batch size (default: the pendulum preset's)")
    args = parser.parse_args(argv)
    base = TD3Config.from_preset("pendulum")
    if args.net is not None:
        base = config_or_error(parser, "--net", base, net_arch=tuple(args.net))
    if args.batch is not None:
        base = config_or_error(parser, "--batch", base, batch_size=args.batch)
    print(f"Pendulum-v1, {args.steps} steps, net {base.net_arch}, batch {base.batch_size}\n")
    print("| seed | fp32 final | fp32 best | bf16 final | bf16 best |")
    print("|---|---|---|---|---|")
    finals: dict[bool, list[float]] = {False: [], True: []}
    for seed in args.seeds:
        cells = []
        for mixed in (False, True):
            final, best = run(base.replace(mixed_precision=mixed), seed, args.steps)
            finals[mixed].append(final)
            cells += [f"{final:.1f}", f"{best:.1f}"]
        print(f"| {seed} | {' | '.join(cells)} |", flush=True)
    print(f"\nmean final: fp32 {statistics.mean(finals[False]):.1f}, bf16 {statistics.mean(finals[True]):.1f}")


if __name__ == "__main__":
    main()
