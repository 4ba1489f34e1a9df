"""Input stage: which triangles form closed shells (solids whose inside is never a floor)."""

from __future__ import annotations

import numpy as np
import pytest

from blender_navmesh.soup import closed_shells, downward_floors, prepare_soup
from levels import Scene


def test_a_box_is_a_closed_shell_and_a_floor_is_not():
    scene = Scene().floor(0, 0, 10, 10).box((5, 5, 0), (2, 2, 2))
    closed = prepare_soup(scene.vertices, scene.triangles).closed
    assert not closed[:2].any() and closed[2:].all()


def test_a_box_missing_a_face_is_open():
    scene = Scene().box((0, 0, 0), (2, 2, 2))
    assert not closed_shells(scene.vertices, scene.triangles[2:]).any()


def test_duplicated_vertices_are_welded_by_position():
    scene = Scene().box((0, 0, 0), (2, 2, 2))
    split = scene.vertices[scene.triangles.ravel()]
    assert closed_shells(split, np.arange(len(split)).reshape(-1, 3)).all()


def test_a_face_walked_the_same_way_twice_is_not_a_shell():
    """Inconsistent winding (one face flipped) has no inside."""
    scene = Scene().box((0, 0, 0), (2, 2, 2))
    tris = scene.triangles.copy()
    tris[0] = tris[0, ::-1]
    tris[6] = tris[6, ::-1]
    assert not closed_shells(scene.vertices, tris).any()


def test_two_separate_boxes_and_a_plane():
    scene = Scene().box((0, 0, 0), (1, 1, 1)).box((5, 0, 0), (1, 1, 1)).floor(10, 10, 12, 12)
    closed = closed_shells(scene.vertices, scene.triangles)
    assert closed[:24].all() and not closed[24:].any()


def test_a_box_duplicated_in_place_stays_closed():
    """Shift+D, Esc: the same box twice, every face repeated (its copy may start at another corner)."""
    box = Scene().box((0, 0, 0), (2, 2, 2))
    copy = np.roll(box.triangles, 1, axis=1) + len(box.vertices)
    verts, tris = np.vstack([box.vertices, box.vertices]), np.vstack([box.triangles, copy])
    assert closed_shells(verts, tris).all()


def test_no_floor_inside_a_crate_duplicated_in_place():
    from blender_navmesh import BakeParams, generate

    scene = Scene().floor(0, 0, 10, 10).box((5, 5, 0), (4, 4, 3))
    crate = Scene().box((5, 5, 0), (4, 4, 3))
    scene.add(crate.vertices, crate.triangles)
    mesh = generate(scene.vertices, scene.triangles, BakeParams(agent_radius=0.3, cell_size=0.2))
    inside = [
        p
        for p in range(mesh.polygon_count)
        if mesh.vertices[mesh.polygon(p)][:, 2].max() < 0.5
        and np.all(np.abs(mesh.vertices[mesh.polygon(p)][:, :2] - 5.0) < 1.9)
    ]
    assert inside == [], "a floor polygon inside the duplicated crate"


def test_crates_sharing_a_face_are_solid():
    """Two crates stacked, and two side by side: each pair shares a face, walked one way by one
    crate and the other way by the other, so the shared edges are used twice in each direction."""
    stacked = Scene().box((0, 0, 0), (2, 2, 1)).box((0, 0, 1), (2, 2, 1))  # the lower top is the upper bottom
    beside = Scene().box((0, 0, 0), (2, 2, 1)).box((2, 0, 0), (2, 2, 1))
    for scene in (stacked, beside):
        assert closed_shells(scene.vertices, scene.triangles).all()


@pytest.mark.parametrize("layout", ["stacked", "beside", "overlapping"])
def test_no_floor_inside_crates_that_touch_or_overlap(layout):
    from blender_navmesh import BakeParams, generate

    first, second = (
        (4.0, 4.0, 0.0),
        {"stacked": (4.0, 4.0, 3.0), "beside": (8.0, 4.0, 0.0), "overlapping": (6.0, 5.0, 0.0)}[layout],
    )
    scene = Scene().floor(0, 0, 12, 12).box(first, (4, 4, 3)).box(second, (4, 4, 3))
    mesh = generate(scene.vertices, scene.triangles, BakeParams(agent_radius=0.3, cell_size=0.2))
    for p in range(mesh.polygon_count):
        corners = mesh.vertices[mesh.polygon(p)]
        x, y = corners[:, :2].mean(axis=0)
        if corners[:, 2].max() < 0.5:
            for cx, cy, _ in (first, second):
                assert not (abs(x - cx) < 1.7 and abs(y - cy) < 1.7), (
                    f"floor polygon {p} inside a crate at ({x:.2f}, {y:.2f})"
                )


