"""Render docs/navmesh.png for the README: the demo level baked with the Human preset, its navmesh
polygons and a path from the first room up the stairs to the balcony (Workbench, headless via bpy).

    .venv/bin/python scripts/render_readme.py [--output docs/navmesh.png]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402
import numpy as np  # noqa: E402
from mathutils import Vector  # noqa: E402

import lib  # noqa: E402
import lib.query  # noqa: E402
import navmesh_addon  # noqa: E402
from navmesh_addon import mesh_write, operators_bake, presets  # noqa: E402

DEMO = ROOT / "tests" / "fixtures" / "levels" / "demo_level.obj"
START, GOAL = (1.5, 1.2, 0.0), (15.0, 5.0, 1.6)
CUTAWAY = ("Wall_South",)  # hidden so the camera sees into the rooms
LIFT = 0.03  # navmesh drawn just above the floors it covers


def material(name: str, rgba: tuple[float, float, float, float]) -> bpy.types.Material:
    mat = bpy.data.materials.new(name)
    mat.diffuse_color = rgba
    return mat


def paint(obj, mat) -> None:
    obj.data.materials.clear()
    obj.data.materials.append(mat)


def bake_demo() -> tuple[bpy.types.Object, lib.NavMesh]:
    """Import the demo level and bake it with the Human preset through the add-on."""
    bpy.ops.wm.obj_import(filepath=str(DEMO))
    settings = bpy.context.scene.navmesh
    presets.apply_builtin(settings, "HUMAN")
    settings.source = "VISIBLE"
    obj = operators_bake.bake_to_object(bpy.context, settings)
    return obj, mesh_write.read_navmesh_object(obj)


def style_level(navmesh_obj) -> None:
    floor = material("Floor", (0.78, 0.77, 0.74, 1.0))
    wall = material("Wall", (0.55, 0.56, 0.6, 1.0))
    for obj in bpy.context.scene.objects:
        if obj.type != "MESH" or obj is navmesh_obj:
            continue
        obj.hide_render = obj.name in CUTAWAY
        paint(obj, floor if obj.name == "Floor" or obj.name.startswith(("Stair", "Balcony", "Ramp", "Stage")) else wall)


def show_navmesh(obj) -> None:
    """Navmesh faces in teal with dark outlines (a wireframe copy), lifted off the floor."""
    for collection in obj.users_collection:
        collection.hide_render = False
    obj.hide_render = False
    obj.location.z = LIFT
    paint(obj, material("Navmesh", (0.2, 0.75, 0.7, 1.0)))
    outline = obj.copy()
    outline.data = obj.data.copy()
    outline.name = "Navmesh_outline"
    obj.users_collection[0].objects.link(outline)
    outline.location.z = LIFT + 0.01
    wire = outline.modifiers.new("outline", "WIREFRAME")
    wire.thickness = 0.05
    paint(outline, material("Outline", (0.05, 0.3, 0.3, 1.0)))


def add_path(points: np.ndarray) -> None:
    curve = bpy.data.curves.new("Path", "CURVE")
    curve.dimensions = "3D"
    curve.bevel_depth = 0.08
    spline = curve.splines.new("POLY")
    spline.points.add(len(points) - 1)
    lifted = np.hstack([points + [0.0, 0.0, 0.15], np.ones((len(points), 1))])
    spline.points.foreach_set("co", lifted.ravel())
    obj = bpy.data.objects.new("Path", curve)
    bpy.context.scene.collection.objects.link(obj)
    curve.materials.append(material("PathColor", (1.0, 0.45, 0.05, 1.0)))
    for at, rgba in ((points[0], (0.1, 0.8, 0.2, 1.0)), (points[-1], (0.9, 0.15, 0.15, 1.0))):
        bpy.ops.mesh.primitive_uv_sphere_add(radius=0.3, location=Vector(at) + Vector((0, 0, 0.3)))
        paint(bpy.context.active_object, material("Marker", rgba))


def camera_and_render(output: Path) -> None:
    scene = bpy.context.scene
    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(cam)
    cam.location = (8.0, -9.0, 13.5)
    cam.rotation_euler = (Vector((8.0, 4.6, 0.0)) - cam.location).to_track_quat("-Z", "Y").to_euler()
    cam.data.lens = 31
    scene.camera = cam
    scene.render.engine = "BLENDER_WORKBENCH"
    shading = scene.display.shading
    shading.light = "STUDIO"
    shading.color_type = "MATERIAL"
    shading.show_shadows = True
    shading.show_cavity = True
    scene.world = scene.world or bpy.data.worlds.new("World")
    scene.world.color = (0.93, 0.94, 0.96)
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 960, 540, 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.render.image_settings.compression = 90
    scene.render.filepath = str(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.render.render(write_still=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "navmesh.png")
    args = parser.parse_args()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    navmesh_addon.register()
    obj, mesh = bake_demo()
    path = lib.query.find_path(mesh, START, GOAL)
    if path.status != "found":
        raise SystemExit(f"render_readme: no path from {START} to {GOAL} on the demo level ({path.status}: {path.reason})")
    style_level(obj)
    show_navmesh(obj)
    add_path(np.asarray(path.points, dtype=np.float64))
    camera_and_render(args.output.resolve())
    print(f"{args.output}: {mesh.polygon_count} polygons, path {path.length:.1f} m")


if __name__ == "__main__":
    main()
