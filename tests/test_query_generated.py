"""End-to-end: bake with lib.generate at radius r0, then query for larger radii."""

import numpy as np
from shapely.geometry import LineString, Point, Polygon
from shapely.ops import unary_union

from blender_navmesh import BakeParams, generate
from blender_navmesh.query import find_path, random_point
from levels import Scene, rotated_boxes_scene

R0 = 0.3


def _bake(scene, r):
    return generate(scene.vertices, scene.triangles, BakeParams(agent_radius=r, cell_size=0.1))


def test_generated_doorway_admits_only_agents_narrower_than_the_door():
    # A 1.6 m door in a 0.4 m thick wall at x = 6.
    scene = Scene().floor(0, 0, 12, 8).wall(6, 0, 6, 3.2, 2, 0.4).wall(6, 4.8, 6, 8, 2, 0.4)
    mesh = _bake(scene, R0)
    start, goal = [2.0, 4.0, 0.0], [10.0, 4.0, 0.0]
    assert find_path(mesh, start, goal).status == "found"
    assert find_path(mesh, start, goal, radius=0.7).status == "found"
    assert find_path(mesh, start, goal, radius=0.9).status != "found"


def _floor_outline(mesh):
    polys = [
        Polygon(mesh.vertices[mesh.polygon(p)][:, :2])
        for p in range(mesh.polygon_count)
        if mesh.vertices[mesh.polygon(p)][:, 2].max() < 0.5
    ]
    return unary_union(polys)


def test_generated_paths_keep_clear_of_the_mesh_walls_and_agree_with_a_separate_bake():
    """Paths for r on the r0 bake stay r - r0 inside the baked floor outline; reachability matches a bake at r."""
    scene, _ = rotated_boxes_scene(5)
    r = 0.6
    base, wide = _bake(scene, R0), _bake(scene, r)
    inner = _floor_outline(base).buffer(-(r - R0) + 1e-6)
    rng = np.random.default_rng(0)
    agree = total = 0
    for _ in range(60):
        s = random_point(base, rng)[1]
        g = random_point(base, rng)[1]
        if s[2] > 0.5 or g[2] > 0.5:
            continue  # box tops are separate islands
        ours = find_path(base, s, g, radius=r)
        theirs = find_path(wide, s, g)
        total += 1
        agree += (ours.status == "found") == (theirs.status == "found")
        if ours.status == "found" and inner.covers(Point(s[:2])) and inner.covers(Point(g[:2])):
            assert inner.buffer(1e-6).covers(LineString(ours.points[:, :2]))
    assert total >= 30
    assert agree / total >= 0.98
