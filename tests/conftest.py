"""Shared pytest settings, and fixtures for tests that drive real Blender (bpy 5.0 as a module)."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# Property tests replay the same examples on every run, so the suite's verdict does not depend on
# luck. HYPOTHESIS_PROFILE=explore searches new random examples (and keeps failures in .hypothesis/).
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


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
