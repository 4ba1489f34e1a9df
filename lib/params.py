"""Bake parameters, named and meant as in Recast, in meters and degrees (world Z-up)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from .errors import NavMeshError


@dataclass(frozen=True)
class BakeParams:
    """What a navmesh is baked with.

    cell_size / cell_height: voxel size across / up. Smaller is more accurate and slower.
    agent_radius: erosion from walls, ledges and obstacles; honoured exactly, not rounded to cells.
    agent_height: free space needed above a floor.
    agent_max_climb: the largest step up or down between neighbouring floor points.
    agent_max_slope: steepest walkable surface, in degrees.
    region_min_area: islands whose navmesh would cover less than this (m², seen from above) are dropped.
    max_verts_per_poly: at most this many vertices per polygon (Detour's limit is 6).
    max_edge_error: how far a simplified outline may deviate from the voxel outline (m).
    max_height_error: how far the detail surface may deviate from the real floor (m).
    """

    cell_size: float = 0.2
    cell_height: float = 0.1
    agent_radius: float = 0.5
    agent_height: float = 2.0
    agent_max_climb: float = 0.5
    agent_max_slope: float = 45.0
    region_min_area: float = 1.0
    max_verts_per_poly: int = 6
    max_edge_error: float = 0.2
    max_height_error: float = 0.2

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise NavMeshError(f"parameter {f.name} must be a finite number, got {value!r}")
        positive = ("cell_size", "cell_height", "agent_height", "max_edge_error", "max_height_error")
        for name in positive:
            if getattr(self, name) <= 0:
                raise NavMeshError(f"parameter {name} must be greater than 0, got {getattr(self, name)}")
        for name in ("agent_radius", "agent_max_climb", "region_min_area"):
            if getattr(self, name) < 0:
                raise NavMeshError(f"parameter {name} must not be negative, got {getattr(self, name)}")
        if not 0 <= self.agent_max_slope < 90:
            raise NavMeshError(f"parameter agent_max_slope must be in [0, 90) degrees, got {self.agent_max_slope}")
        if int(self.max_verts_per_poly) != self.max_verts_per_poly or not 3 <= self.max_verts_per_poly <= 32:
            raise NavMeshError(f"parameter max_verts_per_poly must be a whole number from 3 to 32, got {self.max_verts_per_poly}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "BakeParams":
        """Build from a dict; unknown keys are an error so typos do not pass silently."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise NavMeshError(f"unknown bake parameter(s): {', '.join(unknown)}")
        return cls(**data)
