"""The trained agents shipped in assets/ and in the package (td3_steps/shipped/): each actor loads and plays
well on fresh episodes; each CSV is well formed.

The episodes are the first EPISODES of the evaluation protocol (scripts/evaluate_agents.py): reset seeds from the
TEST_EPISODES stream, fixed before any agent was trained and never used to select one, so they are not chosen to
pass. Each threshold (SHIPPED, stated in the README's Results section) is at most the mean of the EPISODES lowest
returns the protocol measured (protocol.json): whichever EPISODES of the protocol's episodes a test drew, the actor
would pass, and an actor that plays worse than the protocol measured fails.
"""

import csv
import json
import statistics
from pathlib import Path

import pytest

from td3_steps import Policy
from td3_steps.metrics import COLUMNS
from td3_steps.seeding import TEST_EPISODES

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"


def run_dir(run: str) -> Path:
    """td3_steps/shipped/<run> for a run the package ships (notebook 15 shows walker2d), else assets/<run>."""
    in_package = ROOT / "td3_steps" / "shipped" / run
    return in_package if in_package.exists() else ASSETS / run


EPISODES = 5
# run directory -> (environment, the mean return over EPISODES fresh episodes that the actor must beat)
SHIPPED = {
    **{f"pendulum/seed{s}": ("Pendulum-v1", -300.0) for s in range(5)},
    "walker2d": ("Walker2DBulletEnv-v0", 1600.0),
    "hopper": ("HopperBulletEnv-v0", 1800.0),
    "halfcheetah": ("HalfCheetahBulletEnv-v0", 2400.0),
    "walker2d-zoo": ("Walker2DBulletEnv-v0", 2500.0),
    "ant": ("AntBulletEnv-v0", 3600.0),
}


@pytest.mark.parametrize("run", [pytest.param(run, marks=pytest.mark.pybullet) if "Bullet" in env_id else run
                                 for run, (env_id, *_) in SHIPPED.items()])  # fmt: skip
def test_shipped_actor_scores_above_its_threshold(run):
    env_id, threshold = SHIPPED[run]
    policy = Policy.load(run_dir(run) / "policy.pt")
    assert policy.env_id == env_id
    mean = statistics.fmean(policy.episode_returns(EPISODES, seed=0, stream=TEST_EPISODES))
    assert mean > threshold, f"{run}: {mean:.1f} over {EPISODES} fresh episodes, threshold {threshold}"


@pytest.mark.parametrize("run", SHIPPED)
def test_threshold_is_justified_by_the_protocol(run):
    protocol = json.loads((run_dir(run) / "protocol.json").read_text())
    worst = statistics.fmean(sorted(protocol["returns"])[:EPISODES])
    assert protocol["episodes"] >= 20 if "Bullet" in SHIPPED[run][0] else protocol["episodes"] >= EPISODES
    assert SHIPPED[run][1] <= worst, (
        f"{run}: threshold {SHIPPED[run][1]} is above {worst:.1f}, the mean of the protocol's {EPISODES} lowest"
        " returns: rerun python -m scripts.evaluate_agents and set the threshold from its protocol.json"
    )


@pytest.mark.parametrize("run", SHIPPED)
def test_shipped_metrics_are_well_formed(run):
    with open(run_dir(run) / "metrics.csv", newline="") as f:
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
    assert (run_dir(run) / "learning_curve.png").stat().st_size > 10_000


def test_readme_states_each_threshold():
    readme = " ".join((ROOT / "README.md").read_text().split())  # line breaks as spaces
    for run, (_, threshold) in SHIPPED.items():
        folder = run_dir(run.split("/")[0]).relative_to(ROOT).as_posix()
        stated = f"`{folder}`: {threshold:,g}"
        assert stated in readme, f"the README's Results section should say {stated!r}"


def test_readme_results_table_is_current():
    from scripts.results_table import readme_with_table, shipped_runs  # noqa: PLC0415

    assert set(shipped_runs()) == {run.split("/")[0] for run in SHIPPED}, "every shipped run is tested"
    readme = (ROOT / "README.md").read_text()
    assert readme_with_table(readme) == readme, "run: python scripts/results_table.py"
