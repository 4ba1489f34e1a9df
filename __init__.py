"""Blender extension entry point: forwards register/unregister to navmesh_addon (generator in lib/).

The import happens inside the functions so that importing this folder as a plain package does not
pull in bpy.
"""


def register() -> None:
    from .navmesh_addon import register as register_addon

    register_addon()


def unregister() -> None:
    from .navmesh_addon import unregister as unregister_addon

    unregister_addon()
