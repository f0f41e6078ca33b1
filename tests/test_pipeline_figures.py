"""The pipeline figures in assets/pipeline are exactly what scripts/make_pipeline_figures.py draws."""

from pathlib import Path

from scripts.make_pipeline_figures import DEFAULT_OUT, write_all

EXPECTED = [f"step{n:02d}.svg" for n in range(1, 16)] + ["overview.svg"]


def test_committed_figures_match_the_script(tmp_path: Path):
    written = write_all(tmp_path)
    assert sorted(p.name for p in written) == sorted(EXPECTED)
    stale = [name for name in EXPECTED if (tmp_path / name).read_bytes() != (DEFAULT_OUT / name).read_bytes()]
    assert not stale, f"assets/pipeline is out of date for {stale}: run python scripts/make_pipeline_figures.py"


def test_figures_are_small_and_reproducible(tmp_path: Path):
    write_all(tmp_path / "a")
    write_all(tmp_path / "b")
    for name in EXPECTED:
        data = (tmp_path / "a" / name).read_bytes()
        assert data == (tmp_path / "b" / name).read_bytes(), name
        assert len(data) < 80_000, f"{name} is {len(data)} bytes"
