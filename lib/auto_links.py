"""Automatic jump and drop links, generated from the navmesh's ledges at bake time.

Along each boundary edge, every `jump_step` m, the generator looks straight out from the edge for
the nearest floor within `jump_max_distance` (seen from above):
- a floor at most `jump_max_up` above or below is a jump, both ways;
- a floor lower than that, but at most `jump_max_drop` below, is a drop, one way, down.
The landing must be on the navmesh, and the agent's body must clear the level on the way: it moves
out at the higher floor's height, then straight up or down, and those three segments are tested
against the level's triangles at a few heights between a climb step and the agent's height. Links
closer than a step to one already kept (either way round) are dropped, so a ledge gets one link per
step, not one per sample.
"""

from __future__ import annotations

import math

import numpy as np

from .links import LinkSpec
from .navmesh import NavMesh
from .params import BakeParams

# Heights (share of the agent's height, above the climb step) at which the way is tested for geometry.
_BODY_HEIGHTS = (0.25, 0.6, 0.95)
# Slack (m) on the farthest jump distance, so a reach that is a whole number of half cells is tried.
_REACH_SLACK = 1e-9
# A segment whose Möller-Trumbore determinant with a triangle is at most this (m³) runs parallel to
# the triangle's plane: it does not cross it.
_PARALLEL_DET = 1e-12


def jump_links(mesh: NavMesh, triangles: np.ndarray, params: BakeParams) -> list[LinkSpec]:
    """The automatic links for a baked mesh (world coordinates) over the level's triangles (T, 3, 3)."""
    from .query.index import MeshIndex  # the query package builds on the pipeline's NavMesh

    reach, up, drop = float(params.jump_max_distance), float(params.jump_max_up), float(params.jump_max_drop)
    if mesh.is_empty or reach <= 0 or (up <= 0 and drop <= 0):
        return []
    index = MeshIndex(mesh)
    cs, r, climb = float(params.cell_size), float(params.agent_radius), float(params.agent_max_climb)
    found: list[LinkSpec] = []
    for polygon, start, outward in _ledge_samples(mesh, float(params.jump_step)):
        # On the surface, not on the straight edge between the polygon's corners: along a ramp's or
        # a hill's edge the two part by up to the height error (a scaled level's drop started
        # 3.5 m off its floor and was refused).
        start[2] = index.height(polygon, start)
        landing = _landing(index, start, outward, reach, up, drop, climb, cs, r)
        if landing is None:
            continue
        end, both_ways = landing
        if not _clear_way(triangles, start, end, climb, float(params.agent_height)):
            continue
        if any(_same_link(start, end, link, params.jump_step) for link in found):
            continue
        found.append(
            LinkSpec(
                tuple(start.tolist()),
                tuple(end.tolist()),
                both_ways,
                name=f"auto {'jump' if both_ways else 'drop'} {len(found)}",
            )
        )
    return found


def _ledge_samples(mesh: NavMesh, step: float):
    """(polygon, point on its edge, outward unit direction seen from above) every `step` m along
    the boundary edges."""
    boundary = np.flatnonzero(mesh.neighbors < 0)
    a = mesh.vertices[mesh.poly_vertices[boundary]]
    b = mesh.vertices[mesh.edge_next_vertex[boundary]]
    for polygon, p, q in zip(mesh.edge_polygon[boundary].tolist(), a, b):
        length = math.hypot(q[0] - p[0], q[1] - p[1])
        if length <= 0.0:
            continue
        # Polygons are counter-clockwise seen from above: the floor is left of the edge, outside right.
        outward = np.array([q[1] - p[1], p[0] - q[0]]) / length
        count = max(1, int(length // step))
        for k in range(count):
            yield polygon, p + (k + 0.5) / count * (q - p), outward


def _landing(
    index,
    start: np.ndarray,
    outward: np.ndarray,
    reach: float,
    up: float,
    drop: float,
    climb: float,
    cs: float,
    r: float,
):
    """(end point, both ways) of the nearest floor straight out from start within reach, or None.
    Reach is the link's length seen from above, navmesh edge to navmesh edge (the agent's centre
    jumps it): the landing found within half a cell of each probe must lie within it too."""

    def within(hit) -> bool:
        return hit.polygon >= 0 and math.dist(hit.point[:2], start[:2]) <= reach + _REACH_SLACK

    for distance in np.arange(2.0 * r + cs, reach + _REACH_SLACK, cs / 2.0):
        xy = start[:2] + distance * outward
        if up > 0.0:  # a floor about level across a gap, or up or down by a jump
            hit = index.locate((xy[0], xy[1], start[2]), (cs / 2.0, max(up, climb)))
            if within(hit):
                return hit.point, True
        if drop > max(up, climb):  # a floor lower than a jump reaches, not below the drop
            top, bottom = start[2] - max(up, climb), start[2] - drop
            hit = index.locate((xy[0], xy[1], 0.5 * (top + bottom)), (cs / 2.0, 0.5 * (top - bottom)))
            if within(hit):
                return hit.point, False
    return None


def _clear_way(triangles: np.ndarray, start: np.ndarray, end: np.ndarray, climb: float, height: float) -> bool:
    """Does the agent's body get from start to end without passing through the level: out at the
    higher floor's height, then up or down, tested at a few heights of its body?"""
    top = max(start[2], end[2])
    segments = []
    for share in _BODY_HEIGHTS:
        lift = climb + share * (height - climb)
        a, b = np.array([*start[:2], top + lift]), np.array([*end[:2], top + lift])
        segments.append((a, b))
    segments.append((np.array([*start[:2], start[2] + climb]), np.array([*start[:2], top + height])))
    segments.append((np.array([*end[:2], top + height]), np.array([*end[:2], end[2] + climb])))
    return not any(_hits(triangles, a, b) for a, b in segments)


def _hits(triangles: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
    """Does segment a-b cross any triangle (Möller–Trumbore, the triangles near it only)?"""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    near = np.all((triangles.min(axis=1) <= hi) & (triangles.max(axis=1) >= lo), axis=1)
    tri = triangles[near]
    if not len(tri):
        return False
    d = b - a
    e1, e2 = tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    pvec = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, pvec)
    ok = np.abs(det) > _PARALLEL_DET
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    tvec = a - tri[:, 0]
    u = np.einsum("ij,ij->i", tvec, pvec) * inv
    qvec = np.cross(tvec, e1)
    v = (qvec @ d) * inv
    t = np.einsum("ij,ij->i", e2, qvec) * inv
    return bool(np.any(ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0) & (t <= 1)))


def _same_link(start: np.ndarray, end: np.ndarray, link: LinkSpec, step: float) -> bool:
    """Is this link within a step of one already kept, either way round?"""
    near = 0.99 * step
    s, e = np.array(link.start), np.array(link.end)
    return bool(
        (np.linalg.norm(start - s) < near and np.linalg.norm(end - e) < near)
        or (np.linalg.norm(start - e) < near and np.linalg.norm(end - s) < near)
    )
