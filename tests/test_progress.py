"""Bake progress: each stage reports how far it is from inside its loops (so a UI bar moves and Esc
stops a long stage), never backwards, throttled to REPORT_INTERVAL; the time between reports on a
large level is measured by the benchmark, not here."""

from __future__ import annotations

import pytest

from blender_navmesh import BakeCancelled, BakeParams, generate, progress
from blender_navmesh.progress import Progress
from levels import Scene

STAGES = ("input", "heightfield", "regions", "contours", "polygons", "detail", "clearance", "done")


@pytest.fixture
def every_report(monkeypatch):
    """No throttling: every call of Progress.at reaches the callback."""
    monkeypatch.setattr(progress, "REPORT_INTERVAL", 0.0)


def crates_level() -> Scene:
    """A 30 m floor with a grid of 36 crates (holes) and a few separate platforms (regions)."""
    scene = Scene().floor(0, 0, 30, 30)
    for i in range(6):
        for j in range(6):
            scene.box((3 + 4.5 * i, 3 + 4.5 * j, 0.0), (1.2, 1.2, 1.0), yaw_deg=15.0 * (i + j))
    for k in range(3):
        scene.floor(35 + 6 * k, 0, 39 + 6 * k, 4, z=0.5 * k)
    return scene


def test_a_span_hands_out_its_parts_and_never_moves_back(every_report):
    seen = []
    whole = Progress(lambda stage, f: seen.append((stage, f)), "polygons", 0.6, 0.8)
    whole.part(1, 4).at(0.5)
    whole.span(0.5, 1.0).at(0.0)
    whole.part(0, 4).at(1.0)  # behind the furthest point so far: reported there, not back
    assert seen == [
        ("polygons", pytest.approx(0.675)),
        ("polygons", pytest.approx(0.7)),
        ("polygons", pytest.approx(0.7)),
    ]


def test_reports_closer_together_than_the_interval_are_skipped(monkeypatch):
    monkeypatch.setattr(progress, "REPORT_INTERVAL", 3600.0)
    seen = []
    span = Progress(lambda stage, f: seen.append(f), "contours")
    for k in range(100):
        span.at(k / 100)
    assert seen == [0.0]


def test_every_stage_reports_from_inside_its_share_of_the_bar_in_order(every_report):
    scene = crates_level()
    seen = []
    mesh = generate(
        scene.vertices,
        scene.triangles,
        BakeParams(cell_size=0.3, agent_radius=0.4),
        progress=lambda stage, f: seen.append((stage, f)),
    )
    assert mesh.polygon_count > 0
    assert [stage for k, (stage, _) in enumerate(seen) if k == 0 or seen[k - 1][0] != stage] == list(STAGES)
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    inside = {stage: sum(1 for s, _ in seen if s == stage) for stage in STAGES}
    # Beyond the stage's own start: the long stages report from their loops.
    for stage in ("heightfield", "regions", "contours", "polygons", "detail", "clearance"):
        assert inside[stage] >= 3, stage


@pytest.mark.parametrize("stage", ["regions", "contours", "polygons", "detail", "clearance"])
def test_a_cancel_from_inside_a_stage_stops_the_bake_there(every_report, stage):
    scene = crates_level()
    calls = []

    def report(name, fraction):
        calls.append(name)
        if name == stage and calls.count(stage) == 2:  # the first report from inside the stage
            raise BakeCancelled(name)

    with pytest.raises(BakeCancelled):
        generate(scene.vertices, scene.triangles, BakeParams(cell_size=0.3, agent_radius=0.4), progress=report)
    assert calls[-1] == stage and calls.count(stage) == 2
