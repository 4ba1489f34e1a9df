"""Settings the user edits: bake parameters and display toggles per scene, role and area per object/material."""

from __future__ import annotations

import math

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

import blender_navmesh as lib

from . import mesh_write, operators_path, overlay, units

SOURCES = (
    ("SELECTED", "Selected", "Bake the selected objects"),
    ("COLLECTION", "Collection", "Bake every visible object in a chosen collection and its children"),
    ("VISIBLE", "Visible", "Bake every visible object in the scene and in its Background Scene (Set)"),
)
COLOR_BY = (
    ("NAVMESH", "Navmesh", "One colour for the whole navmesh"),
    ("AREA", "Area", "A colour per area type; ground (area 0) keeps the navmesh colour"),
    ("REGION", "Region", "A colour per region (connected island)"),
    ("POLYGON", "Polygon", "A colour per navigation polygon"),
)
ROLES = (
    ("WALKABLE", "Walkable", "Agents walk on this object's upward faces; it also blocks"),
    ("OBSTACLE", "Obstacle Only", "Blocks agents but is never walked on"),
    ("IGNORE", "Ignored", "Left out of the navmesh bake"),
    (
        "AREA_VOLUME",
        "Area Volume",
        "A closed mesh that marks the walkable floor inside it with its Area Type "
        "(mud, water, a road); it is neither walked on nor blocks",
    ),
    (
        "NO_GO_VOLUME",
        "Not Walkable Volume",
        "A closed mesh that removes the walkable floor inside it (a no-go zone); it is neither walked on nor blocks",
    ),
    (
        "OFF_MESH_LINK",
        "Off-Mesh Link",
        "A curve or edge whose first and last points are a jump, drop or ladder "
        "between two places on the navmesh (its Area Type and Cost apply)",
    ),
)
PARAMETER_BY_NAME = {p.name: p for p in lib.BAKE_PARAMETERS}
# The hard limits of a bake parameter's setting are lib's valid range, so the add-on, the command
# line and lib take the same values (an excluded bound, 0 m or 90°, is refused by lib with its
# message); the sliders' soft limits stop this far inside an excluded bound: meters (m²) above an
# excluded minimum, degrees below an excluded maximum.
_INSIDE_MINIMUM = 0.001
_INSIDE_MAXIMUM_DEG = 0.1


def _redraw(self, context) -> None:
    """Display toggles only change what the viewport draws."""
    for area in getattr(context.screen, "areas", ()):
        if area.type == "VIEW_3D":
            area.tag_redraw()


def _replan(self, context) -> None:
    """An input of the test path changed (its radius, agent type or navmesh): plan it again now, as a
    handle move does (no depsgraph update follows a property change), and redraw."""
    operators_path.update_path(self.id_data)
    _redraw(self, context)


def is_navmesh(self, obj) -> bool:
    """Poll of the Path Test's Navmesh field: the pick list offers navmesh objects only."""
    return bool(obj.get(mesh_write.TAG))


def _distance(name: str, default: float, description: str, minimum: float = 0.0, update=None) -> FloatProperty:
    return FloatProperty(
        name=name,
        description=description,
        default=default,
        min=minimum,
        soft_max=10.0,
        subtype="DISTANCE",
        unit="LENGTH",
        precision=3,
        update=update,
    )


def _bake_property(parameter: lib.params.BakeParameter):
    """The Blender property for one lib bake parameter: same label, default and range; angles in radians."""
    common = {"name": parameter.label, "description": parameter.description[0].upper() + parameter.description[1:]}
    if parameter.unit == "count":
        return IntProperty(**common, default=parameter.default, min=int(parameter.minimum), max=int(parameter.maximum))
    low = parameter.minimum
    soft_low = low + (_INSIDE_MINIMUM if parameter.minimum_excluded else 0.0)
    if parameter.unit == "degrees":
        high = parameter.maximum
        soft_high = high - (_INSIDE_MAXIMUM_DEG if parameter.maximum_excluded else 0.0)
        return FloatProperty(
            **common,
            default=math.radians(parameter.default),
            min=math.radians(low),
            max=math.radians(high),
            soft_min=math.radians(soft_low),
            soft_max=math.radians(soft_high),
            subtype="ANGLE",
        )
    limits = {"min": low, "soft_min": soft_low, "precision": 3}
    if parameter.unit == "m²":
        return FloatProperty(**common, default=parameter.default, **limits, unit="AREA")
    return FloatProperty(**common, default=parameter.default, **limits, subtype="DISTANCE", unit="LENGTH")


