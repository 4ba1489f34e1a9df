"""Detour's constants and record layouts (DetourNavMesh.h, DT_NAVMESH_VERSION 7, 32-bit polygon references)."""

from __future__ import annotations

import struct

import numpy as np

# Detour's constants (DetourNavMesh.h, DT_NAVMESH_VERSION 7, 32-bit polygon references).
SET_MAGIC = ord("M") << 24 | ord("S") << 16 | ord("E") << 8 | ord("T")


SET_VERSION = 1


TILE_MAGIC = ord("D") << 24 | ord("N") << 16 | ord("A") << 8 | ord("V")


TILE_VERSION = 7


VERTS_PER_POLYGON = 6


EXT_LINK = 0x8000


WALK_FLAG = 1


# Per tile: vertex indices are 16-bit, and neighbour index + 1 must stay below EXT_LINK.
MAX_TILE_VERTICES = 0xFFFF


MAX_TILE_POLYGONS = EXT_LINK - 1


# Bounding-volume boxes are quantised to 16 bits in cells of 1 / cell_size.
MAX_QUANTISED = 0xFFFF


# Detail indices are bytes: polygon corners plus extra detail vertices, and triangles, per polygon.
MAX_DETAIL_INDEX = 0xFF


# A 32-bit polygon reference holds salt, tile and polygon bits; Detour wants at least 10 salt bits.
REFERENCE_BITS = 22


# A tile grid must leave at least this many reference bits for polygons (tiles of up to 4).
MIN_POLYGON_BITS = 2


# Detour links each portal edge to at most this many polygons across a tile border.
LINKS_PER_PORTAL = 4

# Detour links two tiles' border edges only where they overlap by more than this (m): dtNavMesh's
# overlapSlabs shrinks each by 1 cm. A shorter border edge is written as the wall it is to Detour.
MIN_PORTAL = 0.02


# Tile sides (the neighbour tile's direction): +x, +z, -x, -z.
SIDE_X_MAX, SIDE_Z_MAX, SIDE_X_MIN, SIDE_Z_MIN = 0, 2, 4, 6


_HEADER = struct.Struct("<15i3f3f3ff")


_SET_HEADER = struct.Struct("<3i3fffii")


_TILE_ENTRY = struct.Struct("<Ii")


_LINK_SIZE = 12


# dtOffMeshConnection: both end points, radius, its polygon, flags, the side its end lies on (the tile
# Detour attaches it in), user id (we write the link's index in mesh.links).
_OFFMESH = struct.Struct("<6ffHBBI")


# dtOffMeshConnection.rad is the radius of a link's ends: on loading, Detour attaches each end to
# the nearest polygon within it (findNearestPolyInTile with half extents (rad, climb, rad), then
# no farther than rad across), and nothing else in Detour reads it. We write the link's radius (the
# widest agent that may use it, as RecastDemo writes its agent's radius), but at least this (m):
# our ends lie on the navmesh, often on its edge, and at rad 0 float32 rounding leaves such an end
# unattached (36 of 246 automatic links of a radius-0 bake). 1 cm is far above that rounding
# (under 1 mm within 10 km of the origin), and a larger rad cannot attach an end elsewhere: it lies
# on its polygon, which Detour's search prefers to any other within reach.
MIN_LINK_RADIUS = 0.01


# dtPolyTypes: an off-mesh connection's polygon (two vertices, its ends).
OFFMESH_POLY_TYPE = 1


# DT_OFFMESH_CON_BIDIR, and the side code of an end inside the link's own tile.
OFFMESH_BOTH_WAYS = 1


OFFMESH_SAME_TILE = 0xFF


# The side code of an end in the neighbour tile (dx, dz) tiles away, as dtNavMesh::getNeighbourTilesAt
# reads it.
OFFMESH_SIDES = {(1, 0): 0, (1, 1): 1, (0, 1): 2, (-1, 1): 3, (-1, 0): 4, (-1, -1): 5, (0, -1): 6, (1, -1): 7}


_POLY = np.dtype(
    [
        ("first_link", "<u4"),
        ("verts", "<u2", 6),
        ("neis", "<u2", 6),
        ("flags", "<u2"),
        ("vert_count", "u1"),
        ("area_and_type", "u1"),
    ]
)


_POLY_DETAIL = np.dtype(
    [("vert_base", "<u4"), ("tri_base", "<u4"), ("vert_count", "u1"), ("tri_count", "u1"), ("pad", "V2")]
)


_BV_NODE = np.dtype([("bmin", "<u2", 3), ("bmax", "<u2", 3), ("i", "<i4")])


def _bits(count: int) -> int:
    """Bits Detour gives a count in a polygon reference: log2 of the next power of two."""
    return max(int(count) - 1, 0).bit_length()
