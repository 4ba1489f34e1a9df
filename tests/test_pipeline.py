"""The bake as a chain of stages, as Recast's rcRasterize -> rcBuildPolyMeshDetail: each stage's
result is its own immutable value, and `generate` assembles the NavMesh from them once."""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest

from blender_navmesh import BakeParams, generate
from blender_navmesh.clearance import compute_clearance
from blender_navmesh.contours import build_contours
from blender_navmesh.detail import build_detail
from blender_navmesh.heightfield import build_heightfield
from blender_navmesh.navmesh import Clearance, DetailMesh, NavMesh, PolyMesh
from blender_navmesh.polygons import build_polygons
from blender_navmesh.regions import build_regions
from blender_navmesh.soup import prepare_soup
from levels import Scene

PARAMS = BakeParams(cell_size=0.2, agent_radius=0.3, max_edge_error=0.26, max_height_error=0.1)


def ramp_and_pillar() -> Scene:
    """A floor with a pillar and a ramp up to a landing 1 m higher, 40 m from the origin (the bake
    works near the origin and the navmesh comes back in place)."""
    scene = Scene().floor(40, 40, 52, 48)
    scene.box((44, 44, -0.5), (1.0, 1.0, 3.0), 20.0)
    scene.add(
        np.array([[46, 40, 0], [50, 40, 1.0], [50, 43, 1.0], [46, 43, 0]], float),
        np.array([[0, 1, 2], [0, 2, 3]]),
    )
    return scene


def read_only(value) -> bool:
    return all(
        not getattr(value, f.name).flags.writeable
        for f in fields(value)
        if isinstance(getattr(value, f.name), np.ndarray)
    )


def test_each_stage_gives_its_own_read_only_value_and_the_bake_is_their_one_assembly():
    scene = ramp_and_pillar()
    soup = prepare_soup(scene.vertices, scene.triangles, scene.walkable)
    hf = build_heightfield(soup, PARAMS)
    regions = build_regions(hf, PARAMS)
    polys = build_polygons(build_contours(hf, regions, PARAMS), PARAMS)
    surface = build_detail(polys, hf, PARAMS, regions.region)
    clear = compute_clearance(replace(polys, vertices=surface.corners))

    assert type(polys) is PolyMesh and type(surface) is DetailMesh and type(clear) is Clearance
    assert read_only(polys) and read_only(surface) and read_only(clear)
    assert len(surface.corners) == len(polys.vertices) and len(clear.edge) == len(polys.poly_vertices)
    # The detail stage moves corners onto their floor, never across it.
    assert np.array_equal(surface.corners[:, :2], polys.vertices[:, :2])
    assert np.abs(surface.corners[:, 2] - polys.vertices[:, 2]).max() > 0.0  # the ramp's corners rise

    mesh = NavMesh.assemble(polys, surface, clear, origin=soup.origin)
    baked = generate(scene.vertices, scene.triangles, PARAMS, walkable=scene.walkable)
    for f in fields(NavMesh):
        mine, theirs = getattr(mesh, f.name), getattr(baked, f.name)
        if isinstance(mine, np.ndarray):
            assert np.array_equal(mine, theirs), f.name
        else:
            assert mine == theirs, f.name
    assert read_only(baked)
    assert baked.vertices[:, :2].min() == pytest.approx(40.0 + PARAMS.agent_radius, abs=PARAMS.cell_size)


def test_an_assembled_navmesh_cannot_be_changed():
    scene = ramp_and_pillar()
    mesh = generate(scene.vertices, scene.triangles, PARAMS)
    with pytest.raises(ValueError):
        mesh.vertices[0, 0] = 1.0
    with pytest.raises(AttributeError):
        mesh.links = ()  # type: ignore[misc]