def _with_bake_parameters(cls):
    """Give the settings one property per lib.BAKE_PARAMETERS entry, named as in lib."""
    for parameter in lib.BAKE_PARAMETERS:
        cls.__annotations__[parameter.name] = _bake_property(parameter)
    return cls


class NavmeshAreaType(bpy.types.PropertyGroup):
    """A named area type of the scene's table (its `name` is the item's name): objects and materials
    whose Area Type is its id take its cost, the overlay its colour; not walkable removes that floor."""

    area_id: IntProperty(name="Id", default=1, min=0, max=63, description="The area id objects and materials use")
    cost: FloatProperty(
        name="Cost",
        default=1.0,
        min=0.01,
        soft_max=10.0,
        description="Travel cost factor of this area type (it overrides the objects' own)",
    )
    color: FloatVectorProperty(
        name="Color",
        subtype="COLOR",
        size=3,
        min=0.0,
        max=1.0,
        default=(0.8, 0.5, 0.2),
        update=_redraw,
        description="How Color By Area draws this area type",
    )
    walkable: BoolProperty(
        name="Walkable", default=True, description="Off: faces of this area type are not walked on (they still block)"
    )


def _agent_renamed(self, context) -> None:
    """Path Test > Agent Type holds a type's name: a rename carries it along (a stale name planned the
    path at Path Radius instead, too close for the agent picked)."""
    settings = self.id_data.navmesh
    if self.known_name and settings.path_agent == self.known_name:
        settings.path_agent = self.name
    self.known_name = self.name


def _agent_radius_changed(self, context) -> None:
    """The radius of the type the path test plans for is an input of the path."""
    if self.id_data.navmesh.path_agent == self.name:
        operators_path.update_path(self.id_data)
    _redraw(self, context)


class NavmeshAgentType(bpy.types.PropertyGroup):
    """One agent of the scene's list (its `name` is the item's name). Types sharing height, climb and
    slope share one navmesh baked at their smallest radius; each queries it at its own radius."""

    name: StringProperty(name="Name", default="", update=_agent_renamed, description="The agent type's name")
    known_name: StringProperty(options={"HIDDEN"}, description="The name the type had when last set")

    radius: FloatProperty(
        name="Radius",
        default=PARAMETER_BY_NAME["agent_radius"].default,
        min=0.0,
        soft_min=_INSIDE_MINIMUM,
        soft_max=10.0,
        subtype="DISTANCE",
        unit="LENGTH",
        precision=3,
        update=_agent_radius_changed,
        description="How close to walls the agent's centre may come",
    )
    height: FloatProperty(
        name="Height",
        default=PARAMETER_BY_NAME["agent_height"].default,
        min=0.0,
        soft_min=_INSIDE_MINIMUM,
        soft_max=10.0,
        subtype="DISTANCE",
        unit="LENGTH",
        precision=3,
        description="Headroom the agent needs",
    )
    max_climb: FloatProperty(
        name="Max Climb",
        default=PARAMETER_BY_NAME["agent_max_climb"].default,
        min=0.0,
        soft_max=10.0,
        subtype="DISTANCE",
        unit="LENGTH",
        precision=3,
        description="Highest step the agent walks up",
    )
    max_slope: FloatProperty(
        name="Max Slope",
        default=math.radians(PARAMETER_BY_NAME["agent_max_slope"].default),
        min=0.0,
        max=math.radians(90.0),
        soft_max=math.radians(90.0 - _INSIDE_MAXIMUM_DEG),
        subtype="ANGLE",
        description="Steepest floor the agent walks on",
    )


