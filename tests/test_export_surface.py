"""The detail surface as the engine exports lay it out: per-polygon vertices with corner labels, no
degenerate triangles, and convex faces that keep a polygon whole only when its detail is a corner fan."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from blender_navmesh.export_surface import convex_pieces, corner_fans, export_surface, welded
from tests.fixtures.io import navmeshes


def _xy_areas(vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    a, b, c = (vertices[triangles[:, k], :2] for k in range(3))
    return 0.5 * np.cross(b - a, c - a)


def test_vertices_are_copied_per_polygon_and_corners_are_labelled():
    mesh = navmeshes.mixed()  # its detail triangles share vertices between polygons
    surface = export_surface(mesh)
    np.testing.assert_array_equal(
        surface.vertex_polygon[surface.triangles], np.repeat(surface.triangle_polygon[:, None], 3, 1)
    )
    np.testing.assert_array_equal(surface.vertex_polygon[surface.corner_vertex], mesh.edge_polygon)
    np.testing.assert_array_equal(
        surface.vertex_corner[surface.corner_vertex],
        np.arange(len(mesh.poly_vertices)) - mesh.poly_offsets[mesh.edge_polygon],
    )
    np.testing.assert_array_equal(surface.vertices[surface.corner_vertex, :2], mesh.vertices[mesh.poly_vertices, :2])
    np.testing.assert_array_equal(
        surface.vertices[surface.corner_vertex, 2],
        mesh.detail_vertices[mesh.poly_vertices, 2],
        err_msg="corner heights are the detail surface's",
    )
    assert _xy_areas(surface.vertices, surface.triangles).sum() == pytest.approx(mesh.area_xy())


def test_triangles_without_area_are_dropped_and_their_corners_kept():
    mesh = navmeshes.l_corridor()
    # Polygon 0 as one real triangle and a collinear sliver: corner 3 is used by the sliver only.
    quad_triangles = np.array([[0, 1, 2], [0, 3, 3]])
    rest = mesh.detail_triangles[mesh.detail_polygons != 0]
    mesh = replace(
        mesh,
        detail_triangles=np.vstack([quad_triangles, rest]),
        detail_polygons=np.concatenate([[0, 0], mesh.detail_polygons[mesh.detail_polygons != 0]]),
    )
    surface = export_surface(mesh)
    assert len(surface.triangles) == len(mesh.detail_triangles) - 1
    assert _xy_areas(surface.vertices, surface.triangles).min() > 0
    corner = surface.corner_vertex[mesh.poly_offsets[0] + 3]
    np.testing.assert_array_equal(surface.vertices[corner], mesh.vertices[3])
    assert corner not in surface.triangles, "kept for the polygon's outline though no triangle uses it"


def test_a_mesh_without_detail_gets_corner_fans_that_avoid_straight_corners():
    # A square with an extra corner halfway along its bottom edge: fanning from a neighbour of that
    # straight corner would start with a zero-area triangle.
    mesh = navmeshes.from_polygons([(0, 0, 0), (1, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0)], [[0, 1, 2, 3, 4]])
    mesh = replace(
        mesh,
        detail_vertices=np.zeros((0, 3)),
        detail_triangles=np.zeros((0, 3), dtype=np.int64),
        detail_polygons=np.zeros(0, dtype=np.int64),
    )
    triangles, owners = corner_fans(mesh)
    assert len(triangles) == 3 and np.all(owners == 0)
    assert _xy_areas(mesh.vertices, triangles).min() > 0.5
    surface = export_surface(mesh)
    assert _xy_areas(surface.vertices, surface.triangles).sum() == pytest.approx(4.0)


def test_convex_pieces_keep_a_corner_fan_whole_from_its_apex_and_split_anything_else():
    mesh = navmeshes.l_corridor()
    detail = mesh.detail_vertices
    # Polygon 0 (corners 0, 1, 2, 3): the fan from corner 1. Polygon 2: a point raised in its middle.
    centre = len(detail)
    detail = np.vstack([detail, [(9.0, 6.0, 0.8)]])
    tris = [[1, 2, 3], [1, 3, 0], [1, 4, 5], [1, 5, 2]] + [[a, b, centre] for a, b in ((2, 5), (5, 6), (6, 7), (7, 2))]
    mesh = replace(
        mesh,
        detail_vertices=detail,
        detail_triangles=np.array(tris),
        detail_polygons=np.array([0, 0, 1, 1, 2, 2, 2, 2]),
    )
    surface = export_surface(mesh)
    offsets, faces, face_polygons = convex_pieces(mesh, surface)
    np.testing.assert_array_equal(face_polygons, [0, 1, 2, 2, 2, 2])
    np.testing.assert_array_equal(np.diff(offsets), [4, 4, 3, 3, 3, 3])
    first = surface.vertices[faces[:4]]
    np.testing.assert_array_equal(first[:, :2], mesh.vertices[[1, 2, 3, 0], :2], err_msg="starts at the fan's apex")
    pieces = [faces[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
    areas = [
        _xy_areas(surface.vertices, np.array([[p[0], p[k], p[k + 1]] for k in range(1, len(p) - 1)])) for p in pieces
    ]
    assert min(a.min() for a in areas) > 0, "every face counter-clockwise seen from +Z"


def test_welding_merges_copies_at_the_same_position():
    vertices = np.array([[0.0, 0, 0], [1, 0, 0], [0, 0, 0], [1, 0, 0.5]])
    unique, index = welded(vertices)
    assert len(unique) == 3 and index[0] == index[2] and len(set(index.tolist())) == 3
    np.testing.assert_array_equal(unique[index], vertices)
