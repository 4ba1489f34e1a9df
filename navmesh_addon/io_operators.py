"""File > Export (JSON, COLLADA, glTF, Detour, Godot) and File > Import (JSON) for navmesh objects.

Exports act on the active navmesh object, or on the only one in the scene. Import reads and checks
the whole file before touching the scene, so a bad file leaves nothing behind.
"""

from __future__ import annotations

from pathlib import Path

import bpy
from bpy.props import BoolProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

import blender_navmesh as lib

from . import io_formats, mesh_write


def find_navmesh_object(context) -> bpy.types.Object:
    """The active object if it is a navmesh object, else the only navmesh object in the scene."""
    active = context.active_object
    if active is not None and active.get(mesh_write.TAG):
        return active
    found = mesh_write.find_navmesh_objects(context.scene)
    if not found:
        raise lib.NavMeshError("there is no navmesh object in the scene: bake a navmesh first")
    if len(found) > 1:
        raise lib.NavMeshError(
            f"the scene has {len(found)} navmesh objects ({', '.join(o.name for o in found)}): "
            "make the one to export active"
        )
    return found[0]


class _ExportNavmesh(ExportHelper):
    """Shared execute for the export operators; subclasses set fmt and their options."""

    fmt = ""

    def format_options(self) -> dict:
        return {}

    def execute(self, context):
        try:
            obj = find_navmesh_object(context)
            mesh = mesh_write.read_navmesh_object(obj)
            path = io_formats.write_navmesh_file(
                mesh, self.filepath, self.fmt, name=obj.name, context=context, **self.format_options()
            )
        except lib.NavMeshError as exc:
            self.report({"ERROR"}, f"Navmesh export failed: {exc}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Exported {mesh.polygon_count} navmesh polygons to {path}")
        for warning in io_formats.export_warnings(mesh, self.fmt):
            self.report({"WARNING"}, f"Navmesh export: {warning}")
        return {"FINISHED"}


class EXPORT_SCENE_OT_navmesh_json(_ExportNavmesh, bpy.types.Operator):
    """Export the navmesh as JSON: lossless, readable by lib.load and File > Import"""

    bl_idname = "export_scene.navmesh_json"
    bl_label = "Export Navmesh JSON"
    bl_options = {"PRESET"}
    filename_ext = ".json"
    fmt = "json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})
    y_up: BoolProperty(
        name="Y Up",
        description="Write coordinates Y-up for engines: Blender (x, y, z) becomes (x, z, -y)",
        default=False,
    )

    def format_options(self) -> dict:
        return {"y_up": self.y_up}


class EXPORT_SCENE_OT_navmesh_dae(_ExportNavmesh, bpy.types.Operator):
    """Export the navmesh as COLLADA 1.4.1: its surface on the real floor, with navmesh data in an extra block"""

    bl_idname = "export_scene.navmesh_dae"
    bl_label = "Export Navmesh Collada"
    bl_options = {"PRESET"}
    filename_ext = ".dae"
    fmt = "dae"
    filter_glob: StringProperty(default="*.dae", options={"HIDDEN"})
    y_up: BoolProperty(
        name="Y Up",
        description="Write Y_UP with coordinates (x, z, -y) instead of Blender's Z_UP",
        default=False,
    )
    godot_suffix: BoolProperty(
        name="Godot -navmesh Suffix",
        description="Name the node '<name>-navmesh' so Godot imports it as a navigation mesh",
        default=True,
    )
    triangulate: BoolProperty(
        name="Triangulate",
        description="Write every detail triangle instead of keeping the polygons that lie flat on the floor whole",
        default=False,
    )

    def format_options(self) -> dict:
        return {"y_up": self.y_up, "godot_suffix": self.godot_suffix, "triangulate": self.triangulate}


class EXPORT_SCENE_OT_navmesh_glb(_ExportNavmesh, bpy.types.Operator):
    """Export the navmesh surface on the real floor as binary glTF (+Y up), its polygons in vertex attributes"""

    bl_idname = "export_scene.navmesh_glb"
    bl_label = "Export Navmesh glTF"
    bl_options = {"PRESET"}
    filename_ext = ".glb"
    fmt = "glb"
    filter_glob: StringProperty(default="*.glb", options={"HIDDEN"})
    godot_suffix: BoolProperty(
        name="Godot -navmesh Suffix",
        description="Name the node and mesh '<name>-navmesh' so Godot imports it as a navigation mesh",
        default=True,
    )

    def format_options(self) -> dict:
        return {"godot_suffix": self.godot_suffix}


