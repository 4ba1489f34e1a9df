"""Bake parameters, named and meant as in Recast, in meters and degrees (world Z-up).

BAKE_PARAMETERS is the one list of them: BakeParams' defaults and checks, the add-on's settings,
panel and command line, and the README's parameter table are all made from it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, fields

from .errors import NavMeshError


@dataclass(frozen=True)
class BakeParameter:
    """One bake parameter: its name here and in Recast, default, unit and valid range.

    label is its name in the add-on's sidebar. unit is "m", "m²", "degrees" or "count" (a whole
    number). recast is the rcConfig field that means the same; recast_in_cells: Recast counts it in
    cells where we use meters. The value must be at least `minimum` (greater than it if
    `minimum_excluded`) and, if `maximum` is set, at most `maximum` (less than it if `maximum_excluded`).

    cells is, for a length (area) that is no agent dimension, the range in cells (cell areas) that
    makes sense whatever units the level was modelled in (high None: no upper bound); a value other
    than 0 outside it is warned about (`BakeParams.warnings`) with what goes wrong (too_small,
    too_large) and `guide`, the range in cells to set instead (Recast's guide where it has one).
    """

    name: str
    label: str
    default: float | int
    unit: str
    description: str
    recast: str
    recast_in_cells: bool = False
    minimum: float = 0.0
    minimum_excluded: bool = False
    maximum: float | None = None
    maximum_excluded: bool = False
    cells: tuple[float, float | None] | None = None
    guide: tuple[float, float] | None = None
    too_small: str = ""
    too_large: str = ""

    def scale_warning(self, value: float, cell_size: float) -> str | None:
        """Why `value` makes little sense at this cell size (see `cells`), or None."""
        if self.cells is None or self.guide is None or value == 0:
            return None
        low, high = self.cells
        size = cell_size**2 if self.unit == "m²" else cell_size
        ratio = value / size
        small = ratio < low
        if not small and (high is None or ratio <= high):
            return None
        word = "cell areas" if self.unit == "m²" else "cells"
        return (
            f"{self.name} {value:g} {self.unit} is implausibly {'small' if small else 'large'} for {cell_size:g} m "
            f"cells ({ratio:.3g} {word}, {'under' if small else 'over'} {low if small else high:g}): "
            f"{self.too_small if small else self.too_large}; set {self.guide[0] * size:.3g} to "
            f"{self.guide[1] * size:.3g} {self.unit} ({self.guide[0]:g} to {self.guide[1]:g} {word})"
        )

    def problem(self, value) -> str | None:
        """Why `value` is not valid for this parameter, or None if it is."""
        # Any real number (numpy's scalars too, as settings read from arrays are), not a bool or a
        # string a float() would parse.
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            return f"must be a finite number, got {value!r}"
        x = float(value)
        if self.unit == "count":
            if int(x) != x or not self.minimum <= x <= (math.inf if self.maximum is None else self.maximum):
                return f"must be a whole number from {self.minimum:g} to {self.maximum:g}, got {value}"
            return None
        below = x <= self.minimum if self.minimum_excluded else x < self.minimum
        above = self.maximum is not None and (x >= self.maximum if self.maximum_excluded else x > self.maximum)
        if not (below or above):
            return None
        if self.maximum is not None:
            low, high = "(" if self.minimum_excluded else "[", ")" if self.maximum_excluded else "]"
            return f"must be in {low}{self.minimum:g}, {self.maximum:g}{high} {self.unit}, got {value}"
        if self.minimum_excluded:
            return f"must be greater than {self.minimum:g}, got {value}"
        return (
            f"must not be negative, got {value}"
            if self.minimum == 0
            else f"must be at least {self.minimum:g}, got {value}"
        )


BAKE_PARAMETERS = (
    BakeParameter(
        "cell_size",
        "Cell Size",
        0.2,
        "m",
        minimum_excluded=True,
        recast="cs",
        description="voxel size across; smaller is more accurate and slower",
    ),
    BakeParameter(
        "agent_radius",
        "Agent Radius",
        0.5,
        "m",
        recast="walkableRadius",
        recast_in_cells=True,
        description="erosion from walls, ledges and obstacles, honoured exactly (not rounded to cells)",
    ),
    BakeParameter(
        "agent_height",
        "Agent Height",
        2.0,
        "m",
        minimum_excluded=True,
        recast="walkableHeight",
        recast_in_cells=True,
        description="free space needed above a floor",
    ),
    BakeParameter(
        "agent_max_climb",
        "Max Climb",
        0.5,
        "m",
        recast="walkableClimb",
        recast_in_cells=True,
        description="largest step where neighbouring floors meet: lower stairs connect, as do slopes within max slope",
    ),
    BakeParameter(
        "agent_max_slope",
        "Max Slope",
        45.0,
        "degrees",
        maximum=90.0,
        maximum_excluded=True,
        recast="walkableSlopeAngle",
        description="steepest walkable surface",
    ),
    BakeParameter(
        "region_min_area",
        "Min Region Area",
        1.0,
        "m²",
        recast="minRegionArea",
        recast_in_cells=True,
        description="islands whose navmesh would cover less than this, seen from above, are dropped",
        cells=(1.0, 1e5),
        guide=(16.0, 64.0),
        too_small="it drops no island (each covers at least a cell), as 0 does, so specks of floor stay",
        too_large="islands smaller than that are dropped, whole rooms and floors among them",
    ),
    BakeParameter(
        "max_verts_per_poly",
        "Max Polygon Vertices",
        6,
        "count",
        minimum=3,
        maximum=32,
        recast="maxVertsPerPoly",
        description="at most this many vertices per polygon (Detour's limit is 6)",
    ),
    BakeParameter(
        "max_edge_len",
        "Max Edge Length",
        0.0,
        "m",
        recast="maxEdgeLen",
        recast_in_cells=True,
        description="wall and ledge edges of the outline longer than this are split evenly; 0: no limit",
        cells=(2.0, None),
        guide=(10.0, 50.0),
        too_small="wall edges are split into pieces of a cell or two, with many more vertices and polygons",
    ),
    BakeParameter(
        "max_edge_error",
        "Max Edge Error",
        0.2,
        "m",
        minimum_excluded=True,
        recast="maxSimplificationError",
        recast_in_cells=True,
        description="how far a simplified outline may leave the voxel outline",
        cells=(0.5, 20.0),
        guide=(1.1, 1.5),
        too_small="outlines follow the voxel staircase, with many more vertices and polygons",
        too_large="outlines cut corners by many cells, into walls and over ledges",
    ),
    BakeParameter(
        "max_height_error",
        "Max Height Error",
        0.2,
        "m",
        minimum_excluded=True,
        recast="detailSampleMaxError",
        description="how far the detail surface may leave the real floor",
        cells=(0.1, 20.0),
        guide=(0.5, 2.0),
        too_small="the detail surface gets triangles for every bump of the floor, up to its cap per polygon",
        too_large="the detail surface may leave the floor by that much, above or below steps and ramps",
    ),
    BakeParameter(
        "jump_max_distance",
        "Max Jump Distance",
        0.0,
        "m",
        recast="",
        description="automatic off-mesh links are at most this long seen from above, navmesh edge to navmesh "
        "edge (across a gap, its width plus twice the agent radius); 0: none",
        cells=(1.0, 250.0),
        guide=(5.0, 15.0),
        too_small="no gap or ledge on the voxel grid is that narrow, so few or no links are made",
        too_large="links would leap across whole rooms",
    ),
    BakeParameter(
        "jump_max_up",
        "Max Jump Up",
        0.0,
        "m",
        recast="",
        description="automatic jump links (both ways) join floors at most this much higher",
        cells=(1.0, 100.0),
        guide=(2.0, 5.0),
        too_small="a jump that low is a step, so few or no links are made",
        too_large="links would jump up whole storeys",
    ),
    BakeParameter(
        "jump_max_drop",
        "Max Drop",
        0.0,
        "m",
        recast="",
        description="automatic drop links (one way, down) leave a ledge for a floor at most this far below",
        cells=(1.0, 250.0),
        guide=(5.0, 25.0),
        too_small="a drop that short is a step, so few or no links are made",
        too_large="links would drop down whole storeys",
    ),
    BakeParameter(
        "jump_step",
        "Jump Link Spacing",
        1.0,
        "m",
        minimum_excluded=True,
        recast="",
        description="automatic links are sampled along ledges this far apart",
        cells=(1.0, 50.0),
        guide=(2.0, 10.0),
        too_small="ledges are sampled more often than every cell, many times the work for the same links",
        too_large="ledges get a link only that far apart, most of their length without one",
    ),
)
_DEFAULTS = {p.name: p.default for p in BAKE_PARAMETERS}
_BY_NAME = {p.name: p for p in BAKE_PARAMETERS}
# Heights an agent plausibly has, meters: outside them the level's units are likely not what the
# settings assume (a centimetre scene's defaults make a 2 cm agent).
PLAUSIBLE_AGENT_HEIGHT = (0.1, 100.0)
# Most vertices a Detour polygon holds (DT_VERTS_PER_POLYGON).
DETOUR_MAX_VERTS = 6
# Keys older files hold that no longer mean anything; loading ignores them. cell_height (the voxel
# size upwards) was checked but never used: heights are kept exact.
LEGACY_KEYS = frozenset({"cell_height"})


@dataclass(frozen=True)
class BakeParams:
    """What a navmesh is baked with: one field per entry of BAKE_PARAMETERS (see there), in its order."""

    cell_size: float = _DEFAULTS["cell_size"]
    agent_radius: float = _DEFAULTS["agent_radius"]
    agent_height: float = _DEFAULTS["agent_height"]
    agent_max_climb: float = _DEFAULTS["agent_max_climb"]
    agent_max_slope: float = _DEFAULTS["agent_max_slope"]
    region_min_area: float = _DEFAULTS["region_min_area"]
    max_verts_per_poly: int = int(_DEFAULTS["max_verts_per_poly"])
    max_edge_len: float = _DEFAULTS["max_edge_len"]
    max_edge_error: float = _DEFAULTS["max_edge_error"]
    max_height_error: float = _DEFAULTS["max_height_error"]
    jump_max_distance: float = _DEFAULTS["jump_max_distance"]
    jump_max_up: float = _DEFAULTS["jump_max_up"]
    jump_max_drop: float = _DEFAULTS["jump_max_drop"]
    jump_step: float = _DEFAULTS["jump_step"]

    def __post_init__(self) -> None:
        for parameter in BAKE_PARAMETERS:
            value = getattr(self, parameter.name)
            problem = parameter.problem(value)
            if problem:
                raise NavMeshError(f"parameter {parameter.name} {problem}")
            # Plain Python numbers (a numpy scalar given becomes one), so files and messages get them.
            object.__setattr__(self, parameter.name, int(value) if parameter.unit == "count" else float(value))
        if 0 < self.max_edge_len < self.cell_size:
            # Wall edges are cut into pieces no longer than it: under a cell that is pieces finer than
            # the grid resolves, millions on a large level (a bake that runs out of memory).
            raise NavMeshError(
                f"parameter max_edge_len {self.max_edge_len:g} m is shorter than a cell (cell_size "
                f"{self.cell_size:g} m): wall edges would be cut into pieces finer than the grid, millions of "
                f"them on a large level; set 0 (no limit) or at least a cell (Recast's maxEdgeLen counts whole "
                f"cells; its guide is 10 to 50 cells, {10 * self.cell_size:.3g} to {50 * self.cell_size:.3g} m)"
            )

    def to_dict(self) -> dict:
        return asdict(self)

    def warnings(self) -> list[str]:
        """Valid settings that make little sense together, each naming the parameter, what goes
        wrong and what to set instead (Recast's guidance where it has one)."""
        out = []
        cs, r = self.cell_size, self.agent_radius
        low, high = PLAUSIBLE_AGENT_HEIGHT
        if not low <= self.agent_height <= high:
            out.append(
                f"agent_height {self.agent_height:g} m is implausibly "
                f"{'small' if self.agent_height < low else 'large'} for an agent (is the Unit Scale right? choose an "
                f"agent preset): bake parameters are meters (in Blender, the scene's lengths times its Unit Scale, "
                f"0.01 for a level modelled in centimetres), and an agent outside {low:g} to {high:g} m tall usually "
                "means settings left in other units; an agent preset sets the agent, the cell size and the other "
                "lengths in meters"
            )
        if r > 0 and cs > r / 2:
            out.append(
                f"cell_size {cs:g} m is more than half the agent radius ({r:g} m): walls and gaps are resolved to "
                f"{cs:g} m, so passages up to about 2 x radius + cell size close; Recast's guide is radius/3 to "
                f"radius/2 ({r / 3:.3g} to {r / 2:.3g} m)"
            )
        if r == 0:
            out.append(
                f"cell_size {cs:g} m at agent radius 0: an obstacle takes every cell it touches, so passages "
                f"narrower than about 3 cells ({3 * cs:.3g} m) may close; a cell a third of the narrowest "
                "passage that must stay open keeps it"
            )
        if self.agent_height < self.agent_max_climb:
            out.append(
                f"agent_height {self.agent_height:g} m is below agent_max_climb {self.agent_max_climb:g} m: "
                "the agent would climb steps taller than itself"
            )
        if self.max_verts_per_poly > DETOUR_MAX_VERTS:
            out.append(
                f"max_verts_per_poly {self.max_verts_per_poly} is above Detour's limit of {DETOUR_MAX_VERTS}: "
                "engines that load Detour navmeshes (Babylon.js, recast-navigation, DotRecast) cannot take it"
            )
        if self.jump_max_distance > 0 and self.jump_max_up <= 0 and self.jump_max_drop <= 0:
            out.append(
                f"jump_max_distance {self.jump_max_distance:g} m makes no links while jump_max_up and "
                "jump_max_drop are 0: set how high a jump reaches or how far a drop falls"
            )
        for parameter in BAKE_PARAMETERS:  # lengths and areas far from what the cell size resolves
            warning = parameter.scale_warning(getattr(self, parameter.name), cs)
            if warning:
                out.append(warning)
        return out

    @classmethod
    def from_dict(cls, data: dict, baked: bool = False) -> BakeParams:
        """Build from a dict; unknown keys are an error so typos do not pass silently (LEGACY_KEYS are ignored).

        baked: the parameters a navmesh file records it was baked with. A max_edge_len under a cell
        baked (slowly) before it was refused, so there it is taken as it is: such files still load.
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known - LEGACY_KEYS)
        if unknown:
            raise NavMeshError(f"unknown bake parameter(s): {', '.join(unknown)}")
        values = {k: v for k, v in data.items() if k in known}
        edge = values.get("max_edge_len", 0.0)
        if not baked or _BY_NAME["max_edge_len"].problem(edge) is not None:
            return cls(**values)
        params = cls(**{**values, "max_edge_len": 0.0})
        object.__setattr__(params, "max_edge_len", edge)  # frozen: set past the check it passed when baked
        return params
