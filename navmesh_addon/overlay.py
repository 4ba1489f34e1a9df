"""Viewport overlay: line batches built as plain arrays (testable without a GPU), drawn by a thin handler.

Every builder returns (coords (2K, 3) float32, colors (2K, 4) float32): K line segments as vertex pairs.
"""
from __future__ import annotations

import bpy
import numpy as np

from . import lib, mesh_write, operators_path

PATH_COLOR = (1.0, 0.85, 0.1, 1.0)
PORTAL_COLOR = (0.2, 0.6, 1.0, 1.0)
SHRUNK_PORTAL_COLOR = (0.3, 1.0, 1.0, 1.0)
LIFT = 0.05  # lines sit this far above the navmesh so they are not hidden in it


def _empty() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((0, 3), dtype=np.float32), np.zeros((0, 4), dtype=np.float32)


def _segments(a: np.ndarray, b: np.ndarray, colors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Interleave segment ends a[i], b[i] and repeat each colour for both ends."""
    coords = np.empty((2 * len(a), 3), dtype=np.float32)
    coords[0::2], coords[1::2] = a, b
    coords[:, 2] += LIFT
    return coords, np.repeat(np.asarray(colors, dtype=np.float32).reshape(-1, 4), 2, axis=0)


def _portal_slots(mesh: lib.NavMesh) -> np.ndarray:
    """Edge slots that are portals, each shared edge once (from its lower-numbered polygon)."""
    owner = mesh.edge_polygon
    return np.flatnonzero((mesh.neighbors >= 0) & (mesh.neighbors > owner))


def portal_lines(mesh: lib.NavMesh) -> tuple[np.ndarray, np.ndarray]:
    """Every portal once, in one colour."""
    slots = _portal_slots(mesh)
    if not len(slots):
        return _empty()
    a, b = mesh.vertices[mesh.poly_vertices[slots]], mesh.vertices[mesh.edge_next_vertex[slots]]
    return _segments(a, b, np.tile(PORTAL_COLOR, (len(slots), 1)))


def heat(values: np.ndarray, scale: float) -> np.ndarray:
    """(N, 4) colours from red (0) through yellow to green (>= scale); inf counts as wide."""
    t = np.clip(np.nan_to_num(np.asarray(values, dtype=np.float64), posinf=scale) / scale, 0.0, 1.0)
    red = np.clip(2.0 - 2.0 * t, 0.0, 1.0)
    green = np.clip(2.0 * t, 0.0, 1.0)
    return np.column_stack([red, green, np.zeros_like(t), np.ones_like(t)])


def clearance_lines(mesh: lib.NavMesh, scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Portals coloured by clearance; scale (m) is the clearance drawn fully green (default 4x bake radius)."""
    if mesh.edge_clearance is None:
        return _empty()
    slots = _portal_slots(mesh)
    if not len(slots):
        return _empty()
    scale = scale or max(4.0 * mesh.params.agent_radius, 1.0)
    a, b = mesh.vertices[mesh.poly_vertices[slots]], mesh.vertices[mesh.edge_next_vertex[slots]]
    return _segments(a, b, heat(mesh.edge_clearance[slots], scale))


def path_lines(points) -> tuple[np.ndarray, np.ndarray]:
    """The path polyline as segments."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(pts) < 2:
        return _empty()
    return _segments(pts[:-1], pts[1:], np.tile(PATH_COLOR, (len(pts) - 1, 1)))


def shrunk_portal_lines(mesh: lib.NavMesh, corridor, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Portals between consecutive corridor polygons (the A* polygon sequence), each end pulled in by
    radius - r0: where an agent of that radius can cross them."""
    corridor = [int(p) for p in corridor]
    pairs = [(p, q) for p, q in zip(corridor[:-1], corridor[1:]) if p != q]
    if not pairs:
        return _empty()
    ends_a, ends_b = [], []
    for p, q in pairs:
        lo, hi = mesh.poly_offsets[p], mesh.poly_offsets[p + 1]
        hit = np.flatnonzero(mesh.neighbors[lo:hi] == q)
        if len(hit):
            slot = lo + hit[0]
            ends_a.append(mesh.vertices[mesh.poly_vertices[slot]])
            ends_b.append(mesh.vertices[mesh.edge_next_vertex[slot]])
    if not ends_a:
        return _empty()
    a, b = np.array(ends_a), np.array(ends_b)
    shrink = max(radius - mesh.params.agent_radius, 0.0)
    length = np.linalg.norm(b - a, axis=1, keepdims=True)
    pull = np.minimum(shrink, 0.5 * length) / np.maximum(length, 1e-12)
    a, b = a + (b - a) * pull, b - (b - a) * pull
    return _segments(a, b, np.tile(SHRUNK_PORTAL_COLOR, (len(a), 1)))


def scene_lines(meshes: list[lib.NavMesh], show_portals: bool, show_clearance: bool, path=None,
                path_mesh: lib.NavMesh | None = None, path_radius: float = 0.0, show_path_portals: bool = False):
    """Everything the overlay draws for the current toggles, concatenated into one batch."""
    parts = []
    for mesh in meshes:
        if show_clearance:
            parts.append(clearance_lines(mesh))
        elif show_portals:
            parts.append(portal_lines(mesh))
    if path is not None:
        parts.append(path_lines(path.points))
        if show_path_portals and path_mesh is not None:
            parts.append(shrunk_portal_lines(path_mesh, path.corridor, path_radius))
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return _empty()
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


class _MeshCache:
    """NavMesh per navmesh object, re-read only when its stored JSON changes (the draw runs every frame)."""

    def __init__(self):
        self._entries: dict[str, tuple[str | None, lib.NavMesh]] = {}

    def get(self, obj) -> lib.NavMesh:
        key = obj.data.get(mesh_write.REVISION_KEY)
        entry = self._entries.get(obj.name)
        if entry is None or entry[0] != key:
            entry = (key, mesh_write.read_navmesh_object(obj))
            self._entries[obj.name] = entry
        return entry[1]


MESHES = _MeshCache()
_handle = None
_batch = None  # (inputs key, GPU batch or None): rebuilt only when what it shows changes


def draw() -> None:
    """POST_VIEW draw callback: a thin wrapper that turns scene_lines into a cached GPU batch."""
    import gpu  # imported here: the module's pure builders must load where no GPU exists
    from gpu_extras.batch import batch_for_shader

    global _batch
    context = bpy.context
    settings = context.scene.navmesh
    objects = [obj for obj in mesh_write.find_navmesh_objects(context.scene) if obj.visible_get()]
    state = operators_path.STATE
    key = (tuple(obj.data.get(mesh_write.REVISION_KEY) for obj in objects), settings.show_portals,
           settings.show_clearance, settings.path_show_portals, state.key)
    shader = gpu.shader.from_builtin("POLYLINE_SMOOTH_COLOR")
    if _batch is None or _batch[0] != key:
        try:
            meshes = [MESHES.get(obj) for obj in objects]
        except lib.NavMeshError:
            return
        coords, colors = scene_lines(meshes, settings.show_portals, settings.show_clearance, state.result,
                                     state.mesh, settings.path_radius, settings.path_show_portals)
        batch = batch_for_shader(shader, "LINES", {"pos": coords, "color": colors}) if len(coords) else None
        _batch = (key, batch)
    if _batch[1] is None:
        return
    region = context.region
    shader.uniform_float("viewportSize", (region.width, region.height))
    shader.uniform_float("lineWidth", 3.0)
    gpu.state.depth_test_set("LESS_EQUAL")
    _batch[1].draw(shader)
    gpu.state.depth_test_set("NONE")


def register_draw_handler() -> None:
    """Add the draw callback, only in an interactive Blender (background mode has no viewport)."""
    global _handle
    if bpy.app.background or _handle is not None:
        return
    _handle = bpy.types.SpaceView3D.draw_handler_add(draw, (), "WINDOW", "POST_VIEW")


def unregister_draw_handler() -> None:
    global _handle, _batch
    _batch = None
    if _handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_handle, "WINDOW")
        _handle = None
