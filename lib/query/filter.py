"""Query filter, as Detour's dtQueryFilter: per-area costs, excluded areas, polygon flag masks."""

from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass, field

from ..errors import NavMeshError
from ..navmesh.reading import MAX_AREA

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
        """The filter's current state as a hashable value (what cached answers are keyed by);
        NavMeshError naming what is not a valid setting."""
        try:
            costs = {operator.index(a): c for a, c in self.area_cost.items()}
        except (AttributeError, TypeError, ValueError):
            raise NavMeshError(f"area_cost must map area ids to numbers, got {self.area_cost!r}") from None
        for area, cost in costs.items():
            # A real number, not a string float() would parse nor a bool (True is no cost of 1).
            if not isinstance(cost, numbers.Real) or isinstance(cost, bool):
                raise NavMeshError(
                    f"area_cost must map area ids to numbers, got {cost!r} for area {area} in {self.area_cost!r}"
                )
        costs = {a: float(c) for a, c in costs.items()}
        for area, cost in costs.items():
            if not (math.isfinite(cost) and cost > 0):
                raise NavMeshError(f"area {area} has cost {cost}; costs must be finite and > 0")
        try:
            excluded = frozenset(operator.index(a) for a in self.excluded)
        except TypeError:
            raise NavMeshError(f"excluded must be area ids, got {self.excluded!r}") from None
        # An id no navmesh can hold is a typo that would never exclude or price anything.
        for name, ids in (("area_cost", costs), ("excluded", excluded)):
            wrong = sorted(a for a in ids if not 0 <= a <= MAX_AREA)
            if wrong:
                raise NavMeshError(f"{name} names area {wrong[0]}; area ids are 0 to {MAX_AREA}")
        return (
            tuple(sorted((a, c) for a, c in costs.items() if c != 1.0)),
            excluded,
            check_flags(self.include_flags, "include_flags"),
            check_flags(self.exclude_flags, "exclude_flags"),
        )

    def cost(self, area: int) -> float:
        return float(self.area_cost.get(int(area), 1.0))

    def min_cost(self) -> float:
        return min([1.0, *self.area_cost.values()])

    def uniform(self) -> bool:
        """All costs 1: the shortest path is the cheapest one."""
        return all(float(c) == 1.0 for c in self.area_cost.values())


def check_flags(value, name: str) -> int:
    """Polygon flags as an int of ALL_FLAGS' bits (Detour's 16-bit flags); NavMeshError naming
    `name` and the value for a non-integer or one that does not fit them (never silently truncated)."""
    try:
        flags = operator.index(value)
    except TypeError:
        raise NavMeshError(f"{name} must be an integer bit mask, got {value!r}") from None
    if not 0 <= flags <= ALL_FLAGS:
        raise NavMeshError(f"{name} must be a 16-bit mask (0 to 0x{ALL_FLAGS:X}), got {value!r}")
    return flags


def checked_filter(value) -> QueryFilter:
    """value, when it is a valid QueryFilter; NavMeshError otherwise."""
    if not isinstance(value, QueryFilter):
        raise NavMeshError(f"a query filter must be a QueryFilter, got {type(value).__name__}")
    value.key()
    return value
