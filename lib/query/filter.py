"""Query filter, as Detour's dtQueryFilter: per-area costs, excluded areas, polygon flag masks."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import NavMeshError

# Every polygon starts with this flag set (Detour's "walk" flag); include_flags admits it by default.
WALK_FLAG = 1
ALL_FLAGS = 0xFFFF


@dataclass
class QueryFilter:
    """A cost multiplier per area id (default 1), excluded area ids, and polygon flag masks: a polygon
    is passable when its flags share a bit with include_flags and none with exclude_flags (the flags
    themselves live in the NavMeshQuery, set with `set_poly_flags`). Edit it freely between queries:
    each query reads its current state."""

    area_cost: dict[int, float] = field(default_factory=dict)
    excluded: frozenset[int] | set[int] = frozenset()
    include_flags: int = ALL_FLAGS
    exclude_flags: int = 0

    def __post_init__(self) -> None:
        self.key()

    def key(self) -> tuple:
        """The filter's current state as a hashable value (what cached answers are keyed by)."""
        for area, cost in self.area_cost.items():
            if not (math.isfinite(cost) and cost > 0):
                raise NavMeshError(f"area {area} has cost {cost}; costs must be finite and > 0")
        costs = tuple(sorted((int(a), float(c)) for a, c in self.area_cost.items() if float(c) != 1.0))
        return costs, frozenset(int(a) for a in self.excluded), int(self.include_flags), int(self.exclude_flags)

    def cost(self, area: int) -> float:
        return float(self.area_cost.get(int(area), 1.0))

    def min_cost(self) -> float:
        return min([1.0, *self.area_cost.values()])

    def uniform(self) -> bool:
        """All costs 1: the shortest path is the cheapest one."""
        return all(float(c) == 1.0 for c in self.area_cost.values())
