"""Navmesh add-on: registration only; each module holds what one part of the UI does."""

import bpy

from . import agents, areas, cli, io_operators, operators_bake, operators_path, overlay, panels, presets, properties

_CLASSES = (
    *properties.CLASSES,
    *areas.CLASSES,
    *agents.CLASSES,
    *presets.CLASSES,
    *operators_bake.CLASSES,
    *operators_path.CLASSES,
    *io_operators.CLASSES,
    *panels.CLASSES,
)


def register() -> None:
    for cls in _CLASSES:
        bpy.utils.register_class(cls)
    properties.register_properties()
    bpy.types.TOPBAR_MT_file_export.append(io_operators.menu_export)
    bpy.types.TOPBAR_MT_file_import.append(io_operators.menu_import)
    operators_path.register_handlers()
    operators_bake.register_handlers()
    overlay.register_draw_handler()
    cli.register()


def unregister() -> None:
    cli.unregister()
    overlay.unregister_draw_handler()
    operators_bake.unregister_handlers()
    operators_path.unregister_handlers()
    bpy.types.TOPBAR_MT_file_import.remove(io_operators.menu_import)
    bpy.types.TOPBAR_MT_file_export.remove(io_operators.menu_export)
    properties.unregister_properties()
    for cls in reversed(_CLASSES):
        bpy.utils.unregister_class(cls)


__all__ = ["register", "unregister"]
