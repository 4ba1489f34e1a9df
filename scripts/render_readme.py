"""Render the README pictures of the demo level baked with the Human preset, drawn by the add-on's
own overlay code (tests/viewport_image.py: the level in flat Solid-style shading, our navmesh object
with its material, then the overlay), headless via bpy:

- docs/navmesh.png: seen from the south with the south wall hidden, the navmesh surface and the test
  path from the first room up the stairs to the balcony;
- docs/navmesh_clearance.png: from above, the portals coloured by clearance, with the legend;
- docs/navmesh_agent_reach.png: from above, with agent types Human (0.4 m) and Brute (0.9 m, same
  height, climb and slope: one navmesh), Brute active: where it fits, and its test path.

    .venv/bin/python scripts/render_readme.py [--output-dir docs]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402

import navmesh_addon  # noqa: E402
from navmesh_addon import mesh_write, operators_bake, operators_path, presets  # noqa: E402
from tests import viewport_image  # noqa: E402

DEMO = ROOT / "tests" / "fixtures" / "levels" / "demo_level.obj"
START, GOAL = (1.5, 1.2, 0.0), (15.0, 5.0, 1.6)
CUTAWAY = ("Wall_South",)  # hidden so the oblique view sees into the rooms
SIZE = (960, 540)
OBLIQUE = viewport_image.look_at((8.0, -9.0, 13.5), (8.0, 4.6, 0.0), up=(0.0, 0.0, 1.0))
TOP = viewport_image.look_at((8.0, 4.0, 16.0), (8.0, 4.0, 0.0))
PROJECTION = viewport_image.perspective(36.0, SIZE[0] / SIZE[1])


def bake_demo(context) -> bpy.types.Object:
    """Import the demo level and bake it with the Human preset through the add-on."""
    bpy.ops.wm.obj_import(filepath=str(DEMO))
    settings = context.scene.navmesh
    presets.apply_builtin(settings, "HUMAN")
    settings.source = "VISIBLE"
    return operators_bake.bake_to_object(context, settings)


def add_path_test(context, navmesh) -> None:
    """The viewport path test from START to GOAL, as a user sets it up (operator, then handles moved)."""
    context.view_layer.objects.active = navmesh
    bpy.ops.navmesh.add_path_test()
    settings = context.scene.navmesh
    settings.path_start.location, settings.path_goal.location = START, GOAL
    context.view_layer.update()
    operators_path.update_path(context.scene)
    if settings.path_status != "found":
        raise SystemExit(f"render_readme: no path from {START} to {GOAL} on the demo level ({settings.path_status})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    navmesh_addon.register()
    context = bpy.context
    navmesh = bake_demo(context)
    add_path_test(context, navmesh)
    settings = context.scene.navmesh

    for name in CUTAWAY:
        bpy.data.objects[name].hide_set(True)
    image = viewport_image.render(context, OBLIQUE, PROJECTION, SIZE)
    viewport_image.save_png(image, args.output_dir / "navmesh.png")

    for name in CUTAWAY:
        bpy.data.objects[name].hide_set(False)
    settings.show_clearance = True
    image = viewport_image.render(context, TOP, PROJECTION, SIZE)
    viewport_image.save_png(image, args.output_dir / "navmesh_clearance.png")

    mesh = mesh_write.read_navmesh_object(navmesh)
    print(f"{args.output_dir}: {mesh.polygon_count} polygons, path {settings.path_length:.1f} m")

    settings.show_clearance = False
    bpy.ops.navmesh.clear()
    for name, radius in (("Human", 0.4), ("Brute", 0.9)):
        bpy.ops.navmesh.agent_type_add()  # height, climb and slope from the Human preset applied above
        settings.agent_types[-1].name, settings.agent_types[-1].radius = name, radius
    bpy.ops.navmesh.bake()
    settings.path_agent = "Brute"
    context.view_layer.update()
    operators_path.update_path(context.scene)
    image = viewport_image.render(context, TOP, PROJECTION, SIZE)
    viewport_image.save_png(image, args.output_dir / "navmesh_agent_reach.png")
    print(f"Brute: path {settings.path_status}, {settings.path_length:.1f} m")


if __name__ == "__main__":
    main()
