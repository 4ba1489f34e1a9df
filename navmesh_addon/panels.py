"""3D Viewport sidebar, tab "Navmesh": agent, agent types, sources, advanced, bake, statistics,
display, path test, export."""

from __future__ import annotations

import bpy

import blender_navmesh as lib

from . import mesh_write, operators_bake, operators_path, overlay, presets, units

# Bake parameters the main panel shows; the Advanced panel shows all others.
AGENT_PARAMETERS = ("agent_radius", "agent_height", "agent_max_climb", "agent_max_slope")


def _result(context):
    """Our navmesh object to report on: the active one if it is ours, else the first in the scene."""
    active = context.active_object
    if active is not None and active.get(mesh_write.TAG):
        return active
    found = mesh_write.find_navmesh_objects(context.scene)
    return found[0] if found else None


def setting_warnings(settings) -> list[str]:
    """The current settings' warnings (each agent type group's, when the scene has agent types),
    shortened to what fits a sidebar line (the bake's report and the command line give them in full)."""
    try:
        targets = operators_bake.bake_targets(settings.id_data, settings)
    except lib.NavMeshError as exc:
        return [str(exc)]
    warnings = [warning.split(": ")[0] for target in targets for warning in target.params.warnings()]
    return list(dict.fromkeys(warnings))


class _Sidebar:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Navmesh"


class VIEW3D_PT_navmesh(_Sidebar, bpy.types.Panel):
    bl_label = "Navmesh"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        settings = context.scene.navmesh
        row = layout.row(align=True)
        row.menu(presets.NAVMESH_MT_agent_presets.__name__, text=presets.menu_label())
        row.operator(presets.NAVMESH_OT_agent_preset_add.bl_idname, text="", icon="ADD")
        remove = row.row(align=True)
        remove.enabled = presets.active_user_preset() is not None  # "-" removes only a saved user preset
        remove.operator(presets.NAVMESH_OT_agent_preset_add.bl_idname, text="", icon="REMOVE").remove_active = True
        col = layout.column(align=True)
        if len(settings.agent_types):
            col.label(text="Agents: the Agent Types list below", icon="COMMUNITY")
        else:
            for name in AGENT_PARAMETERS:
                col.prop(settings, name)
        for warning in setting_warnings(settings):
            layout.label(text=warning, icon="ERROR")
        if settings.bake_stage:
            layout.progress(factor=settings.bake_progress, text=f"{settings.bake_stage} (Esc to cancel)")
        else:
            row = layout.row(align=True)
            row.operator("navmesh.bake", icon="MOD_MESHDEFORM")
            row.operator("navmesh.clear", text="", icon="TRASH")
        obj = _result(context)
        if obj is not None:
            info = obj.get("navmesh", {})
            box = layout.box()
            box.label(text=obj.name, icon="OUTLINER_OB_MESH")
            box.label(text=f"Polygons: {info.get('polygons', 0)}")
            box.label(text=f"Area: {info.get('area', 0.0):.1f} m²")
            if "islands" in info:
                box.label(text=f"Islands: {info['islands']}")
            if "bake_time" in info:
                box.label(text=f"Bake time: {info['bake_time']:.2f} s")
            count = len(info.get("warnings", ())) + len(info.get("geometry_warnings", ()))
            if count:
                box.label(text=f"Warnings: {count} (see the Info log)", icon="ERROR")
            if mesh_write.edited_by_hand(obj):
                box.label(text="Edited by hand: the edited faces are used", icon="EDITMODE_HLT")
            try:
                angle, offset = mesh_write.object_motion(obj)
            except lib.NavMeshError:
                box.label(text="Tilted or scaled: clear with Alt+R, Alt+S", icon="ERROR")
            else:
                if angle or offset.any():
                    box.label(text="Moved in Object Mode: used where it is now", icon="OBJECT_ORIGIN")
            stale = operators_bake.out_of_date(obj, settings)
            if stale:
                box.label(text=f"Out of date: {stale}", icon="FILE_REFRESH")


