"""Islands of a navmesh, and pruning it to the islands that walkable seeds stand on.

An island is a set of polygons joined through portals. Spawn points and key spots that land on an
unreachable island (the top of a crate, a ledge no stair leads to) are a classic navmesh bug;
seeds placed where agents must be able to go keep only the islands they stand on (Recast demo's
"prune tool", recastnavigation#340).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .errors import InputError, NavMeshError
from .navmesh import NavMesh


@dataclass(frozen=True)
class Island:
    """One island: its label (smallest polygon id), polygon count and area seen from above (m²)."""

    label: int
    polygons: int
    area: float


def islands(mesh: NavMesh) -> list[Island]:
    """Every island of the mesh, largest first."""
    if mesh.is_empty:
        return []
    label = mesh.islands()
    ids, inverse, counts = np.unique(label, return_inverse=True, return_counts=True)
    area = np.bincount(inverse, weights=mesh.polygon_areas(), minlength=len(ids))
    found = [Island(int(i), int(c), float(a)) for i, c, a in zip(ids, counts, area)]
    return sorted(found, key=lambda island: -island.area)


def keep_seeded(mesh: NavMesh, seeds, names=None) -> NavMesh:
    """The mesh with only the islands a seed stands on (each seed located as a path query's start,
    within the default search extent). InputError (a NavMeshError) naming a seed that is on no polygon (by its
    entry in `names` when given, else by its number)."""
    from .query.index import MeshIndex  # the query package builds on the pipeline, not the other way
    from .query.navmesh_query import default_extent

    seeds = np.asarray(seeds, dtype=np.float64).reshape(-1, 3)
    if mesh.is_empty or not len(seeds):
        return mesh
    index, extent = MeshIndex(mesh), default_extent(mesh)
    label = mesh.islands()
    kept = set()
    for k, seed in enumerate(seeds):
        where = index.locate(seed, extent)
        if where.polygon < 0:
            name = repr(names[k]) if names is not None else str(k + 1)
            raise InputError(
                f"walkable seed {name} at ({seed[0]:.3g}, {seed[1]:.3g}, {seed[2]:.3g}) is "
                f"{where.distance:.3g} m from the navmesh: move it onto a floor agents walk on"
            )
        kept.add(int(label[where.polygon]))
    return select_polygons(mesh, np.isin(label, sorted(kept)))


def select_polygons(mesh: NavMesh, keep: np.ndarray) -> NavMesh:
    """The mesh with the polygons where keep is True, renumbered in order, with their vertices,
    detail triangles and clearances. Every neighbour of a kept polygon must be kept (whole islands)."""
    keep = np.asarray(keep, dtype=bool)
    if keep.all():
        return mesh
    new_id = np.cumsum(keep) - 1
    slot_keep = np.repeat(keep, mesh.polygon_sizes)
    neighbors = mesh.neighbors[slot_keep]
    if (neighbors >= 0).any() and not keep[neighbors[neighbors >= 0]].all():
        raise NavMeshError("select_polygons keeps whole islands only: a kept polygon's neighbour was dropped")
    used = np.zeros(len(mesh.vertices), dtype=bool)
    used[mesh.poly_vertices[slot_keep]] = True
    vertex_id = np.cumsum(used) - 1
    detail_keep = keep[mesh.detail_polygons] if len(mesh.detail_polygons) else np.zeros(0, dtype=bool)
    detail_used = np.zeros(len(mesh.detail_vertices), dtype=bool)
    detail_used[mesh.detail_triangles[detail_keep].ravel()] = True
    detail_id = np.cumsum(detail_used) - 1
    links = tuple(
        replace(link, start_polygon=int(new_id[link.start_polygon]), end_polygon=int(new_id[link.end_polygon]))
        for link in mesh.links
        if keep[link.start_polygon] and keep[link.end_polygon]
    )
    cross = mesh.cross_clearance
    if cross is not None:
        block_keep = np.repeat(keep, mesh.polygon_sizes**2)
        cross = cross[block_keep]
    return replace(
        mesh,
        vertices=mesh.vertices[used],
        poly_offsets=np.concatenate([[0], np.cumsum(mesh.polygon_sizes[keep])]).astype(np.int64),
        poly_vertices=vertex_id[mesh.poly_vertices[slot_keep]],
        neighbors=np.where(neighbors >= 0, new_id[np.maximum(neighbors, 0)], -1),
        regions=mesh.regions[keep],
        areas=mesh.areas[keep],
        detail_vertices=mesh.detail_vertices[detail_used],
        detail_triangles=detail_id[mesh.detail_triangles[detail_keep]],
        detail_polygons=new_id[mesh.detail_polygons[detail_keep]],
        edge_clearance=None if mesh.edge_clearance is None else mesh.edge_clearance[slot_keep],
        cross_clearance=cross,
        links=links,
    )
