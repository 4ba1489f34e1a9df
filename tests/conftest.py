"""Shared pytest fixtures for tests that drive real Blender (bpy 5.0 as a module)."""
from __future__ import annotations

import pytest


@pytest.fixture
def blender():
    """A factory-empty Blender with the add-on registered; unregistered and reset afterwards."""
    import bpy

    import navmesh_addon

    bpy.ops.wm.read_factory_settings(use_empty=True)
    navmesh_addon.register()
    yield bpy.context
    navmesh_addon.unregister()
    bpy.ops.wm.read_factory_settings(use_empty=True)
