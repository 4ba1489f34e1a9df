"""The shortest chain of points whose links pass a visibility test: A* over a lazy visibility graph.

The path's candidate points (start, goal, points around wall corners) are its nodes. A link is
tested (does the segment walk over the mesh and keep clear of the walls?) only when the search
pops it, and each node's cone rules out links that a taut path cannot take there.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

# A bend may turn away from its corner by this much (sine of the angle) before it is pruned.
TURN_TOL = 1e-9
# A link passing this close (m) outside an arc node's cone is taken as on its edge: a start or goal
# cleared onto the band's edge beside a wall lies on the line of the first side of the polygon
# drawn about the wall's corner, within the clearance's rounding, and leaves along that side.
CONE_SLACK = 1e-6
# Cone kinds: a bend point on an arc's polygon (radial direction, cosine of its half-step), and a
# wall corner at d = 0 (the directions of its two walls).
ARC, WEDGE = 0, 1


def shortest_chain(
    nodes: list[tuple], visible, pulls: list | None = None, cones: list | None = None, bound: float = math.inf
) -> list[int] | None:
    """Indices of the shortest chain of nodes from node 0 to node 1 whose links pass `visible(i, j)`,
    by A* with lazy links: a link is tested only when popped, and the heuristic (straight distance
    to the goal) is consistent, so the first accepted pop of a node is its shortest distance.

    pulls: per node, a point (XY) that a shortest path bending there turns toward (its corner), or
    None; links that would turn away from it are not tried (a taut path only wraps obstacles).
    cones: per node, its cone or None: only links along supporting lines of what the node bends
    around are tried (on an arc's polygon, within half a step of the tangent there; at a wall corner,
    leaving both walls on one side).
    bound: only chains shorter than this are looked for. A search accepts few of its nodes, so link
    lengths and cone tests are computed per accepted node, against every node at once."""
    n = len(nodes)
    pulls = pulls if pulls is not None else [None] * n
    xyz = np.array(nodes, dtype=np.float64).reshape(n, 3)
    x, y = xyz[:, 0], xyz[:, 1]
    to_goal = np.linalg.norm(xyz - xyz[1], axis=1)
    cone_rows = _Cones(cones if cones is not None else [None] * n, x, y)
    open_ = np.ones(n, dtype=bool)
    open_[0] = False
    parent = [-1] * n
    done = [False] * n
    heap = [(float(to_goal[0]), 0.0, 0, -1)]
    while heap:
        _, dist, j, i = heapq.heappop(heap)
        if done[j] or (i >= 0 and not visible(i, j)):
            continue
        done[j], parent[j] = True, i
        open_[j] = False
        if j == 1:
            chain = [1]
            while chain[-1] != 0:
                chain.append(parent[chain[-1]])
            return chain[::-1]
        length = np.linalg.norm(xyz - xyz[j], axis=1)
        f = dist + length + to_goal
        ok = open_ & (f < bound)
        kx, ky = x - x[j], y - y[j]
        norm = np.hypot(kx, ky)
        ok &= cone_rows.supporting(j, kx, ky, norm)
        pull = pulls[j] if i >= 0 else None
        if pull is not None:
            ix, iy = x[j] - x[i], y[j] - y[i]
            toward = ix * (pull[1] - y[j]) - iy * (pull[0] - x[j])
            slack = TURN_TOL * math.hypot(ix, iy) * abs(toward)
            ok &= (ix * ky - iy * kx) * toward >= -slack * norm
        nd = dist + length
        for k in np.flatnonzero(ok).tolist():
            heapq.heappush(heap, (float(f[k]), float(nd[k]), k, j))
    return None


class _Cones:
    """The nodes' cones as arrays, for testing one node's links to every node at once. A link's
    direction from node j to node k is (x_k - x_j, y_k - y_j), so each cross product with node k's
    cone splits into a per-node constant, computed once, minus a term in node j's position."""

    def __init__(self, cones: list, x: np.ndarray, y: np.ndarray):
        n = len(cones)
        arc = np.zeros((n, 3))
        arc[:, 2] = -1.0  # a node without an arc cone admits every direction
        wedge = np.zeros((n, 4))
        for k, cone in enumerate(cones):
            if cone is not None:
                if cone[0] == ARC:
                    arc[k] = cone[1:]
                else:
                    wedge[k] = cone[1:]
        self.x, self.y = x, y
        self.arc_l, self.wedge_l = arc.tolist(), wedge.tolist()
        self.has_arc = bool((arc[:, 2] > -1.0).any())
        self.has_wedge = bool(wedge.any())
        self.arc_cx, self.arc_cy = arc[:, 0], arc[:, 1]
        self.arc_at = x * arc[:, 1] - y * arc[:, 0]
        self.arc_min = arc[:, 2] - TURN_TOL
        self.w = wedge.T
        self.wedge_at_a = x * wedge[:, 1] - y * wedge[:, 0]
        self.wedge_at_b = x * wedge[:, 3] - y * wedge[:, 2]
        self.wedge_tol_a = TURN_TOL * np.hypot(wedge[:, 0], wedge[:, 1])
        self.wedge_tol_b = TURN_TOL * np.hypot(wedge[:, 2], wedge[:, 3])

    def supporting(self, j: int, kx: np.ndarray, ky: np.ndarray, norm: np.ndarray) -> np.ndarray:
        """Per node k: is the line from node j to k (direction (kx, ky), length norm) a supporting
        line at both of their cones? The test is the same for either direction along the line."""
        xj, yj = float(self.x[j]), float(self.y[j])
        ok = np.ones(len(kx), dtype=bool)
        if self.has_arc:
            ok &= np.abs(self.arc_at - (xj * self.arc_cy - yj * self.arc_cx)) >= self.arc_min * norm - CONE_SLACK
            cx, cy, cc = self.arc_l[j]
            if cc > -1.0:
                ok &= np.abs(kx * cy - ky * cx) >= (cc - TURN_TOL) * norm - CONE_SLACK
        if self.has_wedge:
            w = self.w
            sa = self.wedge_at_a - (xj * w[1] - yj * w[0])
            sb = self.wedge_at_b - (xj * w[3] - yj * w[2])
            ok &= _leaves_wedge(sa, sb, self.wedge_tol_a * norm, self.wedge_tol_b * norm)
            a0, a1, b0, b1 = self.wedge_l[j]
            if a0 or a1 or b0 or b1:
                sa, sb = kx * a1 - ky * a0, kx * b1 - ky * b0
                ok &= _leaves_wedge(sa, sb, TURN_TOL * math.hypot(a0, a1) * norm, TURN_TOL * math.hypot(b0, b1) * norm)
        return ok


def _leaves_wedge(sa: np.ndarray, sb: np.ndarray, ta: np.ndarray, tb: np.ndarray) -> np.ndarray:
    """A line leaves both walls of a corner on one side (it does not pass between them), given its
    cross products sa, sb with the walls' directions and their tolerances."""
    return ~(((sa > ta) & (sb < -tb)) | ((sa < -ta) & (sb > tb)))
