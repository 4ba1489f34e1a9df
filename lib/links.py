"""Off-mesh links placed by hand: each end snapped onto the navmesh, as Detour's off-mesh
connections are, so a path query can cross from one floor to another where the floor does not
connect them (a jump, a drop, a ladder)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .errors import InputError, NavMeshError
from .navmesh import MAX_AREA, NavMesh, OffMeshLink


@dataclass(frozen=True)
class LinkSpec:
    """A link as a designer places it (world, Z-up): the two end points, both ways or start to end
    only, the widest agent radius that may use it (None: the bake radius), its area id and cost
    factor, and a name for messages."""

    start: tuple[float, float, float]
    end: tuple[float, float, float]
    bidirectional: bool = True
    radius: float | None = None
    area: int = 0
    cost: float = 1.0
    name: str = "link"


def end_extent(mesh: NavMesh) -> tuple[float, float]:
    """How far (across, up or down; m) a link's end may lie from the navmesh and still snap onto it:
    the agent radius plus a cell across (an end placed on a ledge's edge is the radius from the
    navmesh eroded off it), and the agent's climb up or down, at least the detail's height error (an
    end on the floor is within that of the surface). As Detour attaches an off-mesh connection's end
    within its radius across and the climb up or down: an end on a crate top too small for the
    agent must not slide off onto the floor a metre below."""
    p = mesh.params
    return float(p.agent_radius) + float(p.cell_size), max(float(p.agent_max_climb), float(p.max_height_error))


def attach_links(mesh: NavMesh, specs: list[LinkSpec]) -> NavMesh:
    """The mesh with these links, each end snapped to the surface of the nearest polygon within
    `end_extent`. InputError (a NavMeshError) naming every link whose end lies off the navmesh, and
    how far; a link for agents smaller than this navmesh's with an end off it (on a floor this agent
    does not fit on) is left out."""
    from .query.index import MeshIndex  # the query package builds on this one's NavMesh

    if not specs:
        return mesh
    if mesh.is_empty:
        raise NavMeshError(f"{len(specs)} off-mesh link(s) but the navmesh is empty: {mesh.empty_reason}")
    index, extent = MeshIndex(mesh), end_extent(mesh)
    links, missed = [], []
    for spec in specs:
        if not 0 <= int(spec.area) <= MAX_AREA or not (np.isfinite(spec.cost) and spec.cost > 0):
            raise NavMeshError(f"off-mesh link {spec.name!r}: area must be 0..{MAX_AREA} and cost > 0")
        if spec.radius is not None and not (np.isfinite(spec.radius) and spec.radius > 0):
            # (A radius below the bake radius is a link for smaller agents than this navmesh's.)
            raise NavMeshError(
                f"off-mesh link {spec.name!r}: its radius must be a number of meters > 0 (or None: the bake "
                f"radius), got {spec.radius}"
            )
        ends = [index.locate(point, extent) for point in (spec.start, spec.end)]
        far = [
            f"its {which} is {where.distance:.3g} m away"
            for which, where in zip(("start", "end"), ends)
            if where.polygon < 0
        ]
        radius = float(mesh.params.agent_radius) if spec.radius is None else float(spec.radius)
        if far and radius < float(mesh.params.agent_radius):
            continue  # a link for smaller agents only, onto a floor this agent does not fit on
        if far:
            missed.append(f"{spec.name!r} ({' and '.join(far)})")
            continue
        links.append(
            OffMeshLink(
                tuple(ends[0].point.tolist()),
                tuple(ends[1].point.tolist()),
                ends[0].polygon,
                ends[1].polygon,
                radius,
                bool(spec.bidirectional),
                int(spec.area),
                float(spec.cost),
                spec.name,
            )
        )
    if missed:
        raise InputError(
            f"off-mesh link ends must lie on the navmesh (within the agent radius plus a cell, {extent[0]:g} m, "
            f"across and the agent's climb, {extent[1]:g} m, up or down; a floor too small or narrow for the "
            f"agent has none; a link radius below the agent's keeps a link to smaller agents): {'; '.join(missed)}"
        )
    return replace(mesh, links=tuple(mesh.links) + tuple(links))


def relocated(mesh: NavMesh, links) -> tuple[OffMeshLink, ...]:
    """The links whose ends both still lie on `mesh` (a navmesh edited since they were attached),
    each end snapped onto it again; a link with an end off it leads nowhere and is left out, as
    lib.prune leaves out a dropped island's links."""
    from .query.index import MeshIndex

    if mesh.is_empty or not links:
        return ()
    index, extent = MeshIndex(mesh), end_extent(mesh)
    kept = []
    for link in links:
        start, end = (index.locate(point, extent) for point in (link.start, link.end))
        if start.polygon >= 0 and end.polygon >= 0:
            kept.append(
                replace(
                    link,
                    start=tuple(start.point.tolist()),
                    end=tuple(end.point.tolist()),
                    start_polygon=start.polygon,
                    end_polygon=end.polygon,
                )
            )
    return tuple(kept)


def link_columns(mesh: NavMesh) -> dict[str, np.ndarray]:
    """The mesh's links as flat columns for file formats without records: per link its start and
    end polygon (two entries), both ways (1) or not (0), area id, widest agent radius, cost factor."""
    links = mesh.links
    return {
        "link_polygons": np.array([[link.start_polygon, link.end_polygon] for link in links], dtype=np.int64).reshape(
            -1
        ),
        "link_bidirectional": np.array([int(link.bidirectional) for link in links], dtype=np.int64),
        "link_areas": np.array([link.area for link in links], dtype=np.int64),
        "link_radii": np.array([link.radius for link in links], dtype=np.float64),
        "link_costs": np.array([link.cost for link in links], dtype=np.float64),
    }
