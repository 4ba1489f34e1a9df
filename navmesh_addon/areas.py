"""The scene's table of named area types (mud, water, road): adding and removing entries, and
the list the sidebar shows. Objects and materials pick an area by its id."""

from __future__ import annotations

import bpy


class NAVMESH_UL_area_types(bpy.types.UIList):
    """One row per area type: colour, name, id, cost, walkable."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.prop(item, "color", text="")
        row.prop(item, "name", text="", emboss=False)
        row.prop(item, "area_id", text="")
        row.prop(item, "cost", text="")
        row.prop(item, "walkable", text="", icon="CHECKBOX_HLT" if item.walkable else "CHECKBOX_DEHLT")


class NAVMESH_OT_area_type_add(bpy.types.Operator):
    """Add a named area type with the lowest id not in the table yet (0 is ground)"""

    bl_idname = "navmesh.area_type_add"
    bl_label = "Add Area Type"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        settings = context.scene.navmesh
        used = {entry.area_id for entry in settings.area_types}
        free = next((k for k in range(1, 64) if k not in used), None)
        if free is None:
            self.report({"ERROR"}, "every area id from 1 to 63 is in the table already")
            return {"CANCELLED"}
        entry = settings.area_types.add()
        entry.name, entry.area_id = f"Area {free}", free
        settings.area_types_index = len(settings.area_types) - 1
        return {"FINISHED"}


class NAVMESH_OT_area_type_remove(bpy.types.Operator):
    """Remove the active area type from the table (objects keep their area id)"""

    bl_idname = "navmesh.area_type_remove"
    bl_label = "Remove Area Type"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        settings = context.scene.navmesh
        if 0 <= settings.area_types_index < len(settings.area_types):
            return True
        cls.poll_message_set("no area type is selected")
        return False

    def execute(self, context):
        settings = context.scene.navmesh
        settings.area_types.remove(settings.area_types_index)
        settings.area_types_index = min(settings.area_types_index, len(settings.area_types) - 1)
        return {"FINISHED"}


class NAVMESH_OT_area_type_pick(bpy.types.Operator):
    """Give the active object (or, with `material` on, its active material) this area type's id"""

    bl_idname = "navmesh.area_type_pick"
    bl_label = "Pick Area Type"
    bl_options = {"REGISTER", "UNDO"}

    area_id: bpy.props.IntProperty(min=0, max=63)
    material: bpy.props.BoolProperty(default=False)

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        if obj is None:
            cls.poll_message_set("select the object to give an area type")
            return False
        refusal = not_editable(obj)
        if refusal and (obj.active_material is None or not_editable(obj.active_material)):
            cls.poll_message_set(refusal)
            return False
        return True

    def execute(self, context):
        target = context.active_object.active_material if self.material else context.active_object
        if target is None:
            self.report({"ERROR"}, "the active object has no active material")
            return {"CANCELLED"}
        refusal = not_editable(target)
        if refusal:
            self.report({"ERROR"}, refusal)
            return {"CANCELLED"}
        target.navmesh_area = self.area_id
        return {"FINISHED"}


def not_editable(block) -> str | None:
    """Why an object or material cannot be given an area type (Blender would not save it), or None:
    it is linked from a library file, or a library override (area types are not overridable)."""
    kind = "object" if isinstance(block, bpy.types.Object) else "material"
    if block.library is not None:
        where = bpy.path.basename(block.library.filepath)
        return f"{kind} {block.name!r} is linked from {where}: make it local (Object > Relations > Make Local) first"
    if block.override_library is not None:
        return (
            f"{kind} {block.name!r} is a library override, which keeps no area type: "
            "make it local (Object > Relations > Make Local) first"
        )
    return None


class NAVMESH_MT_area_types(bpy.types.Menu):
    """The scene's area types, to give the active object one"""

    bl_label = "Area Types"
    for_material = False

    def draw(self, context):
        layout = self.layout
        entries = [(0, "Ground")] + [(entry.area_id, entry.name) for entry in context.scene.navmesh.area_types]
        for area_id, name in entries:
            pick = layout.operator(NAVMESH_OT_area_type_pick.bl_idname, text=f"{name} ({area_id})")
            pick.area_id, pick.material = area_id, self.for_material


class NAVMESH_MT_area_types_material(NAVMESH_MT_area_types):
    """The scene's area types, to give the active object's active material one"""

    for_material = True


CLASSES = (
    NAVMESH_UL_area_types,
    NAVMESH_OT_area_type_add,
    NAVMESH_OT_area_type_remove,
    NAVMESH_OT_area_type_pick,
    NAVMESH_MT_area_types,
    NAVMESH_MT_area_types_material,
)
