"""A navmesh edited by hand (issue 15 item 5): polygons deleted, moved or repainted become the
navmesh, with adjacency and clearance rebuilt; untouched polygons keep their baked surface."""

from __future__ import annotations

import numpy as np
import pytest

from blender_navmesh import BakeParams, NavMeshError, generate
from blender_navmesh.edit import from_edited_polygons
from blender_navmesh.query import NavMeshQuery
from levels import Scene
from tests.navmesh_checks import assert_valid_navmesh


@pytest.fixture(scope="module")
def baked():
    scene = Scene().floor(0, 0, 20, 8)
    scene.box((10.0, 4.0, 0.0), (2.0, 2.0, 1.0))
    return generate(scene.vertices, scene.triangles, BakeParams(cell_size=0.2, agent_radius=0.4))


def as_blender(mesh):
    """What the Blender object holds: single-precision corners, faces as index lists."""
    return mesh.vertices.astype(np.float32), mesh.polygons, mesh.areas.tolist(), mesh.regions.tolist()


def test_an_unedited_navmesh_comes_back_as_baked(baked):
    vertices, polygons, areas, regions = as_blender(baked)
    again = from_edited_polygons(baked, vertices, polygons, areas, regions)
    np.testing.assert_array_equal(again.vertices, baked.vertices)
    np.testing.assert_array_equal(again.neighbors, baked.neighbors)
    np.testing.assert_array_equal(
        again.detail_vertices[again.detail_triangles], baked.detail_vertices[baked.detail_triangles]
    )
    np.testing.assert_allclose(again.edge_clearance, baked.edge_clearance)


def test_deleted_polygons_turn_their_neighbours_edges_into_walls(baked):
    vertices, polygons, areas, regions = as_blender(baked)
    centres = np.array([baked.vertices[poly, :2].mean(axis=0) for poly in polygons])
    keep = np.flatnonzero(centres[:, 0] < 10.0)  # delete everything east of x = 10
    edited = from_edited_polygons(
        baked, vertices, [polygons[k] for k in keep], [areas[k] for k in keep], [regions[k] for k in keep]
    )
    assert_valid_navmesh(edited)
    assert edited.polygon_count == len(keep) < baked.polygon_count
    assert edited.area_xy() == pytest.approx(baked.polygon_areas()[keep].sum())
    walls = edited.neighbors < 0
    assert (
        walls.sum()
        > (baked.neighbors[np.repeat(np.isin(np.arange(baked.polygon_count), keep), baked.polygon_sizes)] < 0).sum()
    )
    np.testing.assert_array_equal(edited.edge_clearance[walls], 0.0)
    query = NavMeshQuery(edited)
    assert query.find_path((2.0, 2.0, 0.0), (18.0, 6.0, 0.0)).status == "unreachable"  # on a deleted polygon
    assert query.find_path((2.0, 2.0, 0.0), (8.0, 6.0, 0.0)).status == "found"


def test_a_raised_corner_moves_only_the_polygons_around_it(baked):
    vertices, polygons, areas, regions = as_blender(baked)
    corner = polygons[0][0]
    vertices = vertices.copy()
    vertices[corner, 2] += 0.3
    edited = from_edited_polygons(baked, vertices, polygons, areas, regions)
    assert_valid_navmesh(edited)
    touched = [p for p, poly in enumerate(polygons) if corner in poly]
    for p in range(edited.polygon_count):
        tris = edited.detail_vertices[edited.detail_triangles[edited.detail_polygons == p]]
        if p in touched:
            assert tris[:, :, 2].max() == pytest.approx(float(baked.vertices[corner, 2]) + 0.3, abs=1e-6)
        else:
            np.testing.assert_array_equal(
                tris, baked.detail_vertices[baked.detail_triangles[baked.detail_polygons == p]]
            )


def test_a_repainted_polygon_keeps_its_shape_and_takes_the_area(baked):
    vertices, polygons, areas, regions = as_blender(baked)
    areas = list(areas)
    areas[3] = 7
    edited = from_edited_polygons(baked, vertices, polygons, areas, regions)
    assert edited.areas[3] == 7 and edited.polygon_count == baked.polygon_count


