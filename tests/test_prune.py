"""Islands and walkable seeds (issue 15): a crate top, a platform no stair reaches and the main floor
are three islands; seeds keep only the ones they stand on, whole and valid; without seeds nothing
is pruned."""

from __future__ import annotations

import numpy as np
import pytest

from blender_navmesh import BakeParams, NavMeshError, generate
from blender_navmesh.prune import islands, keep_seeded, select_polygons
from levels import Scene
from tests.navmesh_checks import assert_valid_navmesh

PARAMS = BakeParams(cell_size=0.2, agent_radius=0.4, agent_max_climb=0.4)
FLOOR, CRATE_TOP, PLATFORM = (2.0, 2.0, 0.0), (10.0, 10.0, 3.0), (25.0, 5.0, 1.0)


def level() -> Scene:
    """A 20 m floor with a 4 x 4 x 3 m crate in it, and a separate 6 m platform 1 m up beside it."""
    scene = Scene().floor(0, 0, 20, 20)
    scene.box((10.0, 10.0, 0.0), (4.0, 4.0, 3.0))
    scene.box((25.0, 5.0, 0.0), (6.0, 6.0, 1.0))
    return scene


@pytest.fixture(scope="module")
def whole():
    scene = level()
    return generate(scene.vertices, scene.triangles, PARAMS)


def expected_areas(r: float) -> dict[str, float]:
    return {"floor": (20 - 2 * r) ** 2 - (4 + 2 * r) ** 2, "platform": (6 - 2 * r) ** 2, "crate": (4 - 2 * r) ** 2}


def test_islands_are_reported_largest_first_with_their_areas(whole):
    found = islands(whole)
    exact = expected_areas(PARAMS.agent_radius)
    assert [i.area for i in found] == pytest.approx([exact["floor"], exact["platform"], exact["crate"]], rel=0.03)
    assert sum(i.polygons for i in found) == whole.polygon_count
    assert len(np.unique(whole.islands())) == 3


@pytest.mark.parametrize(
    "seeds, kept",
    [
        ([FLOOR], ["floor"]),
        ([CRATE_TOP], ["crate"]),
        ([FLOOR, PLATFORM], ["floor", "platform"]),
        ([FLOOR, (18.0, 18.0, 0.0)], ["floor"]),  # two seeds on one island keep it once
    ],
)
def test_seeds_keep_only_the_islands_they_stand_on(whole, seeds, kept):
    scene = level()
    pruned = generate(scene.vertices, scene.triangles, PARAMS, seeds=seeds)
    assert_valid_navmesh(pruned)
    exact = expected_areas(PARAMS.agent_radius)
    assert sorted(i.area for i in islands(pruned)) == pytest.approx(sorted(exact[k] for k in kept), rel=0.03)


def test_pruning_keeps_every_polygon_array_in_step(whole):
    pruned = keep_seeded(whole, [FLOOR])
    keep = whole.islands() == whole.islands()[np.argmax(whole.polygon_areas())]
    assert pruned.polygon_count == keep.sum()
    np.testing.assert_array_equal(pruned.areas, whole.areas[keep])
    np.testing.assert_array_equal(pruned.regions, whole.regions[keep])
    kept_slots = np.repeat(keep, whole.polygon_sizes)
    np.testing.assert_array_equal(pruned.edge_clearance, whole.edge_clearance[kept_slots])
    assert len(pruned.cross_clearance) == pruned.cross_offsets[-1]
    # The same polygons, corner for corner, and the same detail surface under them.
    np.testing.assert_array_equal(
        pruned.vertices[pruned.poly_vertices], whole.vertices[whole.poly_vertices[kept_slots]]
    )
    tris = whole.detail_vertices[whole.detail_triangles[keep[whole.detail_polygons]]]
    np.testing.assert_array_equal(pruned.detail_vertices[pruned.detail_triangles], tris)
    assert pruned.area_xy() == pytest.approx(whole.polygon_areas()[keep].sum())


def test_without_seeds_nothing_is_pruned(whole):
    assert keep_seeded(whole, np.zeros((0, 3))) is whole
    scene = level()
    assert generate(scene.vertices, scene.triangles, PARAMS, seeds=[]).polygon_count == whole.polygon_count


def test_a_seed_off_the_navmesh_is_named_with_its_distance(whole):
    with pytest.raises(NavMeshError, match=r"walkable seed 2 at \(40, 40, 0\) is .* m from the navmesh"):
        keep_seeded(whole, [FLOOR, (40.0, 40.0, 0.0)])


def test_only_whole_islands_can_be_selected(whole):
    half = np.zeros(whole.polygon_count, dtype=bool)
    half[: whole.polygon_count // 2] = True
    if (whole.islands()[half] != whole.islands()[0]).any() or half.sum() == 0:
        pytest.skip("the first half happens to be whole islands")
    with pytest.raises(NavMeshError, match="whole islands"):
        select_polygons(whole, half)
