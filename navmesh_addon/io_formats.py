"""Navmesh files for engines: JSON (ours, lossless), COLLADA (.dae), glTF (.glb/.gltf), Detour's
binary navmesh (.bin) and Godot 3's NavigationMesh resource (.tres); JSON reads back.

Used by the File > Import/Export operators and by the command line (`--format json,dae,glb,bin,tres`).
JSON, COLLADA, Detour and Godot are written by lib (no bpy needed); glTF goes through Blender's bundled
exporter. Every format but JSON and Detour carries the detail surface as its geometry (lib.export_surface).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np

import blender_navmesh as lib
from blender_navmesh import collada, detour, export_surface, godot

FORMATS = ("json", "dae", "glb", "gltf", "bin", "tres")
GODOT_SUFFIX = "-navmesh"
# The formats Godot loads as a navigation mesh.
GODOT_FORMATS = ("dae", "glb", "gltf", "tres")


def export_warnings(mesh: lib.NavMesh, fmt: str) -> list[str]:
    """What an engine loading `mesh` as `fmt` gets wrong without saying so, or what the file leaves
    out (it is still written): Godot 3's reach, Detour's off-mesh links (`detour.export_warnings`)."""
    fmt = fmt.lower().lstrip(".")
    if fmt == "bin":
        return detour.export_warnings(mesh)
    warning = godot.range_warning(mesh) if fmt in GODOT_FORMATS else None
    return [warning] if warning else []


def write_navmesh_file(
    mesh: lib.NavMesh,
    path,
    fmt: str,
    *,
    y_up: bool = False,
    godot_suffix: bool = True,
    triangulate: bool = False,
    tile_size: float | None = None,
    piece_size: float | None = None,
    name: str | None = None,
    context=None,
) -> Path:
    """Write mesh to path as fmt ('json', 'dae', 'glb', 'gltf', 'bin' or 'tres') and return the path.

    y_up (json, dae) stores Blender's (x, y, z) as (x, z, -y); glTF, Detour and Godot are always +Y up.
    godot_suffix (dae, glb, gltf) names the node and mesh "<name>-navmesh" so Godot's importer makes
    a navigation mesh of it. triangulate (dae) writes every detail triangle instead of keeping the
    polygons that lie flat on the floor whole.
    tile_size (bin, meters) cuts the Detour navmesh into tiles of that size (default: one tile
    unless the level is too big for one); piece_size (bin, meters) cuts its polygons along a grid of
    that pitch for Detour's search (default: detour.default_piece_size; 0: whole polygons). tres is a
    Godot 3 NavigationMesh keeping the convex polygons.
    name defaults to the file name without extension. context is the bpy context for glTF.
    """
    fmt = fmt.lower().lstrip(".")
    if fmt not in FORMATS:
        raise lib.NavMeshError(f"unknown navmesh export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    path = blend_relative(path)
    if not path.parent.is_dir():
        raise lib.NavMeshError(f"cannot write {str(path)!r}: the folder {str(path.parent)!r} does not exist")
    name = name or path.stem or "navmesh"
    try:
        if fmt == "json":
            lib.save(mesh, path, y_up=y_up)
        elif fmt == "dae":
            collada.write_collada(mesh, path, name=name, y_up=y_up, godot_suffix=godot_suffix, triangulate=triangulate)
        elif fmt == "bin":
            _refuse_gltf_buffer(path)
            detour.write_detour(mesh, path, tile_size=tile_size, piece_size=piece_size)
        elif fmt == "tres":
            godot.write_tres(mesh, path)
        elif fmt == "glb":
            with lib.files.replacing(path) as temp:
                _write_glb(mesh, temp, _suffixed(name, godot_suffix), context)
        else:
            _write_gltf_pair(mesh, path, _suffixed(name, godot_suffix), context)
    except OSError as exc:
        raise lib.NavMeshError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    return path


def blend_relative(path) -> Path:
    """The path, a Blender-relative one ("//nav.json", as Blender's file fields give) made absolute
    against the folder of the saved .blend file; NavMeshError when the .blend file is not saved."""
    text = os.fspath(path)
    if not text.startswith("//"):
        return Path(path)
    try:
        import bpy
    except ImportError:
        raise lib.NavMeshError(f"{text!r} is relative to a .blend file: give a path without the leading //") from None
    if not bpy.data.filepath:
        raise lib.NavMeshError(
            f"{text!r} is relative to the .blend file, which is not saved yet: "
            "save it first, or choose an absolute path"
        )
    return Path(bpy.path.abspath(text))


def read_navmesh_file(path) -> lib.NavMesh:
    """Read a navmesh JSON file (Z-up or Y-up) back into a Z-up NavMesh; other formats are export-only."""
    path = blend_relative(path)
    if path.suffix.lower() != ".json":
        raise lib.NavMeshError(
            f"{path.name!r} is not a .json navmesh file: .dae, .glb, .bin and .tres exports cannot be read back, "
            "use the JSON export"
        )
    return lib.load(path)


def gltf_extras(mesh: lib.NavMesh) -> dict:
    """Navmesh metadata stored as custom properties, which the glTF exporter writes as node extras.

    Scalars only: assimp 5.2 aborts on any array or object in extras. Per-polygon and per-edge data
    are vertex attributes instead (see `_write_gltf`); the bake parameters are `param_<name>`. Area
    costs and off-mesh links, records rather than per-vertex data, are JSON text: `area_costs`
    ({"area id": cost}) and `links` (as in the JSON format, Y-up like the rest of the file).
    """
    extras = {
        "navmesh_format": lib.navmesh.FORMAT_NAME,
        "navmesh_version": lib.navmesh.FORMAT_VERSION,
        "units": "meter",
        "polygon_count": mesh.polygon_count,
        **{f"param_{key}": value for key, value in mesh.params.to_dict().items()},
    }
    if mesh.area_costs:
        extras["area_costs"] = json.dumps({str(area): cost for area, cost in mesh.area_costs})
    if mesh.links:
        extras["links"] = json.dumps([link.to_dict(y_up=True) for link in mesh.links])
    if mesh.empty_reason is not None:
        extras["empty_reason"] = mesh.empty_reason
    return extras


def gltf_attributes(mesh: lib.NavMesh, surface) -> dict[str, tuple[str, str, np.ndarray]]:
    """The custom vertex attributes of the glTF surface: name -> (Blender type, domain, values).

    _POLYGON, _AREA, _REGION: of the navmesh polygon each triangle belongs to.
    _CORNER: k where the vertex is corner k of its polygon, -1 for points inside or along an edge.
    _NEIGHBOR, _CLEARANCE: at corner k, of edge k (corner k to k + 1): the polygon across it (-1: none)
    and the widest agent radius that can cross it (UNLIMITED_CLEARANCE: no limit); -1 and 0 elsewhere.
    glTF has no signed integer attributes: Blender writes them all as floats (exact below 2^24).
    """
    owner = surface.triangle_polygon
    neighbor = np.full(len(surface.vertices), -1, dtype=np.int64)
    neighbor[surface.corner_vertex] = mesh.neighbors
    attributes = {
        "_POLYGON": ("INT", "FACE", owner),
        "_AREA": ("INT", "FACE", mesh.areas[owner]),
        "_REGION": ("INT", "FACE", mesh.regions[owner]),
        "_CORNER": ("INT", "POINT", surface.vertex_corner),
        "_NEIGHBOR": ("INT", "POINT", neighbor),
    }
    if mesh.edge_clearance is not None:
        clearance = np.zeros(len(surface.vertices))
        clearance[surface.corner_vertex] = export_surface.finite_clearance(mesh.edge_clearance)
        attributes["_CLEARANCE"] = ("FLOAT", "POINT", clearance)
    return attributes


def _suffixed(name: str, godot_suffix: bool) -> str:
    return f"{name}{GODOT_SUFFIX}" if godot_suffix and not name.endswith(GODOT_SUFFIX) else name


def _write_gltf_pair(mesh: lib.NavMesh, path: Path, name: str, context) -> None:
    """A .gltf and the buffer it names, <name>.bin, each replaced whole: written into a folder beside
    them first (the .gltf refers to its buffer by name), so a full disk leaves neither half-written.
    A Detour navmesh already at <name>.bin is not overwritten."""
    buffer = path.with_suffix(".bin")
    if buffer.is_file() and _starts_with_detour_magic(buffer):
        raise lib.NavMeshError(
            f"writing {str(path)!r} would replace {str(buffer)!r}, a Detour navmesh, with its buffer: "
            "export .glb, or give the glTF another name"
        )
    for target in (buffer, path):
        lib.files.check_writable(target)
    folder = path.with_name(f".{path.stem}.{os.getpid()}.partial")
    try:
        folder.mkdir()
        # Named <stem>.gltf in the folder, which the exporter keeps (it adds ".gltf" to any other
        # name) and whose buffer it names <stem>.bin; moved to `path` whatever its name ends with.
        exported = folder / f"{path.stem}.gltf"
        _write_gltf(mesh, exported, "gltf", name, context)
        if (folder / buffer.name).exists():  # the buffer first: the .gltf needs it (an empty navmesh has none)
            lib.files.move_into_place(folder / buffer.name, buffer)
        lib.files.move_into_place(exported, path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _write_glb(mesh: lib.NavMesh, path: Path, name: str, context) -> None:
    """A .glb at exactly `path`, whatever its name ends with: Blender's exporter adds ".glb" to a
    path that does not end with it, so it writes to such a path beside it, then renamed to `path`."""
    exported = path if path.name.endswith(".glb") else path.with_name(f"{path.name}.glb")
    try:
        _write_gltf(mesh, exported, "glb", name, context)
        if exported != path:
            os.replace(exported, path)
    finally:
        if exported != path:
            exported.unlink(missing_ok=True)


def _starts_with_detour_magic(path: Path) -> bool:
    with open(path, "rb") as fh:
        return int.from_bytes(fh.read(4), "little") == detour.SET_MAGIC


def _refuse_gltf_buffer(path: Path) -> None:
    """NavMeshError when a Detour file at path would replace the buffer of the .gltf beside it."""
    gltf = path.with_suffix(".gltf")
    if not gltf.is_file():
        return
    try:
        buffers = json.loads(gltf.read_text(encoding="utf-8")).get("buffers", [])
    except (OSError, ValueError, AttributeError):
        return
    if any(isinstance(b, dict) and b.get("uri") == path.name for b in buffers):
        raise lib.NavMeshError(
            f"writing {str(path)!r} would replace the buffer of {str(gltf)!r}: give the Detour navmesh another name"
        )


def _write_gltf(mesh: lib.NavMesh, path: Path, fmt: str, name: str, context) -> None:
    """Export a temporary object holding the detail surface with Blender's glTF exporter, then remove it.

    The triangles follow the real floor within max_height_error; the vertex attributes of
    `gltf_attributes` keep the polygons, their edges and what is known about them.
    Only the temporary object is selected during the export; the user's selection is restored.
    """
    try:
        import bpy
    except ImportError:
        raise lib.NavMeshError(
            "glTF export runs Blender's exporter: run it inside Blender (or with the bpy module)"
        ) from None

    context = context or bpy.context
    data = bpy.data.meshes.new(name)
    obj = None
    view_layer = context.view_layer
    # A view layer can still list an object removed a moment ago (a previous export's) as None.
    selected = [o for o in view_layer.objects if o is not None and o.select_get()]
    active = view_layer.objects.active
    try:
        surface = export_surface.export_surface(mesh)
        data.vertices.add(len(surface.vertices))
        data.vertices.foreach_set("co", surface.vertices.astype("float32").ravel())
        data.loops.add(surface.triangles.size)
        data.loops.foreach_set("vertex_index", surface.triangles.astype("int32").ravel())
        data.polygons.add(len(surface.triangles))
        data.polygons.foreach_set("loop_start", np.arange(0, surface.triangles.size, 3, dtype="int32"))
        for attribute, (kind, domain, values) in gltf_attributes(mesh, surface).items():
            dtype = "int32" if kind == "INT" else "float32"
            data.attributes.new(attribute, kind, domain).data.foreach_set("value", values.astype(dtype))
        data.update()
        obj = bpy.data.objects.new(name, data)
        for key, value in gltf_extras(mesh).items():
            obj[key] = value
        context.scene.collection.objects.link(obj)
        for other in selected:
            other.select_set(False)
        obj.select_set(True)
        view_layer.objects.active = obj
        try:
            result = _run_gltf_exporter(bpy, path, fmt)
        except RuntimeError as exc:
            raise OSError(blender_error(exc)) from None
        if "FINISHED" not in result:
            raise lib.NavMeshError(f"Blender's glTF exporter did not finish writing {str(path)!r}")
    finally:
        if obj is not None:
            bpy.data.objects.remove(obj)
        bpy.data.meshes.remove(data)
        for other in selected:
            other.select_set(True)
        view_layer.objects.active = active


def _run_gltf_exporter(bpy, path: Path, fmt: str):
    """Blender's glTF exporter on the selection only, Y-up, with extras and the `_` attributes."""
    return bpy.ops.export_scene.gltf(
        filepath=str(path),
        export_format="GLB" if fmt == "glb" else "GLTF_SEPARATE",
        use_selection=True,
        export_extras=True,
        export_attributes=True,
        export_yup=True,
        export_apply=False,
        export_materials="NONE",
        export_animations=False,
        export_cameras=False,
        export_lights=False,
    )


def blender_error(exc: Exception) -> str:
    """The line of a Blender operator's error that says what went wrong: the exception line of a
    Python traceback it carries, else its first line, without Blender's "Error: " prefix (never the
    "Location:" line it ends with)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    raised = [line for line in lines if _EXCEPTION_LINE.match(line)]
    if raised:
        return raised[-1]
    said = [line for line in lines if not line.startswith("Location:")]
    return said[0].removeprefix("Error: ") if said else type(exc).__name__


# A traceback's last line: the exception's class and message.
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b")
