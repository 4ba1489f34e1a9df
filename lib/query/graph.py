"""The polygon graph the searches walk: portal twins, clearances, wall corners, as per-mesh arrays."""

from __future__ import annotations

import math

import numpy as np

from ..navmesh import NavMesh

# Slack when asking whether an agent radius fits a clearance: r fits c when r <= c + FITS_TOL.
FITS_TOL = 1e-9
# A wall corner turning by less than this (sine of the angle) is straight, not a corner paths bend at.
STRAIGHT_TURN = 1e-12


class MeshGraph:
    """Read-only search data derived from one NavMesh, built once per query object."""

    def __init__(self, mesh: NavMesh):
        E = len(mesh.poly_vertices)
        nxt = mesh.edge_next_vertex
        self.twin = mesh.edge_twin
        inf = np.full(E, math.inf)
        self.edge_clear = (
            mesh.edge_clearance if mesh.edge_clearance is not None else np.where(mesh.neighbors >= 0, inf, 0.0)
        )
        self.cross = mesh.cross_clearance if mesh.cross_clearance is not None and len(mesh.cross_clearance) else None
        self.nxt = nxt
        self.sizes = mesh.polygon_sizes
        boundary = mesh.neighbors < 0
        v = mesh.vertices
        corner = np.zeros(len(v), dtype=bool)
        corner[mesh.poly_vertices[boundary]] = True
        corner[nxt[boundary]] = True
        self.corner = corner
        # Reflex wall corners (convex obstacle corners) are the only places a shortest path bends.
        starts, ends = mesh.poly_vertices[boundary], nxt[boundary]
        out_count = np.bincount(starts, minlength=len(v))
        incoming = np.full(len(v), -1)
        outgoing = np.full(len(v), -1)
        incoming[ends] = starts
        outgoing[starts] = ends
        cand = np.flatnonzero(corner & (incoming >= 0) & (outgoing >= 0))
        a, b = v[incoming[cand], :2] - v[cand, :2], v[outgoing[cand], :2] - v[cand, :2]
        turn = -a[:, 0] * b[:, 1] + a[:, 1] * b[:, 0]
        # A wall that doubles back (a U-turn seen from above, where a ramp's side meets the floor
        # above it) is the sharpest reflex corner of all.
        back = (np.abs(turn) <= STRAIGHT_TURN) & (np.einsum("ij,ij->i", a, b) > 0)
        self.reflex = np.zeros(len(v), dtype=bool)
        self.reflex[cand[(turn < -STRAIGHT_TURN) | back]] = True
        self.reflex[out_count > 1] = True
        self.reflex_ids = np.flatnonzero(self.reflex)
        self.reflex_xy = v[self.reflex_ids, :2]
        # The walls on either side of each reflex corner met by one wall loop (XY), -1 elsewhere.
        single = self.reflex & (out_count == 1)
        self.wall_in = np.where(single, incoming, -1)
        self.wall_out = np.where(single, outgoing, -1)
        owner = self.owner = mesh.edge_polygon
        order = np.argsort(mesh.poly_vertices, kind="stable")
        cuts = np.searchsorted(mesh.poly_vertices[order], np.arange(len(v) + 1))
        self.vertex_polys = [owner[order[cuts[i] : cuts[i + 1]]].tolist() for i in range(len(v))]
        # Python lists for the inner loops: indexing numpy arrays per edge costs more than the work.
        self.offs_l = mesh.poly_offsets.tolist()
        self.nb_l = mesh.neighbors.tolist()
        self.areas_l = mesh.areas.tolist()
        self.twin_l = self.twin.tolist()
        self.edge_clear_l = np.asarray(self.edge_clear, dtype=np.float64).tolist()
        self.cross_l = None if self.cross is None else self.cross.tolist()
        self.cross_offsets_l = None if self.cross is None else mesh.cross_offsets.tolist()
        self.reflex_l = self.reflex.tolist()
        self.poly_vertices_l = mesh.poly_vertices.tolist()
        self.nxt_l = nxt.tolist()
        self.owner_l = owner.tolist()
        # Per polygon, the off-mesh link crossings that leave it: (link, forward, from point, to point,
        # to polygon), a bidirectional link listed from both ends.
        self.links_from: dict[int, list[tuple[int, bool, tuple, tuple, int]]] = {}
        for k, link in enumerate(mesh.links):
            self.links_from.setdefault(link.start_polygon, []).append((k, True, link.start, link.end, link.end_polygon))
            if link.bidirectional:
                self.links_from.setdefault(link.end_polygon, []).append(
                    (k, False, link.end, link.start, link.start_polygon)
                )

    def cross_ok(self, p: int, i: int, j: int, r: float) -> bool:
        """Can an agent of radius r enter polygon p by its edge i and leave by edge j?"""
        if self.cross_l is None or self.cross_offsets_l is None or i < 0:
            return True
        n = int(self.sizes[p])
        return self.cross_l[self.cross_offsets_l[p] + i * n + j] >= r - FITS_TOL
