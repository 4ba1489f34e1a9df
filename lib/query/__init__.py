"""Path queries on a baked NavMesh for agents of any radius >= the bake radius (world frame, Z-up).

In a game loop or any code that queries one mesh repeatedly, make one `NavMeshQuery(mesh)` and call
its methods: it keeps the spatial index, the search graph and the caches. The functions here are
for one-off use: each accepts a NavMesh (and builds a throwaway query) or a NavMeshQuery.
"""

from __future__ import annotations

from . import batch
from .batch import BatchResult
from .filter import QueryFilter
from .index import Location
from .navmesh_query import NavMeshQuery, PathResult, default_extent
from .reach import ReachableSet
from .search import SlicedSearch
from .surface import RaycastHit


def _query(mesh_or_query) -> NavMeshQuery:
    return mesh_or_query if isinstance(mesh_or_query, NavMeshQuery) else NavMeshQuery(mesh_or_query)


def find_path(mesh, start, goal, radius: float | None = None, filter: QueryFilter | None = None) -> PathResult:
    """NavMeshQuery.find_path, once."""
    return _query(mesh).find_path(start, goal, radius, filter)


def find_paths(mesh, starts, goals, radius=None, filter: QueryFilter | None = None) -> BatchResult:
    """Many start -> goal queries sharing one query object and its path cache."""
    return batch.find_paths(_query(mesh), starts, goals, radius, filter)


def locate(mesh, point, extent: tuple[float, float] | None = None) -> Location:
    """NavMeshQuery.locate, once."""
    return _query(mesh).locate(point, extent)


def reachable(mesh, start, radius: float | None = None, filter: QueryFilter | None = None) -> ReachableSet:
    """NavMeshQuery.reachable, once."""
    return _query(mesh).reachable(start, radius, filter)


def raycast(mesh, start, end, filter: QueryFilter | None = None) -> RaycastHit:
    """NavMeshQuery.raycast, once."""
    return _query(mesh).raycast(start, end, filter)


def move_along_surface(mesh, start, target, filter: QueryFilter | None = None):
    """NavMeshQuery.move_along_surface, once."""
    return _query(mesh).move_along_surface(start, target, filter)


def random_point(mesh, rng=None, filter: QueryFilter | None = None):
    """NavMeshQuery.random_point, once."""
    return _query(mesh).random_point(rng, filter)


__all__ = [
    "BatchResult",
    "Location",
    "NavMeshQuery",
    "PathResult",
    "QueryFilter",
    "RaycastHit",
    "ReachableSet",
    "SlicedSearch",
    "default_extent",
    "find_path",
    "find_paths",
    "locate",
    "move_along_surface",
    "random_point",
    "raycast",
    "reachable",
]