_REACH: dict[tuple, float] = {}  # (navmesh revision, radius) -> reach area, so redraws do not recompute it


def reach_area(nav, radius: float) -> float:
    """Area (m²) of a navmesh object an agent of `radius` can stand on (overlay.reach_area, cached)."""
    key = (mesh_write.revision(nav), round(radius, 6))
    if key not in _REACH:
        _REACH.clear()
        _REACH[key] = overlay.reach_area(mesh_write.read_navmesh_object(nav), radius)
    return _REACH[key]


class VIEW3D_PT_navmesh_agents(_Sidebar, bpy.types.Panel):
    bl_label = "Agent Types"
    bl_parent_id = "VIEW3D_PT_navmesh"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.navmesh
        row = layout.row()
        row.template_list("NAVMESH_UL_agent_types", "", settings, "agent_types", settings, "agent_types_index", rows=3)
        buttons = row.column(align=True)
        buttons.operator("navmesh.agent_type_add", text="", icon="ADD")
        buttons.operator("navmesh.agent_type_remove", text="", icon="REMOVE")
        layout.prop(settings, "show_agent_reach")
        if not 0 <= settings.agent_types_index < len(settings.agent_types):
            return
        agent = settings.agent_types[settings.agent_types_index]
        layout.operator(
            "navmesh.bake", text=f"Bake {agent.name}'s Navmesh", icon="MOD_MESHDEFORM"
        ).agent_type = agent.name
        nav = operators_bake.agent_navmesh(context.scene, agent)
        box = layout.box()
        if nav is None:
            box.label(text=f"{agent.name}: not baked yet")
            return
        info = nav.get("navmesh", {})
        box.label(text=nav.name, icon="OUTLINER_OB_MESH")
        box.label(text=f"Serves: {', '.join(info.get('agent_types', ()))}")
        total = info.get("area", 0.0)
        try:
            usable = reach_area(nav, agent.radius * units.meters_per_unit(context.scene))
        except lib.NavMeshError as exc:
            box.label(text=str(exc), icon="ERROR")
            return
        box.label(text=f"{agent.name} reaches {usable:.1f} of {total:.1f} m² ({usable / max(total, 1e-9):.0%})")


class VIEW3D_PT_navmesh_sources(_Sidebar, bpy.types.Panel):
    bl_label = "Sources"
    bl_parent_id = "VIEW3D_PT_navmesh"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        settings = context.scene.navmesh
        layout.prop(settings, "source")
        if settings.source == "COLLECTION":
            layout.prop(settings, "collection")
        layout.operator("navmesh.add_seed", icon="EMPTY_SINGLE_ARROW")
        obj = context.active_object
        if obj is not None and not obj.get(mesh_write.TAG):
            box = layout.box()
            box.label(text=obj.name, icon="OBJECT_DATA")
            box.prop(obj, "navmesh_role")
            row = box.row(align=True)
            row.prop(obj, "navmesh_area")
            row.menu("NAVMESH_MT_area_types", text="", icon="DOWNARROW_HLT")
            named = settings.area_type(obj.navmesh_area)
            if named is not None:
                box.label(text=f"{named.name}: cost {named.cost:g}" + ("" if named.walkable else ", not walkable"))
            else:
                box.prop(obj, "navmesh_area_cost")
            if obj.navmesh_role == "OFF_MESH_LINK":
                box.prop(obj, "navmesh_link_bidirectional")
                box.prop(obj, "navmesh_link_radius")
            mat = obj.active_material
            if mat is not None:
                box.label(text=mat.name, icon="MATERIAL")
                row = box.row(align=True)
                row.prop(mat, "navmesh_area")
                row.menu("NAVMESH_MT_area_types_material", text="", icon="DOWNARROW_HLT")
                box.prop(mat, "navmesh_area_cost")


