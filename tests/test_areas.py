"""Area painting keeps its place in the navmesh, also where a painted patch meets the floor's edge.

Known answer: the navmesh polygons of area id k cover the floor painted k intersected with the
floor eroded by the agent radius (a patch is eroded only where it meets real walls and ledges, not
where it meets another area), computed exactly with shapely. Tolerance: every outline point stays
within max_edge_error of the exact boundary (lib/contours simplifies to max_edge_error less the
raster's own cs/4, and max_edge_error >= cs/2 here), so the area between the two outlines is at
most max_edge_error x the exact shape's perimeter.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import shapely
from shapely.affinity import rotate
from shapely.geometry import LineString, Polygon, box

from blender_navmesh import BakeParams, generate
from blender_navmesh.query import QueryFilter, find_path
from tests.navmesh_checks import assert_valid_navmesh, polygon_xy

PARAMS = BakeParams(
    cell_size=0.2,
    agent_radius=0.0,
    agent_height=2.0,
    agent_max_climb=0.4,
    region_min_area=0.1,
    max_edge_error=0.2,
    max_height_error=0.2,
)
MUD = 5
FLOOR = box(0, 0, 20, 10)


def painted_floor(floor: Polygon, patches: list[tuple[int, Polygon]]):
    """(vertices, triangles, areas) of a flat floor at z = 0 painted with (area id, shape) patches,
    later ones over earlier ones; each painted piece is triangulated exactly (constrained Delaunay)."""
    pieces, painted = [], Polygon()
    for area, shape in reversed(patches):
        pieces.append((area, shape.intersection(floor).difference(painted)))
        painted = painted.union(shape)
    pieces.append((0, floor.difference(painted)))
    vertices, triangles, areas = [], [], []
    for area, piece in pieces:
        for triangle in shapely.constrained_delaunay_triangles(piece).geoms:
            if triangle.area < 1e-12:
                continue
            corners = np.array(triangle.exterior.coords[:3])
            if not triangle.exterior.is_ccw:
                corners = corners[::-1]  # facing up
            triangles.append(np.arange(3) + len(vertices) * 3)
            vertices.append(np.column_stack([corners, np.zeros(3)]))
            areas.append(area)
    return np.concatenate(vertices), np.array(triangles), np.array(areas)


def expected_areas(floor: Polygon, patches: list[tuple[int, Polygon]], radius: float) -> dict[int, Polygon]:
    """Per area id, the painted floor intersected with the floor eroded by the agent radius."""
    walkable = floor.buffer(-radius) if radius > 0 else floor
    out, painted = {}, Polygon()
    for area, shape in reversed(patches):
        piece = shape.intersection(walkable).difference(painted)
        out[area] = piece.union(out[area]) if area in out else piece
        painted = painted.union(shape)
    rest = walkable.difference(painted)
    out[0] = rest.union(out[0]) if 0 in out else rest
    return out


def area_by_id(mesh) -> dict[int, float]:
    """Top-view area of the navmesh's polygons per area id."""
    out: dict[int, float] = {}
    for p in range(mesh.polygon_count):
        out[int(mesh.areas[p])] = out.get(int(mesh.areas[p]), 0.0) + Polygon(polygon_xy(mesh, p)).area
    return out


def bake(floor: Polygon, patches: list[tuple[int, Polygon]], params: BakeParams):
    vertices, triangles, areas = painted_floor(floor, patches)
    mesh = generate(vertices, triangles, params, areas=areas)
    assert_valid_navmesh(mesh)
    return mesh


def assert_areas_match(mesh, floor: Polygon, patches: list[tuple[int, Polygon]], params: BakeParams) -> None:
    got = area_by_id(mesh)
    for area, exact in expected_areas(floor, patches, params.agent_radius).items():
        tolerance = params.max_edge_error * exact.length
        assert got.get(area, 0.0) == pytest.approx(exact.area, abs=tolerance), (
            f"area {area}: navmesh {got.get(area, 0.0):.3f} m², exact {exact.area:.3f} m² (tolerance {tolerance:.3f})"
        )


PATCHES = {
    "south edge": box(3, 0, 17, 1.2),
    "north edge": box(3, 8.8, 17, 10),
    "west edge": box(0, 2, 1.2, 8),
    "east edge": box(18.8, 2, 20, 8),
    "south-west corner": box(0, 0, 4, 4),
    "north-east corner": box(15, 6, 20, 10),
    "notch in the south edge": box(8, 0, 12, 6),
    "strip splitting the floor": box(9, 0, 11, 10),
    "interior": box(8, 3, 12, 7),
}


@pytest.mark.parametrize("radius", [0.0, 0.5])
@pytest.mark.parametrize("name", list(PATCHES))
def test_a_painted_patch_keeps_its_area(name, radius):
    params = dataclasses.replace(PARAMS, agent_radius=radius)
    patches = [(MUD, PATCHES[name])]
    assert_areas_match(bake(FLOOR, patches, params), FLOOR, patches, params)


@pytest.mark.parametrize("seed", range(12))
def test_random_patches_on_random_floors_keep_their_areas(seed):
    rng = np.random.default_rng(seed)
    width, depth = rng.uniform(8, 24), rng.uniform(6, 16)
    floor = rotate(box(0, 0, width, depth), rng.uniform(0, 90), origin=(0, 0))
    if seed % 2:
        floor = floor.difference(box(width * 0.4, depth * 0.3, width * 0.6, depth * 0.6))  # a hole: more walls
    lo, hi = np.array(floor.bounds[:2]), np.array(floor.bounds[2:])
    patches = []
    for _ in range(rng.integers(2, 6)):
        centre = rng.uniform(lo, hi)
        size = rng.uniform(1.5, 6, 2)
        patch = box(*(centre - size / 2), *(centre + size / 2))
        patches.append((int(rng.integers(1, 8)), rotate(patch, rng.uniform(0, 90))))
    params = dataclasses.replace(PARAMS, agent_radius=float(rng.choice([0.0, 0.3, 0.5])))
    assert_areas_match(bake(floor, patches, params), floor, patches, params)


@pytest.mark.parametrize("radius", [0.0, 0.5])
def test_a_path_with_mud_excluded_goes_around_a_patch_on_the_floors_edge(radius):
    """The symptom: mud painted against the south wall came out as a sliver, and a path with mud
    excluded walked straight through it."""
    params = dataclasses.replace(PARAMS, agent_radius=radius)
    mud = box(8, 0, 12, 6)
    mesh = bake(FLOOR, [(MUD, mud)], params)
    path = find_path(mesh, (2, 2, 0), (18, 2, 0), filter=QueryFilter(excluded={MUD}))
    assert path.status == "found"
    # The outline may cut into the patch by max_edge_error, no more.
    assert not LineString(path.points[:, :2]).intersects(mud.buffer(-params.max_edge_error))
    # Up to the patch's north corners and back down, not straight along y = 2 (16 m).
    assert path.length == pytest.approx(2 * np.hypot(6, 4) + 4, abs=2 * params.max_edge_error)


def test_a_strip_of_mud_across_the_floor_cuts_it_in_two_for_a_path_without_mud():
    mesh = bake(FLOOR, [(MUD, PATCHES["strip splitting the floor"])], PARAMS)
    assert find_path(mesh, (2, 5, 0), (18, 5, 0), filter=QueryFilter(excluded={MUD})).status != "found"
    assert find_path(mesh, (2, 5, 0), (18, 5, 0)).status == "found"
