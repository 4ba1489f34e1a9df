"""Settings the user edits: bake parameters and display toggles per scene, role and area per object/material."""
from __future__ import annotations

import math

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty, StringProperty

from . import lib

SOURCES = (
    ("SELECTED", "Selected", "Bake the selected objects"),
    ("COLLECTION", "Collection", "Bake every object in a chosen collection"),
    ("VISIBLE", "Visible", "Bake every visible object in the scene"),
)
ROLES = (
    ("WALKABLE", "Walkable", "Agents walk on this object's upward faces; it also blocks"),
    ("OBSTACLE", "Obstacle Only", "Blocks agents but is never walked on"),
    ("IGNORE", "Ignored", "Left out of the navmesh bake"),
)
# Parameters shared with lib.BakeParams, in its field order; the slope is stored in radians.
PARAM_NAMES = (
    "cell_size", "cell_height", "agent_radius", "agent_height", "agent_max_climb", "agent_max_slope",
    "region_min_area", "max_verts_per_poly", "max_edge_error", "max_height_error",
)


def _redraw(self, context) -> None:
    """Display toggles only change what the viewport draws."""
    for area in getattr(context.screen, "areas", ()):
        if area.type == "VIEW_3D":
            area.tag_redraw()


def _show_regions(self, context) -> None:
    """Solid mode colours objects by their active colour attribute, which on a navmesh is the region colour."""
    for area in getattr(context.screen, "areas", ()):
        for space in area.spaces:
            if space.type == "VIEW_3D":
                space.shading.color_type = "ATTRIBUTE" if self.show_regions else "MATERIAL"
        area.tag_redraw()


def _distance(name: str, default: float, description: str, minimum: float = 0.0) -> FloatProperty:
    return FloatProperty(name=name, description=description, default=default, min=minimum, soft_max=10.0,
                         subtype="DISTANCE", unit="LENGTH", precision=3)


class NavmeshSettings(bpy.types.PropertyGroup):
    """Scene-level navmesh settings (bpy.types.Scene.navmesh)."""

    source: EnumProperty(name="Source", items=SOURCES, default="SELECTED", description="Which objects to bake")
    collection: PointerProperty(name="Collection", type=bpy.types.Collection,
                                description="Collection to bake when Source is Collection")
    cell_size: _distance("Cell Size", 0.2, "Voxel size across; smaller is more accurate and slower", 0.001)
    cell_height: _distance("Cell Height", 0.1, "Voxel size upwards; smaller resolves steps more exactly", 0.001)
    agent_radius: _distance("Agent Radius", 0.4, "How far agents keep from walls, ledges and obstacles")
    agent_height: _distance("Agent Height", 1.8, "Free space an agent needs above the floor", 0.001)
    agent_max_climb: _distance("Max Climb", 0.4, "Largest step up or down an agent can take")
    agent_max_slope: FloatProperty(name="Max Slope", description="Steepest walkable surface",
                                   default=math.radians(45.0), min=0.0, max=math.radians(89.9), subtype="ANGLE")
    region_min_area: FloatProperty(name="Min Region Area", description="Walkable islands smaller than this are dropped",
                                   default=1.0, min=0.0, soft_max=100.0, subtype="NONE", unit="AREA")
    max_verts_per_poly: IntProperty(name="Max Polygon Vertices", description="At most this many corners per polygon",
                                    default=6, min=3, max=32)
    max_edge_error: _distance("Max Edge Error", 0.2, "How far simplified outlines may stray from the voxel outline", 0.001)
    max_height_error: _distance("Max Height Error", 0.2, "How far the detail surface may stray from the real floor", 0.001)

    show_regions: BoolProperty(name="Regions", default=False, update=_show_regions,
                               description="Colour navmesh polygons by region (switches Solid mode to Attribute colour)")
    show_portals: BoolProperty(name="Portals", default=False, update=_redraw,
                               description="Draw the edges shared by neighbouring polygons")
    show_clearance: BoolProperty(name="Clearance", default=False, update=_redraw,
                                 description="Heat map of portal clearance: red is narrow, green is wide")

    bake_stage: StringProperty(name="Bake Stage", default="", options={"SKIP_SAVE"})
    bake_progress: FloatProperty(name="Progress", default=0.0, min=0.0, max=1.0, subtype="FACTOR", options={"SKIP_SAVE"})

    path_radius: _distance("Path Radius", 0.4, "Radius of the agent the test path is planned for")
    path_show_portals: BoolProperty(name="Show Portals", default=False, update=_redraw,
                                    description="Draw the portals the path crosses, shrunk by the agent radius")
    path_navmesh: PointerProperty(name="Navmesh", type=bpy.types.Object, description="Navmesh object the path test runs on")
    path_start: PointerProperty(name="Start", type=bpy.types.Object, description="Path test start handle")
    path_goal: PointerProperty(name="Goal", type=bpy.types.Object, description="Path test goal handle")
    path_status: StringProperty(name="Status", default="", options={"SKIP_SAVE"})
    path_length: FloatProperty(name="Length", default=0.0, subtype="DISTANCE", unit="LENGTH", options={"SKIP_SAVE"})
    path_polygons: IntProperty(name="Polygons Visited", default=0, options={"SKIP_SAVE"})
    path_time_ms: FloatProperty(name="Query Time (ms)", default=0.0, options={"SKIP_SAVE"})

    def to_bake_params(self) -> lib.BakeParams:
        """The lib parameters for these settings (slope converted to degrees); NavMeshError if out of range.

        Values are rounded (6 decimals, the slope to 1e-4 degrees) so Blender's float32 storage does not
        leak 0.4000000059 into files.
        """
        values = {name: getattr(self, name) for name in PARAM_NAMES}
        values = {k: v if isinstance(v, int) else round(v, 6) for k, v in values.items()}
        values["agent_max_slope"] = round(math.degrees(self.agent_max_slope), 4)
        return lib.BakeParams(**values)


CLASSES = (NavmeshSettings,)


def register_properties() -> None:
    bpy.types.Scene.navmesh = PointerProperty(type=NavmeshSettings)
    bpy.types.Object.navmesh_role = EnumProperty(name="Navmesh Role", items=ROLES, default="WALKABLE",
                                                 description="How this object takes part in navmesh bakes")
    bpy.types.Object.navmesh_area = IntProperty(name="Area Type", default=0, min=0, max=63,
                                                description="Area id of this object's faces (0 = ground)")
    bpy.types.Object.navmesh_area_cost = FloatProperty(name="Area Cost", default=1.0, min=0.01, soft_max=10.0,
                                                       description="Travel cost factor of this area type")
    bpy.types.Material.navmesh_area = IntProperty(name="Area Type", default=-1, min=-1, max=63,
                                                  description="Area id of faces with this material; -1 uses the object's")
    bpy.types.Material.navmesh_area_cost = FloatProperty(name="Area Cost", default=1.0, min=0.01, soft_max=10.0,
                                                         description="Travel cost factor of this material's area type")


def unregister_properties() -> None:
    for owner, names in (
        (bpy.types.Scene, ("navmesh",)),
        (bpy.types.Object, ("navmesh_role", "navmesh_area", "navmesh_area_cost")),
        (bpy.types.Material, ("navmesh_area", "navmesh_area_cost")),
    ):
        for name in names:
            delattr(owner, name)