class VIEW3D_PT_navmesh_areas(_Sidebar, bpy.types.Panel):
    bl_label = "Area Types"
    bl_parent_id = "VIEW3D_PT_navmesh"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        settings = context.scene.navmesh
        row = self.layout.row()
        row.template_list("NAVMESH_UL_area_types", "", settings, "area_types", settings, "area_types_index", rows=3)
        buttons = row.column(align=True)
        buttons.operator("navmesh.area_type_add", text="", icon="ADD")
        buttons.operator("navmesh.area_type_remove", text="", icon="REMOVE")


class VIEW3D_PT_navmesh_advanced(_Sidebar, bpy.types.Panel):
    bl_label = "Advanced"
    bl_parent_id = "VIEW3D_PT_navmesh"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        settings = context.scene.navmesh
        col = layout.column(align=True)
        for parameter in lib.BAKE_PARAMETERS:
            if parameter.name not in AGENT_PARAMETERS:
                col.prop(settings, parameter.name)


class VIEW3D_PT_navmesh_display(_Sidebar, bpy.types.Panel):
    bl_label = "Display"
    bl_parent_id = "VIEW3D_PT_navmesh"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        settings = context.scene.navmesh
        layout.prop(settings, "show_overlay")
        layout.row(align=True).prop(settings, "color_by", expand=True)
        layout.prop(settings, "navmesh_color")
        row = layout.row(align=True)
        row.prop(settings, "show_boundary", toggle=True)
        row.prop(settings, "show_portals", toggle=True)
        row.prop(settings, "show_clearance", toggle=True)


class VIEW3D_PT_navmesh_path(_Sidebar, bpy.types.Panel):
    bl_label = "Path Test"
    bl_parent_id = "VIEW3D_PT_navmesh"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        settings = context.scene.navmesh
        layout.operator("navmesh.add_path_test", icon="EMPTY_ARROWS")
        layout.prop_search(settings, "path_agent", settings, "agent_types")
        if settings.path_agent and settings.path_agent not in settings.agent_types:
            layout.label(text=f"{settings.path_agent} is no agent type: pick one", icon="ERROR")
        elif settings.path_agent:
            nav, radius = operators_path.path_target(context.scene)
            meters = radius * units.meters_per_unit(context.scene)
            layout.label(text=f"On {nav.name if nav else '(not baked)'} at radius {meters:.2f} m")
        else:
            layout.prop(settings, "path_navmesh")
            layout.prop(settings, "path_radius")
        layout.prop(settings, "path_show_portals")
        if settings.path_status:
            box = layout.box()
            box.label(text=f"Status: {settings.path_status}")
            box.label(text=f"Length: {units.length_text(context.scene, settings.path_length)}")
            box.label(text=f"Search nodes: {settings.path_polygons}")
            box.label(text=f"Query time: {settings.path_time_ms:.2f} ms")
        layout.operator("navmesh.path_to_curve", icon="CURVE_PATH")


class VIEW3D_PT_navmesh_export(_Sidebar, bpy.types.Panel):
    bl_label = "Export"
    bl_parent_id = "VIEW3D_PT_navmesh"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        row = self.layout.row(align=True)
        row.operator("export_scene.navmesh_json", text="JSON")
        row.operator("export_scene.navmesh_dae", text="COLLADA")
        row.operator("export_scene.navmesh_glb", text="glTF")
        row.operator("export_scene.navmesh_detour", text="Detour")
        row.operator("export_scene.navmesh_godot", text="Godot")


CLASSES = (
    VIEW3D_PT_navmesh,
    VIEW3D_PT_navmesh_agents,
    VIEW3D_PT_navmesh_sources,
    VIEW3D_PT_navmesh_areas,
    VIEW3D_PT_navmesh_advanced,
    VIEW3D_PT_navmesh_display,
    VIEW3D_PT_navmesh_path,
    VIEW3D_PT_navmesh_export,
)
