"""Agent presets: three built in (Human, Child, Large creature) plus user presets via Blender's preset system."""
from __future__ import annotations

import math

import bpy
from bl_operators.presets import AddPresetBase
from bpy.props import EnumProperty

PRESET_SUBDIR = "navmesh/agent"
# Cell sizes follow Recast's advice of about half the radius across and half of that upwards.
BUILTIN = {
    "HUMAN": {"agent_radius": 0.4, "agent_height": 1.8, "agent_max_climb": 0.4, "agent_max_slope_deg": 45.0,
              "cell_size": 0.2, "cell_height": 0.1},
    "CHILD": {"agent_radius": 0.25, "agent_height": 1.1, "agent_max_climb": 0.25, "agent_max_slope_deg": 45.0,
              "cell_size": 0.1, "cell_height": 0.05},
    "LARGE": {"agent_radius": 1.2, "agent_height": 3.5, "agent_max_climb": 0.8, "agent_max_slope_deg": 35.0,
              "cell_size": 0.4, "cell_height": 0.2},
}
BUILTIN_ITEMS = (
    ("HUMAN", "Human", "Radius 0.4 m, height 1.8 m, climb 0.4 m, slope 45°"),
    ("CHILD", "Child / Small Creature", "Radius 0.25 m, height 1.1 m, climb 0.25 m, slope 45°"),
    ("LARGE", "Large Creature", "Radius 1.2 m, height 3.5 m, climb 0.8 m, slope 35°"),
)


def apply_builtin(settings, key: str) -> None:
    """Set the agent parameters (and matching cell sizes and path radius) of a built-in preset."""
    values = BUILTIN[key]
    for name, value in values.items():
        if name == "agent_max_slope_deg":
            settings.agent_max_slope = math.radians(value)
        else:
            setattr(settings, name, value)
    settings.path_radius = values["agent_radius"]


class NAVMESH_OT_agent_preset_builtin(bpy.types.Operator):
    """Apply a built-in agent preset"""

    bl_idname = "navmesh.agent_preset_builtin"
    bl_label = "Agent Preset"
    bl_options = {"REGISTER", "UNDO"}

    preset: EnumProperty(name="Preset", items=BUILTIN_ITEMS)

    def execute(self, context):
        apply_builtin(context.scene.navmesh, self.preset)
        return {"FINISHED"}


class NAVMESH_MT_agent_presets(bpy.types.Menu):
    """Built-in presets first, then the user's saved presets"""

    bl_label = "Agent Presets"
    preset_subdir = PRESET_SUBDIR
    preset_operator = "script.execute_preset"

    def draw(self, context):
        for key, label, _ in BUILTIN_ITEMS:
            self.layout.operator(NAVMESH_OT_agent_preset_builtin.bl_idname, text=label).preset = key
        self.layout.separator()
        bpy.types.Menu.draw_preset(self, context)


class NAVMESH_OT_agent_preset_add(AddPresetBase, bpy.types.Operator):
    """Save or remove a user agent preset"""

    bl_idname = "navmesh.agent_preset_add"
    bl_label = "Add Agent Preset"
    preset_menu = "NAVMESH_MT_agent_presets"
    preset_subdir = PRESET_SUBDIR
    preset_defines = ["settings = bpy.context.scene.navmesh"]
    preset_values = [f"settings.{name}" for name in (
        "agent_radius", "agent_height", "agent_max_climb", "agent_max_slope", "cell_size", "cell_height",
        "region_min_area", "max_verts_per_poly", "max_edge_error", "max_height_error", "path_radius",
    )]


CLASSES = (NAVMESH_OT_agent_preset_builtin, NAVMESH_MT_agent_presets, NAVMESH_OT_agent_preset_add)
