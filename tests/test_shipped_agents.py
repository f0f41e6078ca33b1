"""The trained agents shipped in assets/: each actor loads and plays well; each CSV is well formed.

Thresholds are stated here (SHIPPED) and, checked against it, in the README's Results section; the episodes are
seeded (Policy.evaluate), so the scores are the same on every run on one machine.
"""

import csv
from pathlib import Path

import pytest

from td3_steps import Policy
from td3_steps.metrics import COLUMNS

ASSETS = Path(__file__).resolve().parent.parent / "assets"

# run directory in assets/ -> (environment, evaluation episodes here, return the actor must beat)
SHIPPED = {
    **{f"pendulum/seed{s}": ("Pendulum-v1", 5, -400.0) for s in range(5)},
    "walker2d": ("Walker2DBulletEnv-v0", 2, 1000.0),
    "hopper": ("HopperBulletEnv-v0", 2, 2000.0),
    "halfcheetah": ("HalfCheetahBulletEnv-v0", 2, 2000.0),
    "walker2d-zoo": ("Walker2DBulletEnv-v0", 10, 700.0),  # its final actor falls early in 6 of the 10
    "ant": ("AntBulletEnv-v0", 2, 3000.0),
}


@pytest.mark.parametrize("run", SHIPPED)
def test_shipped_actor_scores_above_its_threshold(run):
    env_id, episodes, threshold = SHIPPED[run]
    if "Bullet" in env_id:
        pytest.importorskip("pybullet_envs_gymnasium")
    policy = Policy.load(ASSETS / run / "policy.pt")
    assert policy.env_id == env_id
    mean, _ = policy.evaluate(episodes)
    assert mean > threshold, f"{run}: {mean:.1f} over {episodes} episodes, threshold {threshold}"


@pytest.mark.parametrize("run", SHIPPED)
def test_shipped_metrics_are_well_formed(run):
    with open(ASSETS / run / "metrics.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    steps = [int(r["step"]) for r in rows]
    assert steps == sorted(steps) and steps[0] > 0
    for row in rows:
        numbers = {k: float(v) for k, v in row.items() if v}  # every filled cell is a number
        assert ("eval_return" in numbers) != ("episode_return" in numbers)  # one event per row
    evaluations = [int(r["step"]) for r in rows if r["eval_return"]]
    gaps = {b - a for a, b in zip(evaluations, evaluations[1:])}
    assert len(gaps) == 1 and evaluations[0] == gaps.pop()  # evaluations at a fixed interval
    assert (ASSETS / run / "learning_curve.png").stat().st_size > 10_000


def test_readme_states_each_threshold():
    readme = " ".join((ASSETS.parent / "README.md").read_text().split())  # line breaks as spaces
    for run, (_, episodes, threshold) in SHIPPED.items():
        stated = f"`assets/{run.split('/')[0]}`: {threshold:,g} over {episodes} episodes"
        assert stated in readme, f"the README's Results section should say {stated!r}"


def test_readme_results_table_is_current():
    from scripts.results_table import readme_with_table, shipped_runs  # noqa: PLC0415

    assert set(shipped_runs()) == {run.split("/")[0] for run in SHIPPED}, "every shipped run is tested"
    readme = (ASSETS.parent / "README.md").read_text()
    assert readme_with_table(readme) == readme, "run: python scripts/results_table.py"
