"""Surface queries on a NavMeshQuery: raycast, move along the surface with wall sliding, random points."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import NavMeshError
from ..geometry import NONZERO_DIVISOR, point_segment_xy
from .filter import QueryFilter
from .index import query_point
from .walk import walk_segment

# The search circle of move_along_surface reaches this far (m) beyond start and target, so polygons
# that only touch it are searched.
REACH_SLACK = 1e-3


@dataclass(frozen=True)
class RaycastHit:
    """t in [0, 1] where the ray hit a wall (inf if it reached the end); the point, the wall's normal
    facing back along the ray (XY) and the polygons visited."""

    t: float
    point: np.ndarray
    normal: np.ndarray
    polygons: list


def raycast(query, start, end, filter: QueryFilter | None = None) -> RaycastHit:
    """Walk the segment start -> end (XY) over the polygon graph from the polygon under start, as
    Detour's raycast; walls and polygons the filter excludes stop it."""
    f = query.filter_for(filter)
    loc = query.located(start, "raycast start")
    e3 = np.array(query_point(end, "raycast end"))
    passable = query.passable(f)
    t, edge, visited = walk_segment(query.index, loc.polygon, loc.point, e3, passable.__getitem__)
    if edge < 0:
        xy = e3[:2]
        return RaycastHit(math.inf, np.array([xy[0], xy[1], query.index.height(visited[-1], xy)]), np.zeros(3), visited)
    s = loc.point
    t = min(max(t, 0.0), 1.0)  # a hit at the start computed a rounding error before it is at t = 0
    xy = s[:2] + t * (e3[:2] - s[:2])
    w = query.index.edge_b[edge, :2] - query.index.edge_a[edge, :2]
    n = np.array([-w[1], w[0], 0.0]) / max(float(np.linalg.norm(w)), NONZERO_DIVISOR)
    return RaycastHit(t, np.array([xy[0], xy[1], query.index.height(visited[-1], xy)]), n, visited)


def move_along_surface(query, start, target, filter: QueryFilter | None = None) -> tuple[np.ndarray, list[int]]:
    """Move from start toward target staying on the mesh; blocked moves slide along walls
    (Detour's moveAlongSurface): the reachable point nearest the target within the circle
    through start and target, and the polygons from start to it."""
    f = query.filter_for(filter)
    loc = query.located(start, "move start")
    passable = query.passable(f)
    tgt = query_point(target, "move target")
    s = tuple(loc.point.tolist())
    cx, cy = 0.5 * (s[0] + tgt[0]), 0.5 * (s[1] + tgt[1])
    reach = 0.5 * math.hypot(tgt[0] - s[0], tgt[1] - s[1]) + REACH_SLACK
    offs, nb, ex = query.index.walk_lists()
    best_pt, best_d, best_poly = np.array(s), math.inf, loc.polygon
    parent = {loc.polygon: -1}
    queue = [loc.polygon]
    for p in queue:
        if query.index.inside_xy(p, tgt):
            best_pt, best_poly = np.array([tgt[0], tgt[1], query.index.height(p, tgt)]), p
            break
        for e in range(offs[p], offs[p + 1]):
            q = nb[e]
            ax, ay, ux, uy = ex[e]
            if q < 0 or not passable[q]:
                dist, wx, wy = point_segment_xy(tgt[0], tgt[1], ax, ay, ux, uy)
                if dist < best_d:
                    # The surface's height there, not the edge's: the detail surface leaves the
                    # straight line between its corners where the polygon joins a ramp and a floor.
                    best_pt, best_d, best_poly = np.array([wx, wy, query.index.height(p, (wx, wy))]), dist, p
            elif q not in parent and point_segment_xy(cx, cy, ax, ay, ux, uy)[0] <= reach:
                parent[q] = p
                queue.append(q)
    path = [best_poly]
    while parent[path[-1]] != -1:
        path.append(parent[path[-1]])
    return best_pt, path[::-1]


def random_point(
    query, rng: np.random.Generator | None = None, filter: QueryFilter | None = None
) -> tuple[int, np.ndarray]:
    """A uniformly random point (by area seen from above) on the polygons the filter allows."""
    f = query.filter_for(filter)
    try:
        rng = np.random.default_rng(rng)  # a Generator as it is, a seed, or None
    except (TypeError, ValueError):
        raise NavMeshError(f"rng must be a numpy Generator or a seed, got {rng!r}") from None
    weights = np.where(query.passable(f), np.maximum(query.index.area, 0.0), 0.0)
    total = weights.sum()
    if total <= 0:
        raise NavMeshError("no walkable polygon passes the filter; cannot pick a random point")
    p = int(rng.choice(len(weights), p=weights / total))
    verts = query.mesh.vertices[query.mesh.polygon(p)][:, :2]
    a, b, c = verts[0], verts[1:-1], verts[2:]
    tri = 0.5 * np.abs((b[:, 0] - a[0]) * (c[:, 1] - a[1]) - (b[:, 1] - a[1]) * (c[:, 0] - a[0]))
    k = int(rng.choice(len(tri), p=tri / tri.sum()))
    u, v = rng.random(2)
    if u + v > 1:
        u, v = 1 - u, 1 - v
    xy = a + u * (b[k] - a) + v * (c[k] - a)
    return p, np.array([xy[0], xy[1], query.index.height(p, xy)])