@pytest.mark.parametrize(
    "edit, message",
    [
        ("fold", "is not convex|is clockwise"),
        ("flip", "is clockwise"),
        ("collapse", "distinct corners"),
        ("duplicate", "two polygons overlap"),
    ],
)
def test_an_edit_that_breaks_the_navmesh_is_named(baked, edit, message):
    vertices, polygons, areas, regions = as_blender(baked)
    polygons = [list(p) for p in polygons]
    big = max(range(len(polygons)), key=lambda p: len(polygons[p]))
    if edit == "fold":  # pull one corner to the middle of its polygon: a dent
        vertices = vertices.copy()
        vertices[polygons[big][1], :2] = vertices[polygons[big], :2].mean(axis=0)
    elif edit == "flip":
        polygons[big] = polygons[big][::-1]
    elif edit == "collapse":
        polygons[big] = polygons[big][:2] + [polygons[big][0]]
    else:
        polygons.append(list(polygons[big]))
        areas, regions = list(areas) + [0], list(regions) + [0]
    with pytest.raises(NavMeshError, match=message):
        from_edited_polygons(baked, vertices, polygons, areas, regions)


def test_deleting_every_polygon_gives_an_empty_navmesh_that_says_why(baked):
    empty = from_edited_polygons(baked, baked.vertices, [], [], [])
    assert empty.is_empty and "deleted by hand" in empty.empty_reason


def test_links_survive_an_edit_elsewhere_and_go_with_the_polygon_they_land_on(baked):
    """Deleting one face anywhere dropped every off-mesh link (7 to 0): a path over a link came back
    partial. Links are kept, snapped onto the edited faces; one whose end lost its polygon is gone."""
    from blender_navmesh.links import LinkSpec, attach_links

    specs = [
        LinkSpec((1.0, 1.0, 0.0), (1.0, 7.0, 0.0), name="west"),
        LinkSpec((19.0, 1.0, 0.0), (19.0, 7.0, 0.0), name="east"),
    ]
    linked = attach_links(baked, specs)
    vertices, polygons, areas, regions = as_blender(linked)
    east = {linked.links[1].start_polygon, linked.links[1].end_polygon}
    keep = [k for k in range(len(polygons)) if k not in east]
    edited = from_edited_polygons(
        linked, vertices, [polygons[k] for k in keep], [areas[k] for k in keep], [regions[k] for k in keep]
    )
    (west,) = edited.links
    assert west.name == "west" and np.allclose(west.start, linked.links[0].start)
    assert keep[west.start_polygon] == linked.links[0].start_polygon
    unedited = from_edited_polygons(linked, vertices, polygons, areas, regions)
    assert [link.name for link in unedited.links] == ["west", "east"]


def test_a_face_duplicated_and_moved_onto_the_floor_is_refused(baked):
    """A face copied (new vertices, as Shift+D makes) and moved 0.5 m overlapped the rest by 34 m²,
    and was taken: the navmesh read 88 m² where the faces cover 55."""
    vertices, polygons, areas, regions = as_blender(baked)
    big = max(range(len(polygons)), key=lambda p: baked.polygon_areas()[p])
    copy = baked.vertices[polygons[big]] + [0.5, 0.0, 0.0]
    start = len(vertices)
    vertices = np.vstack([vertices, copy])
    polygons = [list(p) for p in polygons] + [list(range(start, start + len(copy)))]
    with pytest.raises(NavMeshError, match=rf"polygons {big} and {len(polygons) - 1} overlap on one floor"):
        from_edited_polygons(baked, vertices, polygons, list(areas) + [0], list(regions) + [0])
    raised = vertices.copy()
    raised[start:, 2] += 3.0  # a floor above, beyond a climb step: allowed
    from_edited_polygons(baked, raised, polygons, list(areas) + [0], list(regions) + [0])
