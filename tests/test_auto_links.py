"""Automatic jump and drop links (issue 15 item 3), known-answer scenes: a ledge above a floor gets
drops down, a gap between platforms gets jumps both ways, and a gap too wide, a drop too high or a
wall in the way gets none."""

from __future__ import annotations

import math

import pytest

from blender_navmesh import BakeParams, generate
from blender_navmesh.query import NavMeshQuery
from levels import Scene

BASE = dict(cell_size=0.2, agent_radius=0.3, agent_height=1.8, agent_max_climb=0.4)
JUMPS = BakeParams(**BASE, jump_max_distance=3.0, jump_max_up=0.6, jump_max_drop=3.0, jump_step=1.5)


def bake(scene: Scene, params: BakeParams = JUMPS):
    return generate(scene.vertices, scene.triangles, params)


def gap(width: float, rise: float = 0.0) -> Scene:
    """Two 6 x 4 m platforms side by side along x, `width` apart, the east one `rise` higher."""
    return Scene().floor(0, 0, 6, 4).floor(6 + width, 0, 12 + width, 4, z=rise)


def test_without_jump_settings_there_are_no_automatic_links():
    assert bake(gap(1.0), BakeParams(**BASE)).links == ()


def test_a_gap_between_platforms_gets_jumps_both_ways_along_it():
    mesh = bake(gap(1.0))
    assert mesh.links and all(link.bidirectional for link in mesh.links)
    # Along the 4 m gap (3.4 m of ledge after erosion), one link per 1.5 m step, not one per sample.
    assert 1 <= len(mesh.links) <= 3
    query = NavMeshQuery(mesh)
    for start, goal in (((1.0, 2.0, 0.0), (12.0, 2.0, 0.0)), ((12.0, 2.0, 0.0), (1.0, 2.0, 0.0))):
        path = query.find_path(start, goal)
        assert path.status == "found" and len(path.links) == 1


@pytest.mark.parametrize("reach", [1.5, 1.55, 1.6, 1.7, 2.0])
def test_jump_max_distance_is_the_links_length_seen_from_above(reach):
    """A link runs from navmesh edge to navmesh edge: across a 1 m gap at radius 0.3 it is 1.6 m
    long. A reach of 1.5 made such 1.6 m links (the landing was found within half a cell of a probe
    inside the reach); now no link is longer than the reach, and one of at least 1.6 m makes them."""
    params = BakeParams(**BASE, jump_max_distance=reach, jump_max_up=0.6, jump_step=1.5)
    lengths = [math.dist(link.start[:2], link.end[:2]) for link in bake(gap(1.0), params).links]
    assert all(length <= reach + 1e-9 for length in lengths)
    assert bool(lengths) == (reach >= 1.6)
    assert lengths == pytest.approx([1.6] * len(lengths))


def test_a_ledge_above_a_floor_gets_drops_down_only():
    scene = Scene().floor(0, 0, 12, 6).box((3.0, 3.0, 0.0), (4.0, 4.0, 2.0))  # a 2 m high block on the floor
    mesh = bake(scene)
    drops = [link for link in mesh.links if not link.bidirectional]
    assert drops and all(link.start[2] == pytest.approx(2.0) and link.end[2] == pytest.approx(0.0) for link in drops)
    query = NavMeshQuery(mesh)
    assert query.find_path((3.0, 3.0, 2.0), (10.0, 3.0, 0.0)).status == "found"  # off the block
    assert query.find_path((10.0, 3.0, 0.0), (3.0, 3.0, 2.0)).status == "partial"  # but not back up


@pytest.mark.parametrize(
    "scene, why",
    [
        (gap(3.5), "a gap wider than the jump distance"),
        (gap(1.0, rise=1.5), "a rise higher than a jump, a drop the other way round is fine"),
        (Scene().floor(0, 0, 12, 6).box((3.0, 3.0, 0.0), (4.0, 4.0, 4.0)), "a drop higher than the max drop"),
        (gap(1.0).box((7.0, 2.0, -1.0), (0.4, 6.0, 4.0)), "a wall in the gap"),
    ],
)
def test_no_link_where_the_agent_cannot_go(scene, why):
    mesh = bake(scene)
    if "rise" in why:
        assert mesh.links and all(not link.bidirectional and link.start[2] > link.end[2] for link in mesh.links), why
    else:
        assert mesh.links == (), why
