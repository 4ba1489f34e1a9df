"""The walkable surface as the engine exports write it: the detail mesh, which follows the real floor
within max_height_error, laid out per polygon so every triangle and vertex knows its polygon.

A navmesh polygon is planar only where its floor is; on rolling ground its flat outline can be metres
off the floor, so engines that take heights from the exported surface need the detail triangles.
Formats that keep polygons (COLLADA's <polylist>, Godot's NavigationMesh) use `convex_pieces`: a
polygon whose detail is the fan from one of its corners is written whole, starting at that corner
(an engine fanning it from its first corner then gets exactly the detail surface); any other polygon
is written as its detail triangles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .components import run_positions
from .detail import fan_apexes
from .navmesh import NavMesh

# Formats whose readers know no infinity (glTF extras, which pass through Blender's custom properties;
# Godot 3's text resources) write unlimited clearance as this: wider than any level, so a consumer's
# `clearance >= radius` holds without a special case.
UNLIMITED_CLEARANCE = 1e30
# Detail triangles smaller than this seen from above (m²) have no surface or direction to give:
# they are left out of the exports.
MIN_TRIANGLE_AREA = 1e-10


@dataclass(frozen=True)
class ExportSurface:
    """The detail surface with its vertices copied per polygon (a vertex on a shared edge appears
    once for each polygon using it), so per-vertex polygon and corner labels are unambiguous.

    vertices: (N, 3) Z-up. triangles: (T, 3), counter-clockwise seen from +Z.
    triangle_polygon: (T,) and vertex_polygon: (N,) the navmesh polygon each belongs to.
    vertex_corner: (N,) k when the vertex is corner k of its polygon (edge k runs from corner k to
    k + 1), -1 for points inside a polygon or along its edges.
    corner_vertex: (E,) the vertex at each polygon corner, in the navmesh's edge-slot order.
    """

    vertices: np.ndarray
    triangles: np.ndarray
    triangle_polygon: np.ndarray
    vertex_polygon: np.ndarray
    vertex_corner: np.ndarray
    corner_vertex: np.ndarray


def export_surface(mesh: NavMesh) -> ExportSurface:
    """The detail surface of mesh for export, without degenerate triangles. A mesh without a detail
    mesh (hand-built, or an old file) gets the fans of its polygons over their corners."""
    if len(mesh.detail_triangles):
        points, triangles, owners = mesh.detail_vertices, mesh.detail_triangles, mesh.detail_polygons
    else:
        points, (triangles, owners) = mesh.vertices, corner_fans(mesh)
    corners = points[triangles]
    area = 0.5 * np.cross(corners[:, 1, :2] - corners[:, 0, :2], corners[:, 2, :2] - corners[:, 0, :2])
    keep = np.abs(area) > MIN_TRIANGLE_AREA
    triangles, owners = triangles[keep], owners[keep]

    # One vertex per (polygon, detail vertex) pair the triangles use.
    pair = owners[:, None] * len(points) + triangles
    used, inverse = np.unique(pair.ravel(), return_inverse=True)
    vertex_polygon, vertices = used // len(points), points[used % len(points)]

    # Corners are found by their position seen from above among their own polygon's vertices; a corner
    # no kept triangle uses (all its triangles were degenerate) is added, at the polygon's height.
    slot_polygon = mesh.edge_polygon
    slot_xy = mesh.vertices[mesh.poly_vertices, :2]
    keys = np.column_stack([np.concatenate([vertex_polygon, slot_polygon]), np.concatenate([vertices[:, :2], slot_xy])])
    _, key_id = np.unique(keys, axis=0, return_inverse=True)
    key_id = key_id.ravel()
    vertex_of_key = np.full(int(key_id.max(initial=-1)) + 1, -1, dtype=np.int64)
    vertex_of_key[key_id[: len(vertices)]] = np.arange(len(vertices))
    corner_vertex = vertex_of_key[key_id[len(vertices) :]]
    missing = np.flatnonzero(corner_vertex < 0)
    corner_vertex[missing] = len(vertices) + np.arange(len(missing))
    vertices = np.vstack([vertices, mesh.vertices[mesh.poly_vertices[missing]]])
    vertex_polygon = np.concatenate([vertex_polygon, slot_polygon[missing]])
    vertex_corner = np.full(len(vertices), -1, dtype=np.int64)
    vertex_corner[corner_vertex] = np.arange(len(slot_polygon)) - mesh.poly_offsets[slot_polygon]
    return ExportSurface(
        vertices=vertices,
        triangles=inverse.reshape(-1, 3).astype(np.int64),
        triangle_polygon=owners.astype(np.int64),
        vertex_polygon=vertex_polygon.astype(np.int64),
        vertex_corner=vertex_corner,
        corner_vertex=corner_vertex.astype(np.int64),
    )


def corner_fans(mesh: NavMesh) -> tuple[np.ndarray, np.ndarray]:
    """Each polygon fan-triangulated from its best corner (`detail.fan_apexes`, which avoids slivers
    along nearly straight corners): (T, 3) indices into mesh.vertices and (T,) owning polygon."""
    sizes = mesh.polygon_sizes
    owners = np.repeat(np.arange(mesh.polygon_count), np.maximum(sizes - 2, 0))
    step = run_positions(sizes - 2)
    apex, n, first = fan_apexes(mesh)[owners], sizes[owners], mesh.poly_offsets[:-1][owners]
    local = np.stack([apex, apex + step + 1, apex + step + 2], axis=1) % n[:, None]
    return mesh.poly_vertices[first[:, None] + local], owners


def convex_pieces(mesh: NavMesh, surface: ExportSurface) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The surface as convex faces in polygon order: (F+1,) offsets, flat surface-vertex indices
    (counter-clockwise seen from +Z) and (F,) the navmesh polygon of each face.

    A polygon whose detail triangles are exactly the fan from one of its corners is one face starting
    at that corner; any other polygon contributes its detail triangles."""
    sizes = mesh.polygon_sizes
    tri_corner = surface.vertex_corner[surface.triangles]
    owner = surface.triangle_polygon
    count = np.bincount(owner, minlength=mesh.polygon_count)
    only_corners = np.bincount(owner, weights=np.all(tri_corner >= 0, axis=1), minlength=mesh.polygon_count)
    # How many of its polygon's triangles use each corner slot; the fan's apex is in all n - 2.
    slot = mesh.poly_offsets[owner][:, None] + np.maximum(tri_corner, 0)
    uses = np.bincount(slot[tri_corner >= 0], minlength=len(mesh.poly_vertices))
    is_apex = uses == np.repeat(sizes - 2, sizes)
    local = np.arange(len(mesh.poly_vertices)) - np.repeat(mesh.poly_offsets[:-1], sizes)
    first_apex = np.full(mesh.polygon_count, np.iinfo(np.int64).max)
    np.minimum.at(first_apex, mesh.edge_polygon[is_apex], local[is_apex])
    whole = (count == sizes - 2) & (only_corners == count) & (first_apex < sizes)

    whole_slot = np.repeat(whole, sizes)
    apex = np.where(whole, first_apex, 0)
    rotated = mesh.poly_offsets[mesh.edge_polygon] + (local + np.repeat(apex, sizes)) % np.repeat(sizes, sizes)
    whole_faces = [surface.corner_vertex[rotated[whole_slot]], sizes[whole], np.flatnonzero(whole)]
    split = ~whole[owner]
    split_faces = [surface.triangles[split].ravel(), np.full(int(split.sum()), 3), owner[split]]

    flat = np.concatenate([whole_faces[0], split_faces[0]]).astype(np.int64)
    face_sizes = np.concatenate([whole_faces[1], split_faces[1]]).astype(np.int64)
    face_polygon = np.concatenate([whole_faces[2], split_faces[2]]).astype(np.int64)
    # Faces in polygon order: gather each face's run of `flat` in its new place.
    order = np.argsort(face_polygon, kind="stable")
    starts = np.cumsum(face_sizes) - face_sizes
    offsets = np.concatenate([[0], np.cumsum(face_sizes[order])]).astype(np.int64)
    gather = np.repeat(starts[order] - offsets[:-1], face_sizes[order]) + np.arange(offsets[-1])
    return offsets, flat[gather], face_polygon[order]


def finite_clearance(values: np.ndarray) -> np.ndarray:
    """Clearance values with unlimited (inf) as UNLIMITED_CLEARANCE, for formats without infinity."""
    return np.minimum(values, UNLIMITED_CLEARANCE)


def welded(vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices at exactly the same position merged: (unique vertices, the new index of each input
    vertex). Engines link faces by shared vertices; this merges the per-polygon copies back."""
    unique, inverse = np.unique(np.asarray(vertices).reshape(-1, 3), axis=0, return_inverse=True)
    return unique, inverse.ravel()
