"""The invariant checks the generator tests rely on, on meshes built by hand."""

from __future__ import annotations

import numpy as np
import pytest

from blender_navmesh.navmesh import NavMesh
from blender_navmesh.params import BakeParams
from tests.navmesh_checks import assert_no_t_junctions


def mesh_of(polygons: list[list[tuple[float, float]]]) -> NavMesh:
    """Polygons (counter-clockwise, z = 0) with vertices welded by position and no neighbours."""
    index: dict[tuple[float, float], int] = {}
    flat = [index.setdefault(p, len(index)) for poly in polygons for p in poly]
    vertices = np.array([(x, y, 0.0) for x, y in index], dtype=np.float64)
    sizes = [len(poly) for poly in polygons]
    return NavMesh(
        vertices=vertices,
        poly_offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        poly_vertices=np.array(flat, dtype=np.int64),
        neighbors=np.full(len(flat), -1, dtype=np.int64),
        regions=np.arange(len(polygons), dtype=np.int64),
        areas=np.zeros(len(polygons), dtype=np.int64),
        params=BakeParams(),
    )


SQUARE = [(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0)]


def test_edge_along_part_of_another_edge_is_a_t_junction():
    beside = [(2.0, 0.0), (4.0, 0.0), (4.0, 1.0), (2.0, 1.0)]  # its edge (2, 1) -> (2, 0) runs along the square's
    with pytest.raises(AssertionError, match="T-junction"):
        assert_no_t_junctions(mesh_of([SQUARE, beside]))


def test_corner_touching_a_wall_at_one_point_is_not():
    """Two regions pinching together: a corner rests on the other's wall edge, nothing is shared."""
    wedge = [(2.0, 1.0), (4.0, 0.0), (4.0, 2.0)]
    assert_no_t_junctions(mesh_of([SQUARE, wedge]))


def test_a_polygon_far_from_the_origin_has_its_area():
    """10 cm squares 10,000 km out: their shoelace area in world coordinates was lost to rounding."""
    from dataclasses import replace

    from tests.navmesh_checks import assert_valid_navmesh
    from tests.test_query_scenes import grid_mesh

    mesh = grid_mesh((0.0, 0.0, 1.0, 1.0), [], step=0.1)
    assert_valid_navmesh(replace(mesh, vertices=mesh.vertices + [1e7, 1e7, 0.0]))