@_with_bake_parameters
class NavmeshSettings(bpy.types.PropertyGroup):
    """Scene-level navmesh settings (bpy.types.Scene.navmesh); the bake parameters are added from lib."""

    source: EnumProperty(name="Source", items=SOURCES, default="SELECTED", description="Which objects to bake")
    collection: PointerProperty(
        name="Collection", type=bpy.types.Collection, description="Collection to bake when Source is Collection"
    )
    show_overlay: BoolProperty(
        name="Show Navmesh Overlay",
        default=True,
        update=_redraw,
        description="Draw the navmesh overlay (surface, lines, test path) in the 3D viewports; "
        "the viewport's Overlays toggle hides it too",
    )
    navmesh_color: FloatVectorProperty(
        name="Navmesh Color",
        subtype="COLOR",
        size=4,
        min=0.0,
        max=1.0,
        default=overlay.SURFACE_COLOR,
        update=_redraw,
        description="Colour of the navmesh surface the overlay draws; its alpha is the surface's opacity "
        "in every Color By mode",
    )
    color_by: EnumProperty(
        name="Color By",
        items=COLOR_BY,
        default="NAVMESH",
        update=_redraw,
        description="How the overlay colours the navmesh surface",
    )
    show_boundary: BoolProperty(
        name="Boundary",
        default=True,
        update=_redraw,
        description="Draw the navmesh's boundary edges (walls and ledges) as lines",
    )
    show_portals: BoolProperty(
        name="Portals", default=False, update=_redraw, description="Draw the edges shared by neighbouring polygons"
    )
    show_clearance: BoolProperty(
        name="Clearance",
        default=False,
        update=_redraw,
        description="Portals coloured by clearance, red where only the baked agent fits, green from 3x its radius",
    )

    area_types: CollectionProperty(type=NavmeshAreaType, name="Area Types")
    area_types_index: IntProperty(name="Active Area Type", default=0)

    agent_types: CollectionProperty(type=NavmeshAgentType, name="Agent Types")
    agent_types_index: IntProperty(
        name="Active Agent Type", default=0, update=_redraw, description="The agent type whose reach the overlay shows"
    )
    show_agent_reach: BoolProperty(
        name="Show Reach",
        default=True,
        update=_redraw,
        description="Draw only where the active agent type fits; the rest of its navmesh is drawn red",
    )

    bake_stage: StringProperty(name="Bake Stage", default="", options={"SKIP_SAVE"})
    bake_progress: FloatProperty(
        name="Progress", default=0.0, min=0.0, max=1.0, subtype="FACTOR", options={"SKIP_SAVE"}
    )

    path_radius: _distance(
        "Path Radius",
        PARAMETER_BY_NAME["agent_radius"].default,
        "Radius of the agent the test path is planned for",
        update=_replan,
    )
    path_agent: StringProperty(
        name="Agent Type",
        default="",
        update=_replan,
        description="Agent type the path is planned for, on its navmesh at its radius; "
        "empty: the Navmesh and Path Radius below",
    )
    path_show_portals: BoolProperty(
        name="Show Portals",
        default=False,
        update=_redraw,
        description="Draw the portals the path crosses, shrunk by the agent radius",
    )
    path_navmesh: PointerProperty(
        name="Navmesh",
        type=bpy.types.Object,
        poll=is_navmesh,
        update=_replan,
        description="Navmesh object the path test runs on when no Agent Type is chosen",
    )
    path_start: PointerProperty(name="Start", type=bpy.types.Object, description="Path test start handle")
    path_goal: PointerProperty(name="Goal", type=bpy.types.Object, description="Path test goal handle")
    path_status: StringProperty(name="Status", default="", options={"SKIP_SAVE"})
    path_length: FloatProperty(name="Length", default=0.0, subtype="DISTANCE", unit="LENGTH", options={"SKIP_SAVE"})
    path_polygons: IntProperty(
        name="Search Nodes",
        default=0,
        options={"SKIP_SAVE"},
        description="Portal crossings the path search expanded (0 when the goal was in plain sight)",
    )
    path_time_ms: FloatProperty(name="Query Time (ms)", default=0.0, options={"SKIP_SAVE"})

    def to_bake_params(self) -> lib.BakeParams:
        """The lib parameters for these settings (angles converted to degrees); NavMeshError if out of range.

        Values are rounded (6 decimals, 6 significant digits below 0.1; angles to 1e-4 degrees) so
        Blender's float32 storage does not leak 0.4000000059 into files.
        """
        return lib.BakeParams(**{name: self.bake_parameter(name) for name in PARAMETER_BY_NAME})

    def bake_parameter(self, name: str) -> float | int:
        """One bake parameter in lib's units (meters, not Blender units; degrees, not radians),
        rounded as in to_bake_params."""
        value = getattr(self, name)
        if isinstance(value, int):
            return value
        unit = PARAMETER_BY_NAME[name].unit
        if unit == "degrees":
            return round(math.degrees(value), 4)
        return _rounded(value * _meters(self) ** (2 if unit == "m²" else 1))

    def set_bake_parameter(self, name: str, value: float) -> None:
        """Set one bake parameter given in lib's units (meters, degrees)."""
        unit = PARAMETER_BY_NAME[name].unit
        if unit == "degrees":
            setattr(self, name, math.radians(value))
        elif unit == "count":
            setattr(self, name, value)
        else:
            setattr(self, name, value / _meters(self) ** (2 if unit == "m²" else 1))

    def area_type(self, area_id: int):
        """The table's entry for an area id, or None."""
        return next((entry for entry in self.area_types if entry.area_id == area_id), None)


