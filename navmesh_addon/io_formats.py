"""Navmesh files for engines: JSON (ours, lossless), COLLADA (.dae), glTF (.glb/.gltf) and Detour's
binary navmesh (.bin); JSON reads back.

Used by the File > Import/Export operators and by the command line (`--format json,dae,glb,bin`).
JSON, COLLADA and Detour are written by lib (no bpy needed); glTF goes through Blender's bundled exporter.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from . import lib

# lib is "lib" in a checkout and a sub-package of the extension when installed: import by its name.
collada = importlib.import_module(f"{lib.__name__}.collada")
detour = importlib.import_module(f"{lib.__name__}.detour")

FORMATS = ("json", "dae", "glb", "gltf", "bin")
GODOT_SUFFIX = "-navmesh"


def write_navmesh_file(
    mesh: lib.NavMesh,
    path,
    fmt: str,
    *,
    y_up: bool = False,
    godot_suffix: bool = True,
    triangulate: bool = False,
    tile_size: float | None = None,
    name: str | None = None,
    context=None,
) -> Path:
    """Write mesh to path as fmt ('json', 'dae', 'glb', 'gltf' or 'bin') and return the path.

    y_up (json, dae) stores Blender's (x, y, z) as (x, z, -y); glTF is always +Y up.
    godot_suffix (dae, glb, gltf) names the node and mesh "<name>-navmesh" so Godot's importer makes
    a navigation mesh of it. triangulate (dae) writes triangles instead of the convex polygons.
    tile_size (bin, meters) cuts the Detour navmesh into tiles of that size (default: one tile
    unless the level is too big for one); Detour is always Y-up.
    name defaults to the file name without extension. context is the bpy context for glTF.
    """
    fmt = fmt.lower().lstrip(".")
    if fmt not in FORMATS:
        raise lib.NavMeshError(f"unknown navmesh export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    path = Path(path)
    if not path.parent.is_dir():
        raise lib.NavMeshError(f"cannot write {str(path)!r}: the folder {str(path.parent)!r} does not exist")
    name = name or path.stem or "navmesh"
    try:
        if fmt == "json":
            lib.save(mesh, path, y_up=y_up)
        elif fmt == "dae":
            collada.write_collada(mesh, path, name=name, y_up=y_up, godot_suffix=godot_suffix, triangulate=triangulate)
        elif fmt == "bin":
            detour.write_detour(mesh, path, tile_size=tile_size)
        elif fmt == "glb":
            with lib.files.replacing(path) as temp:
                _write_gltf(mesh, temp, fmt, _suffixed(name, godot_suffix), context)
        else:  # .gltf refers to its .bin by name: written in place
            _write_gltf(mesh, path, fmt, _suffixed(name, godot_suffix), context)
    except OSError as exc:
        raise lib.NavMeshError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    return path


def read_navmesh_file(path) -> lib.NavMesh:
    """Read a navmesh JSON file (Z-up or Y-up) back into a Z-up NavMesh; other formats are export-only."""
    path = Path(path)
    if path.suffix.lower() != ".json":
        raise lib.NavMeshError(
            f"{path.name!r} is not a .json navmesh file: .dae, .glb and .bin exports cannot be read back, use the JSON export"
        )
    return lib.load(path)


def gltf_extras(mesh: lib.NavMesh) -> dict:
    """Navmesh metadata stored as custom properties, which the glTF exporter writes as node extras."""
    extras = {
        "format": lib.navmesh.FORMAT_NAME,
        "version": lib.navmesh.FORMAT_VERSION,
        "units": "meter",
        "params": mesh.params.to_dict(),
        "polygon_count": mesh.polygon_count,
        "polygon_sizes": mesh.polygon_sizes.tolist(),
        "regions": mesh.regions.tolist(),
        "areas": mesh.areas.tolist(),
        "neighbors": mesh.neighbors.tolist(),
    }
    if mesh.empty_reason is not None:
        extras["empty_reason"] = mesh.empty_reason
    return extras


def _suffixed(name: str, godot_suffix: bool) -> str:
    return f"{name}{GODOT_SUFFIX}" if godot_suffix and not name.endswith(GODOT_SUFFIX) else name


def _write_gltf(mesh: lib.NavMesh, path: Path, fmt: str, name: str, context) -> None:
    """Export a temporary object built from mesh with Blender's glTF exporter, then remove it.

    Only the temporary object is selected during the export; the user's selection is restored.
    """
    try:
        import bpy
    except ImportError:
        raise lib.NavMeshError("glTF export runs Blender's exporter: run it inside Blender (or with the bpy module)") from None

    context = context or bpy.context
    data = bpy.data.meshes.new(name)
    obj = None
    view_layer = context.view_layer
    # A view layer can still list an object removed a moment ago (a previous export's) as None.
    selected = [o for o in view_layer.objects if o is not None and o.select_get()]
    active = view_layer.objects.active
    try:
        data.vertices.add(len(mesh.vertices))
        data.vertices.foreach_set("co", mesh.vertices.astype("float32").ravel())
        data.loops.add(len(mesh.poly_vertices))
        data.loops.foreach_set("vertex_index", mesh.poly_vertices.astype("int32"))
        data.polygons.add(mesh.polygon_count)
        data.polygons.foreach_set("loop_start", mesh.poly_offsets[:-1].astype("int32"))
        data.update()
        obj = bpy.data.objects.new(name, data)
        obj["navmesh"] = gltf_extras(mesh)
        context.scene.collection.objects.link(obj)
        for other in selected:
            other.select_set(False)
        obj.select_set(True)
        view_layer.objects.active = obj
        try:
            result = _run_gltf_exporter(bpy, path, fmt)
        except RuntimeError as exc:
            message = str(exc).strip().splitlines()[-1] if str(exc).strip() else "the exporter failed"
            raise OSError(message) from None
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
    """Blender's glTF exporter on the selection only, Y-up, with extras."""
    return bpy.ops.export_scene.gltf(
        filepath=str(path),
        export_format="GLB" if fmt == "glb" else "GLTF_SEPARATE",
        use_selection=True,
        export_extras=True,
        export_yup=True,
        export_apply=False,
        export_materials="NONE",
        export_animations=False,
        export_cameras=False,
        export_lights=False,
    )
