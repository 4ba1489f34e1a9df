"""Agent presets: three built in (Human, Child, Large creature) plus user presets via Blender's preset system."""

from __future__ import annotations

import bpy
from bl_operators.presets import AddPresetBase
from bpy.props import EnumProperty

import blender_navmesh as lib

from . import units

PRESET_SUBDIR = "navmesh/agent"
MENU_TITLE = "Agent Presets"
# Bake parameters by their lib names and in lib's units (slope in degrees). Cell sizes follow
# Recast's advice of about half the agent radius.
_AGENTS = {
    "HUMAN": {
        "agent_radius": 0.4,
        "agent_height": 1.8,
        "agent_max_climb": 0.4,
        "agent_max_slope": 45.0,
        "cell_size": 0.2,
    },
    "CHILD": {
        "agent_radius": 0.25,
        "agent_height": 1.1,
        "agent_max_climb": 0.25,
        "agent_max_slope": 45.0,
        "cell_size": 0.1,
    },
    "LARGE": {
        "agent_radius": 1.2,
        "agent_height": 3.5,
        "agent_max_climb": 0.8,
        "agent_max_slope": 35.0,
        "cell_size": 0.4,
    },
}
# Every other length (area) a preset sets too, at lib's default in meters, so that a scene whose Unit
# Scale is not 1 gets them converted rather than left at the default in its own units (in a
# centimetre scene, edge and height errors of 2 mm). Those whose 0 means "none" (max_edge_len and the
# jump reach) are left as they are: 0 is 0 in every unit.
OTHER_LENGTHS = {
    p.name: p.default
    for p in lib.BAKE_PARAMETERS
    if p.unit in ("m", "m²") and p.default != 0 and p.name not in _AGENTS["HUMAN"]
}
BUILTIN = {key: {**values, **OTHER_LENGTHS} for key, values in _AGENTS.items()}
BUILTIN_ITEMS = (
    ("HUMAN", "Human", "Radius 0.4 m, height 1.8 m, climb 0.4 m, slope 45°"),
    ("CHILD", "Child / Small Creature", "Radius 0.25 m, height 1.1 m, climb 0.25 m, slope 45°"),
    ("LARGE", "Large Creature", "Radius 1.2 m, height 3.5 m, climb 0.8 m, slope 35°"),
)


def apply_builtin(settings, key: str) -> None:
    """Set the agent parameters (and matching cell sizes and path radius) of a built-in preset, and
    the other lengths (OTHER_LENGTHS), all given in meters, in the scene's units."""
    values = BUILTIN[key]
    for name, value in values.items():
        settings.set_bake_parameter(name, value)
    settings.path_radius = values["agent_radius"] / units.meters_per_unit(settings.id_data)


class NAVMESH_OT_agent_preset_builtin(bpy.types.Operator):
    """Apply a built-in agent preset"""

    bl_idname = "navmesh.agent_preset_builtin"
    bl_label = "Agent Preset"
    bl_options = {"REGISTER", "UNDO"}

    preset: EnumProperty(name="Preset", items=BUILTIN_ITEMS)

    def execute(self, context):
        apply_builtin(context.scene.navmesh, self.preset)
        # The menu shows the preset in use; a built-in one has no file the "-" button could remove.
        NAVMESH_MT_agent_presets.bl_label = dict((key, label) for key, label, _ in BUILTIN_ITEMS)[self.preset]
        return {"FINISHED"}


class NAVMESH_MT_agent_presets(bpy.types.Menu):
    """Built-in presets first, then the user's saved presets"""

    bl_label = "Agent Presets"  # Blender's preset operators change it to the preset in use
    preset_subdir = PRESET_SUBDIR
    preset_operator = "script.execute_preset"

    def draw(self, context):
        for key, label, _ in BUILTIN_ITEMS:
            self.layout.operator(NAVMESH_OT_agent_preset_builtin.bl_idname, text=label).preset = key
        self.layout.separator()
        bpy.types.Menu.draw_preset(self, context)


def menu_label() -> str:
    """What the preset menu shows: the preset last applied or saved, else its title (Blender's
    preset operators set the label, to "Presets" after a removal)."""
    label = NAVMESH_MT_agent_presets.bl_label
    return MENU_TITLE if label == "Presets" else label


def active_user_preset() -> str | None:
    """The saved user preset the menu shows, which "-" removes; None for a built-in one or none."""
    label = NAVMESH_MT_agent_presets.bl_label
    found = bpy.utils.preset_find(label, PRESET_SUBDIR) or bpy.utils.preset_find(
        label, PRESET_SUBDIR, display_name=True
    )
    return label if found else None


class NAVMESH_OT_agent_preset_add(AddPresetBase, bpy.types.Operator):
    """Save or remove a user agent preset"""

    bl_idname = "navmesh.agent_preset_add"
    bl_label = "Add Agent Preset"
    preset_menu = "NAVMESH_MT_agent_presets"
    preset_subdir = PRESET_SUBDIR
    preset_defines = ["settings = bpy.context.scene.navmesh"]
    preset_values = [f"settings.{p.name}" for p in lib.BAKE_PARAMETERS] + ["settings.path_radius"]


CLASSES = (NAVMESH_OT_agent_preset_builtin, NAVMESH_MT_agent_presets, NAVMESH_OT_agent_preset_add)
