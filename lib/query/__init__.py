"""Path queries on a baked NavMesh for agents of any radius >= the bake radius (world frame, Z-up)."""
from .batch import BatchResult, find_paths
from .cache import PathCache
from .index import MeshIndex, get_index, locate
from .reach import ReachableSet, reachable
from .search import PathResult, QueryFilter, SlicedSearch, find_path
from .surface import RaycastHit, move_along_surface, random_point, raycast

__all__ = [
    "BatchResult",
    "MeshIndex",
    "PathCache",
    "PathResult",
    "QueryFilter",
    "RaycastHit",
    "ReachableSet",
    "SlicedSearch",
    "find_path",
    "find_paths",
    "get_index",
    "locate",
    "move_along_surface",
    "random_point",
    "raycast",
    "reachable",
]
