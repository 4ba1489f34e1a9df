"""The scene's agent types: how they share navmeshes (one per height, climb and slope, baked at the
group's smallest radius; clearance serves the wider ones), and the list's add and remove."""

from __future__ import annotations

import math
from dataclasses import replace

import bpy

import blender_navmesh as lib

from . import mesh_write, units


def group_key(agent) -> tuple[float, float, float]:
    """What a navmesh bake depends on besides the radius: height, climb and slope (degrees), rounded
    as the bake parameters are."""
    return round(agent.height, 6), round(agent.max_climb, 6), round(math.degrees(agent.max_slope), 4)


def agent_groups(settings) -> list[list]:
    """The agent types grouped by group_key, groups and members in list order."""
    groups: dict[tuple, list] = {}
    for agent in settings.agent_types:
        groups.setdefault(group_key(agent), []).append(agent)
    return list(groups.values())


def group_params(settings, group) -> lib.BakeParams:
    """The bake parameters of a group: the settings' with the group's height, climb and slope and its
    smallest radius (NavMeshError if out of range)."""
    height, climb, slope = group_key(group[0])
    meters = units.meters_per_unit(settings.id_data)
    return replace(
        settings.to_bake_params(),
        agent_radius=round(min(a.radius for a in group) * meters, 6),
        agent_height=round(height * meters, 6),
        agent_max_climb=round(climb * meters, 6),
        agent_max_slope=slope,
    )


def navmesh_name(base: str, group) -> str:
    """The name (and tag) of a group's navmesh object: the base result name and its first type's name."""
    return f"{base}_{group[0].name}"


class NAVMESH_UL_agent_types(bpy.types.UIList):
    """One row per agent type: name, radius, height, climb, slope."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.prop(item, "name", text="", emboss=False)
        for name in ("radius", "height", "max_climb", "max_slope"):
            row.prop(item, name, text="")


class NAVMESH_OT_agent_type_add(bpy.types.Operator):
    """Add an agent type with the Agent fields' radius, height, climb and slope (pick a preset first)"""

    bl_idname = "navmesh.agent_type_add"
    bl_label = "Add Agent Type"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        settings = context.scene.navmesh
        names = {agent.name for agent in settings.agent_types}
        agent = settings.agent_types.add()
        agent.name = next(name for k in range(1, len(names) + 2) if (name := f"Agent {k}") not in names)
        agent.radius, agent.height = settings.agent_radius, settings.agent_height
        agent.max_climb, agent.max_slope = settings.agent_max_climb, settings.agent_max_slope
        settings.agent_types_index = len(settings.agent_types) - 1
        return {"FINISHED"}


class NAVMESH_OT_agent_type_remove(bpy.types.Operator):
    """Remove the active agent type; its navmesh goes with it unless other types share it"""

    bl_idname = "navmesh.agent_type_remove"
    bl_label = "Remove Agent Type"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        settings = context.scene.navmesh
        if 0 <= settings.agent_types_index < len(settings.agent_types):
            return True
        cls.poll_message_set("no agent type is selected")
        return False

    def execute(self, context):
        from . import operators_bake  # it imports this module

        scene, settings = context.scene, context.scene.navmesh
        agent = settings.agent_types[settings.agent_types_index]
        removed, key = agent.name, group_key(agent)
        nav = operators_bake.agent_navmesh(scene, agent)
        settings.agent_types.remove(settings.agent_types_index)
        if settings.path_agent == removed:
            settings.path_agent = ""
        settings.agent_types_index = min(settings.agent_types_index, len(settings.agent_types) - 1)
        rest = next((group for group in agent_groups(settings) if group_key(group[0]) == key), None)
        if nav is None:
            self.report({"INFO"}, f"Removed agent type {removed}")
        elif rest is None:
            mesh_write.remove_navmesh_object(nav)
            self.report({"INFO"}, f"Removed agent type {removed} and its navmesh")
        else:
            # The group's next type now names the shared navmesh, so the next bake replaces it.
            nav[mesh_write.TAG] = nav.name = navmesh_name(operators_bake.result_name(scene, settings), rest)
            self.report({"INFO"}, f"Removed agent type {removed}; {rest[0].name} keeps its navmesh")
        return {"FINISHED"}


CLASSES = (NAVMESH_UL_agent_types, NAVMESH_OT_agent_type_add, NAVMESH_OT_agent_type_remove)
