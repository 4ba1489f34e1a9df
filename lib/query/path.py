"""What a path query returns, and the plan a search works from: plain values shared by the search,
the drawing of the path and the query object."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

IN_PROGRESS, FOUND, PARTIAL, UNREACHABLE = "in_progress", "found", "partial", "unreachable"
PARTIAL_REASON = "goal is not reachable for this radius and filter; path ends at the closest reachable point"


@dataclass(frozen=True)
class PathResult:
    """status 'found' / 'partial' / 'unreachable'; points (K, 3) from start to goal; the polygon of
    each point; length in meters; the polygons searched through (corridor); and for anything but a
    plain 'found' a reason. start_distance / goal_distance: how far the query's start and goal lie
    from where the path starts and ends (0 when on the navmesh and clear of walls). links: for each
    off-mesh link the path takes, the index i of its segment points[i] -> points[i + 1] (where a
    game plays the jump or climb)."""

    status: str
    points: np.ndarray
    polygons: np.ndarray
    length: float
    nodes_expanded: int
    corridor: tuple = ()
    reason: str = ""
    start_distance: float = 0.0
    goal_distance: float = 0.0
    links: tuple = ()


@dataclass
class PathPlan:
    """One path query, resolved before the search: the located (and cleared) ends, the radius and
    its clearance d = r - r0, what the filter allows and costs, how the search crosses portals, the
    start and goal as asked, and the result when it is known without a search (unreachable, or the
    goal in plain sight)."""

    radius: float
    d: float
    passable: list
    costs: list
    uniform: bool
    portals: Mapping[int, tuple[tuple, tuple]]
    # The query's walker over `passable` (NavMeshQuery._walker): one per query, so a segment tested
    # and then draped is walked once.
    walk: Callable
    filter_state: tuple = ()
    everywhere: bool = True
    start: tuple = ()
    goal: tuple = ()
    start_poly: int = -1
    goal_poly: int = -1
    partial: bool = False
    hscale: float = 1.0
    asked: tuple = ()
    result: PathResult | None = None
    link_costs: list = field(default_factory=list)
    # The polygons holding each path end, by (polygon, point): found once per query.
    holders: dict = field(default_factory=dict)
    # For a partial path: the polygons of the start's connected piece, where its end may be placed.
    reach: list | None = None
    # Per edge slot: does it lead into a polygon `passable` admits through a portal the radius fits?
    open_edges: list = field(default_factory=list)


def path_length(points) -> float:
    """Length (3D) of a polyline of (x, y, z) points."""
    return sum(math.dist(a, b) for a, b in zip(points[:-1], points[1:]))


def unreachable(reason: str, nodes_expanded: int = 0) -> PathResult:
    """An 'unreachable' result with its reason."""
    return PathResult(UNREACHABLE, np.zeros((0, 3)), np.zeros(0, dtype=np.int64), 0.0, nodes_expanded, (), reason)


def result(
    status: str, points, polys, nodes_expanded: int, corridor: tuple, plan: PathPlan, reason: str = ""
) -> PathResult:
    """A path result with read-only arrays, and how far its ends lie from the start and goal asked."""
    return PathResult(
        status,
        _frozen(np.array(points, dtype=np.float64).reshape(-1, 3)),
        _frozen(np.array(polys, dtype=np.int64)),
        path_length([tuple(p) for p in points]),
        nodes_expanded,
        corridor,
        reason,
        math.dist(points[0], plan.asked[0]),
        math.dist(points[-1], plan.asked[1]),
    )


def _frozen(array: np.ndarray) -> np.ndarray:
    """A read-only view of a read-only array: the path cache hands the same result out again, and a
    view's writeable flag cannot be set back on over a read-only base."""
    owner = np.array(array)  # its own data: not a view of an array left writeable
    owner.flags.writeable = False
    view = owner.view()
    view.flags.writeable = False
    return view
