"""Navmesh generator and runtime: pure Python plus numpy, usable with or without Blender.

from blender_navmesh import generate, BakeParams
mesh = generate(vertices, triangles, BakeParams(agent_radius=0.4))
"""

from .errors import BakeCancelled, InputError, NavMeshError
from .navmesh import NavMesh, load, save
from .params import BAKE_PARAMETERS, BakeParams
from .pipeline import generate
from .soup import AreaVolume

__all__ = [
    "AreaVolume",
    "BAKE_PARAMETERS",
    "BakeCancelled",
    "BakeParams",
    "InputError",
    "NavMesh",
    "NavMeshError",
    "generate",
    "load",
    "save",
]
