"""Small Blender scenes with known geometry for the add-on tests (built from data, no viewport needed)."""

from __future__ import annotations

import bpy
import numpy as np


def grid_object(name: str, size_x: float, size_y: float, location=(0.0, 0.0, 0.0), collection=None) -> bpy.types.Object:
    """A flat rectangle [0, size_x] x [0, size_y] at z = 0 in local space, one quad, linked to the scene."""
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([(0, 0, 0), (size_x, 0, 0), (size_x, size_y, 0), (0, size_y, 0)], [], [(0, 1, 2, 3)])
    obj = bpy.data.objects.new(name, mesh)
    obj.location = location
    (collection or bpy.context.scene.collection).objects.link(obj)
    return obj


def box_object(name: str, lo, hi, collection=None) -> bpy.types.Object:
    """An axis-aligned closed box from corner lo to corner hi (world space, outward faces)."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    verts = [
        (x0, y0, z0),
        (x1, y0, z0),
        (x1, y1, z0),
        (x0, y1, z0),
        (x0, y0, z1),
        (x1, y0, z1),
        (x1, y1, z1),
        (x0, y1, z1),
    ]
    faces = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    obj = bpy.data.objects.new(name, mesh)
    (collection or bpy.context.scene.collection).objects.link(obj)
    return obj


def select_only(*objects) -> None:
    bpy.context.view_layer.update()  # drop objects removed since the last sync from the listing
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = objects[0] if objects else None


def triangle_normals(vertices: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Unit normals from the winding of each triangle."""
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    n = np.cross(b - a, c - a)
    return n / np.linalg.norm(n, axis=1, keepdims=True)


def mesh_snapshot(obj) -> tuple:
    """Vertex coordinates and face count, to check that a source object was not modified."""
    co = np.zeros(len(obj.data.vertices) * 3)
    obj.data.vertices.foreach_get("co", co)
    return tuple(np.round(co, 9)), len(obj.data.polygons), tuple(m.name for m in obj.modifiers)