@pytest.mark.parametrize("yaw", [0.0, 30.0])
@pytest.mark.parametrize(
    "layout",
    [
        "flush with the floor's edges",  # the floor's border runs under the crate's sides, edge for edge
        "on a floor cell of its size",  # the cell's corners are the crate's bottom corners
    ],
)
def test_a_crate_snapped_to_the_floor_is_solid_and_the_floor_open(layout, yaw):
    """Snapped to the floor, a crate shares its bottom edges with the floor's, so three faces meet
    at an edge (or four, with the floor cell lying on the crate's bottom). Each face pairs with
    the one next to it round the edge, so the crate is still a closed shell (a floor 60 m² inside
    a 20 x 3 m crate flush with the floor's edges was baked as walkable)."""
    from blender_navmesh import BakeParams, generate

    crate = Scene().box((0.0, 0.0, 0.0), (4.0, 4.0, 3.0))
    if layout == "flush with the floor's edges":
        floor = Scene().quad(*crate.vertices[[0, 1, 3, 2]])  # the crate's bottom corners, facing up
        floor.quad(crate.vertices[2], crate.vertices[3], (2.0, 12.0, 0.0), (-2.0, 12.0, 0.0))
    else:
        xs = np.array([-6.0, -2.0, 2.0, 6.0])
        floor = Scene().terrain(xs, xs, lambda x, y: 0.0 * x)
    c, s = np.cos(np.radians(yaw)), np.sin(np.radians(yaw))
    turn = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    scene = floor.add(crate.vertices, crate.triangles, walkable=False)
    vertices = scene.vertices @ turn.T
    closed = closed_shells(vertices, scene.triangles)
    assert closed[-12:].all() and not closed[:-12].any()
    mesh = generate(vertices, scene.triangles, BakeParams(agent_radius=0.3, cell_size=0.2), walkable=scene.walkable)
    local = mesh.vertices @ turn
    assert mesh.polygon_count > 0
    for p in range(mesh.polygon_count):
        x, y, z = local[mesh.polygon(p)].mean(axis=0)
        assert not (abs(x) < 1.9 and abs(y) < 1.9 and z < 0.5), (
            f"floor polygon {p} inside the crate at ({x:.2f}, {y:.2f})"
        )


def flipped(scene: Scene, first: int, last: int) -> Scene:
    """The scene with triangles first..last-1 turned over (their normals flipped)."""
    scene.triangles[first:last] = scene.triangles[first:last, ::-1]
    return scene


def test_a_floor_facing_down_is_found_but_a_ceiling_over_a_floor_or_a_slab_bottom_is_not():
    """A floor with flipped normals is never walked on; faces that face down on purpose (the bottom
    of a closed slab or crate, a ceiling plane over a floor, an overhang) are not named."""
    half = flipped(Scene().floor(0, 0, 10, 10).floor(10, 0, 20, 10), 2, 4)
    walk = np.ones(4, dtype=bool)
    assert downward_floors(half.vertices, half.triangles, walk, 45.0).tolist() == [False, False, True, True]
    alone = flipped(Scene().floor(0, 0, 10, 10), 0, 2)
    assert downward_floors(alone.vertices, alone.triangles, np.ones(2, dtype=bool), 45.0).all()
    assert not downward_floors(alone.vertices, alone.triangles, np.zeros(2, dtype=bool), 45.0).any()  # obstacles
    assert not downward_floors(alone.vertices, alone.triangles, np.ones(2, dtype=bool), 45.0, min_area=200.0).any()
    ceiling = flipped(Scene().floor(0, 0, 10, 10).floor(0, 0, 10, 10, z=3.0), 2, 4)
    assert not downward_floors(ceiling.vertices, ceiling.triangles, walk, 45.0).any()
    slab = Scene().box((0, 0, 2), (4, 4, 0.3))
    assert not downward_floors(slab.vertices, slab.triangles, np.ones(12, dtype=bool), 45.0).any()
    steep = flipped(Scene().quad((0, 0, 0), (10, 0, 8), (10, 10, 8), (0, 10, 0)), 0, 2)  # 38.7 degrees
    assert downward_floors(steep.vertices, steep.triangles, np.ones(2, dtype=bool), 45.0).all()
    assert not downward_floors(steep.vertices, steep.triangles, np.ones(2, dtype=bool), 30.0).any()
