"""Detail probes (lib.detail.probes): a surface measured again after a few insertions measures only
the parts it changed, and finds what measuring it all again finds."""

from __future__ import annotations

import numpy as np

import blender_navmesh.detail as detail
from blender_navmesh import BakeParams, generate
from blender_navmesh.detail import probes


def _rolling_bake(monkeypatch, forget: bool):
    """The navmesh of rolling ground and the probes measured for it; forget: every round measures
    every part again (no parts carried over as settled)."""
    from levels import Scene

    measure, counts = probes._measure, []

    def counting(columns, probe, *rest):
        counts.append(len(probe))
        return measure(columns, probe, *rest)

    monkeypatch.setattr(probes, "_measure", counting)
    if forget:
        off_floor = probes.off_floor
        monkeypatch.setattr(detail, "off_floor", lambda *args: off_floor(*args[:3]))
    floor = lambda x, y: 1.2 * np.sin(x / 2.0) * np.cos(y / 2.5)  # noqa: E731
    xs = np.linspace(0.0, 20.0, 201)
    scene = Scene().terrain(xs, xs, floor)
    params = BakeParams(cell_size=0.3, max_height_error=0.02, agent_radius=0.3)
    mesh = generate(scene.vertices, scene.triangles, params)
    monkeypatch.undo()
    return mesh, sum(counts)


def test_parts_found_on_the_floor_are_not_measured_again(monkeypatch):
    """A polygon with probes off the floor is measured again after they are inserted, but an
    insertion changes a few triangles round it: the others' probes, and those along unchanged
    inner edges, measure what they measured (same corners, same floor). Carried over as settled,
    the rolling ground's probes measured fall by a third (75k -> 48k), and the surface is the same
    vertex for vertex."""
    mesh, measured = _rolling_bake(monkeypatch, forget=False)
    again, measured_again = _rolling_bake(monkeypatch, forget=True)
    for name in ("vertices", "detail_vertices", "detail_triangles", "detail_polygons"):
        assert np.array_equal(getattr(mesh, name), getattr(again, name)), name
    assert measured < 0.7 * measured_again, (measured, measured_again)