class EXPORT_SCENE_OT_navmesh_detour(_ExportNavmesh, bpy.types.Operator):
    """Export the navmesh as Detour's binary navmesh (Y-up tile set) for recast-navigation, Babylon.js and DotRecast"""

    bl_idname = "export_scene.navmesh_detour"
    bl_label = "Export Navmesh Detour"
    bl_options = {"PRESET"}
    filename_ext = ".bin"
    fmt = "bin"
    filter_glob: StringProperty(default="*.bin", options={"HIDDEN"})
    tile_size: FloatProperty(
        name="Tile Size",
        description="Cut the navmesh into square tiles this wide; 0: one tile unless the level is too big for one",
        default=0.0,
        min=0.0,
        subtype="DISTANCE",
        unit="LENGTH",
    )

    whole_polygons: BoolProperty(
        name="Whole Polygons",
        description="Write the polygons as baked. Off: cut them along a grid of 8 agent radii (at least 16 "
        "cells), so Detour's search, which costs paths by polygon-edge midpoints, finds paths near ours",
        default=False,
    )

    def format_options(self) -> dict:
        return {"tile_size": self.tile_size or None, "piece_size": 0.0 if self.whole_polygons else None}


class EXPORT_SCENE_OT_navmesh_godot(_ExportNavmesh, bpy.types.Operator):
    """Export the navmesh as a Godot 3 NavigationMesh resource (.tres, Y-up) that keeps its convex polygons"""

    bl_idname = "export_scene.navmesh_godot"
    bl_label = "Export Navmesh Godot"
    bl_options = {"PRESET"}
    filename_ext = ".tres"
    fmt = "tres"
    filter_glob: StringProperty(default="*.tres", options={"HIDDEN"})


class IMPORT_SCENE_OT_navmesh_json(bpy.types.Operator, ImportHelper):
    """Import a navmesh JSON file as a navmesh object with all its attributes"""

    bl_idname = "import_scene.navmesh_json"
    bl_label = "Import Navmesh JSON"
    bl_options = {"REGISTER", "UNDO"}
    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    def execute(self, context):
        stem = Path(self.filepath).stem
        name = _unused_navmesh_name(stem)
        try:
            mesh = io_formats.read_navmesh_file(self.filepath)
            obj = mesh_write.write_navmesh_object(context.scene, mesh, name)
        except lib.NavMeshError as exc:
            self.report({"ERROR"}, f"Navmesh import failed: {exc}")
            return {"CANCELLED"}
        for other in context.view_layer.objects:
            other.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        kept = f"; the navmesh {stem!r} already in the file is kept" if name != stem else ""
        self.report({"INFO"}, f"Imported {mesh.polygon_count} navmesh polygons as {obj.name!r}{kept}")
        return {"FINISHED"}


def _unused_navmesh_name(stem: str) -> str:
    """stem, or stem.001, .002, ... when a navmesh of ours (a bake or an earlier import) has it: an
    import never replaces a navmesh."""
    taken = {obj.get(mesh_write.TAG) for obj in bpy.data.objects}
    name, k = stem, 0
    while name in taken:
        k += 1
        name = f"{stem}.{k:03d}"
    return name


CLASSES = (
    EXPORT_SCENE_OT_navmesh_json,
    EXPORT_SCENE_OT_navmesh_dae,
    EXPORT_SCENE_OT_navmesh_glb,
    EXPORT_SCENE_OT_navmesh_detour,
    EXPORT_SCENE_OT_navmesh_godot,
    IMPORT_SCENE_OT_navmesh_json,
)


def menu_export(self, context):
    """Appended to File > Export."""
    self.layout.operator(EXPORT_SCENE_OT_navmesh_json.bl_idname, text="Navmesh (.json)")
    self.layout.operator(EXPORT_SCENE_OT_navmesh_dae.bl_idname, text="Navmesh Collada (.dae)")
    self.layout.operator(EXPORT_SCENE_OT_navmesh_glb.bl_idname, text="Navmesh glTF (.glb)")
    self.layout.operator(EXPORT_SCENE_OT_navmesh_detour.bl_idname, text="Navmesh Detour (.bin)")
    self.layout.operator(EXPORT_SCENE_OT_navmesh_godot.bl_idname, text="Navmesh Godot (.tres)")


def menu_import(self, context):
    """Appended to File > Import."""
    self.layout.operator(IMPORT_SCENE_OT_navmesh_json.bl_idname, text="Navmesh (.json)")
