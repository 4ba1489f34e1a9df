"""Shared pytest settings, and fixtures for tests that drive real Blender (bpy 5.0 as a module)."""
from __future__ import annotations

import os

import pytest
from hypothesis import settings

# CI replays the same examples every run, so a submission's result does not depend on luck;
# local runs keep exploring new random examples.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


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