def _rounded(value: float) -> float:
    """6 decimals, and 6 significant digits below 0.1, so a length lib takes (any above 0) is not
    rounded to 0."""
    return round(value, max(6, 5 - math.floor(math.log10(abs(value))))) if value else 0.0


def _meters(settings) -> float:
    """Meters per Blender unit in the scene these settings belong to."""
    return units.meters_per_unit(settings.id_data)


CLASSES = (NavmeshAreaType, NavmeshAgentType, NavmeshSettings)


def register_properties() -> None:
    bpy.types.Scene.navmesh = PointerProperty(type=NavmeshSettings)
    bpy.types.Object.navmesh_role = EnumProperty(
        name="Navmesh Role",
        items=ROLES,
        default="WALKABLE",
        description="How this object takes part in navmesh bakes; on a collection instance, also what it "
        "instances (the stricter of its role and each instanced object's own)",
    )
    bpy.types.Object.navmesh_area = IntProperty(
        name="Area Type",
        default=0,
        min=0,
        max=63,
        description="Area id of this object's faces (0 = ground); on a collection instance, of the faces it "
        "instances whose object's own Area Type is 0. A material's area wins over both",
    )
    bpy.types.Object.navmesh_area_cost = FloatProperty(
        name="Area Cost", default=1.0, min=0.01, soft_max=10.0, description="Travel cost factor of this area type"
    )
    bpy.types.Object.navmesh_link_bidirectional = BoolProperty(
        name="Both Ways", default=True, description="Off-mesh link: agents may cross it from its end to its start too"
    )
    bpy.types.Object.navmesh_link_radius = FloatProperty(
        name="Link Radius",
        default=0.0,
        min=0.0,
        subtype="DISTANCE",
        unit="LENGTH",
        description="Off-mesh link: the widest agent radius that may use it; 0: the bake radius",
    )
    bpy.types.Material.navmesh_area = IntProperty(
        name="Area Type",
        default=-1,
        min=-1,
        max=63,
        description="Area id of faces with this material; -1 uses the object's",
    )
    bpy.types.Material.navmesh_area_cost = FloatProperty(
        name="Area Cost",
        default=1.0,
        min=0.01,
        soft_max=10.0,
        description="Travel cost factor of this material's area type",
    )


def unregister_properties() -> None:
    for owner, names in (
        (bpy.types.Scene, ("navmesh",)),
        (
            bpy.types.Object,
            ("navmesh_role", "navmesh_area", "navmesh_area_cost", "navmesh_link_bidirectional", "navmesh_link_radius"),
        ),
        (bpy.types.Material, ("navmesh_area", "navmesh_area_cost")),
    ):
        for name in names:
            delattr(owner, name)
