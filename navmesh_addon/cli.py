"""Headless batch commands: bake a level to navmesh files, and check paths on a baked navmesh.

The same `main(argv)` serves both entry points:
    blender -b level.blend -c navmesh bake --output out/level.json      (Blender 4.2+, extension enabled)
    blender -b -c navmesh bake level.obj --output out/level.json
    python -m navmesh_addon bake level.obj --output out/level.json      (the bpy module: .venv's Python, repo root)
    scripts/navmesh bake level.obj --output out/level.json              (the same, from any folder)

Exit codes: 0 success; 1 the bake or a file write failed (nothing walkable, degenerate input, ...);
2 bad command line or unusable input (a file that cannot be read, a walkable seed on no floor, two
costs for one area id, an output that cannot be written, found before the bake); 3 only with
`paths --fail-unreachable`, when some pair's goal was not reached (without the flag such pairs are
reported in the output file, exit code 0).
Errors go to stderr as one line starting with "navmesh: error:".
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import re
import sys
import urllib.parse
from pathlib import Path

import bpy
import numpy as np

import blender_navmesh as lib
from blender_navmesh import prune, query

from . import io_formats, mesh_write, operators_bake, presets
from .panels import AGENT_PARAMETERS

COMMAND_ID = "navmesh"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3
SCENE_IMPORTERS = {
    ".obj": ("wm", "obj_import"),
    ".gltf": ("import_scene", "gltf"),
    ".glb": ("import_scene", "gltf"),
    ".fbx": ("import_scene", "fbx"),
}
OUTPUT_FORMATS = ("json", "dae", "glb", "gltf", "bin", "tres", "blend")
# Bake parameter options are the lib names with dashes (--agent-radius); these older spellings still work.
OPTION_ALIASES = {"agent_max_climb": ("--max-climb",), "agent_max_slope": ("--max-slope",)}
UNIT_METAVARS = {"m": "METERS", "m²": "SQ_METERS", "degrees": "DEGREES", "count": "COUNT"}

_cli_handle = None


class UsageError(Exception):
    """Bad command line or unusable input file (exit code 2)."""


class _Stop(Exception):
    """argparse finished the command itself (--help): stop with this exit code."""

    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so Blender's command runner keeps control."""

    def error(self, message: str):
        raise UsageError(f"{message} (see: {self.prog} --help)")

    def exit(self, status: int = 0, message: str | None = None):
        if message:
            print(message, file=sys.stderr, end="")
        raise _Stop(status)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="navmesh", description="Bake navmeshes and check paths without opening Blender's UI.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    bake = commands.add_parser(
        "bake",
        help="bake a level (.blend, .obj, .gltf/.glb, .fbx) to navmesh files",
        description="Bake a level to navmesh files. A bake parameter option not given takes a .blend's own "
        "setting (or --preset's); an imported scene takes the default shown.",
    )
    bake.add_argument(
        "input",
        type=Path,
        nargs="?",
        help="the level: .blend, or a scene file to import (.obj, .gltf, .glb, .fbx); "
        "default: the .blend Blender has open (blender -b level.blend -c navmesh bake ...)",
    )
    bake.add_argument(
        "--output",
        "-o",
        type=Path,
        required=True,
        help="output file; its extension picks the format unless --format is given",
    )
    bake.add_argument("--format", "-f", help=f"comma-separated formats ({', '.join(OUTPUT_FORMATS)}): one file each")
    bake.add_argument(
        "--preset",
        help="agent preset: human, child, large or a saved user preset; the bake parameter options override it",
    )
    for parameter in lib.BAKE_PARAMETERS:
        bake.add_argument(
            "--" + parameter.name.replace("_", "-"),
            *OPTION_ALIASES.get(parameter.name, ()),
            dest=parameter.name,
            type=int if parameter.unit == "count" else float,
            metavar=UNIT_METAVARS[parameter.unit],
            help=f"{parameter.description} (default: {default_text(parameter)})",
        )
    bake.add_argument(
        "--agent-type",
        help="bake only the navmesh of this agent type of the .blend's Agent Types "
        "(default: one navmesh per group of types; without options for the "
        "agent, a .blend's agent types are baked rather than its Agent fields)",
    )
    bake.add_argument(
        "--collection",
        help="bake only this collection (default: a .blend's saved Source, as its Navmesh panel would; "
        "an imported .obj, .gltf, .glb or .fbx: everything in it)",
    )
    bake.add_argument(
        "--seed",
        action="append",
        type=_point,
        default=[],
        metavar="X,Y,Z",
        help="walkable seed in meters, Z-up (a .blend's coordinates times its Unit Scale; repeatable): keep "
        "only the navmesh islands seeds stand on (seed empties saved in a .blend count too)",
    )
    bake.add_argument(
        "--y-up",
        action="store_true",
        help="json/dae only: write coordinates Y-up as (x, z, -y) (glb, gltf, bin and tres are always Y-up)",
    )
    bake.add_argument(
        "--tile-size",
        type=float,
        metavar="M",
        help="bin (Detour) only: cut the navmesh into square tiles this many meters wide "
        "(default: one tile unless the level is too big for one)",
    )
    bake.add_argument(
        "--piece-size",
        type=float,
        metavar="M",
        help="bin (Detour) only: cut polygons along a grid this many meters apart, so Detour's search, which "
        "costs paths by polygon-edge midpoints, finds paths near ours (default: 8 agent radii, at least "
        "16 cells; 0: whole polygons)",
    )

    paths = commands.add_parser("paths", help="find paths on a baked navmesh for a list of start/goal pairs")
    paths.add_argument("navmesh", type=Path, help="navmesh .json, or a .blend holding a baked navmesh object")
    paths.add_argument(
        "queries",
        type=Path,
        help="JSON list of [sx, sy, sz, gx, gy, gz] in meters, Z-up (a .blend's coordinates times its Unit Scale)",
    )
    paths.add_argument("--radius", type=float, help="agent radius (default: the navmesh's bake radius)")
    paths.add_argument("--output", "-o", type=Path, required=True, help="result JSON file")
    paths.add_argument("--object", help="in a .blend with several baked navmeshes, the object to use")
    paths.add_argument(
        "--extent",
        type=float,
        nargs=2,
        metavar=("ACROSS", "UP"),
        help="how far (m) a start or goal may lie from the navmesh, across and up or down "
        "(default: twice the bake radius plus a cell across, the agent height up)",
    )
    paths.add_argument(
        "--area-cost",
        action="append",
        type=_area_cost,
        default=[],
        metavar="AREA=COST",
        help="travel cost factor of an area id (repeatable); overrides the cost baked into the navmesh",
    )
    paths.add_argument(
        "--exclude-area",
        action="append",
        type=_area_id,
        default=[],
        metavar="AREA",
        help="area id paths must not enter (repeatable): a closed door, deep water",
    )
    paths.add_argument(
        "--fail-unreachable",
        action="store_true",
        help="exit with code 3 when some pair's goal is not reached (status other than 'found')",
    )
    return parser


def main(argv: list[str]) -> int:
    """Run one command; returns the exit code and never raises for expected failures."""
    try:
        args = build_parser().parse_args(argv)
        return bake_command(args) if args.command == "bake" else paths_command(args)
    except _Stop as stop:
        return stop.status
    except UsageError as exc:
        return _fail(EXIT_USAGE, str(exc))
    except lib.InputError as exc:  # a seed on no floor, a link end off it, two costs for one area id
        return _fail(EXIT_USAGE, str(exc))
    except lib.NavMeshError as exc:
        return _fail(EXIT_FAILED, str(exc))


def bake_command(args: argparse.Namespace) -> int:
    outputs = output_paths(args.output, args.format)
    _refuse_unused_options(args, {fmt for fmt, _ in outputs})
    level = args.input if args.input is not None else Path(bpy.data.filepath) if bpy.data.filepath else None
    _refuse_overwriting([path for _, path in outputs], level, "the level")
    values = parameter_values(args)
    preset = find_preset(args.preset) if args.preset is not None else None
    if args.input is not None:
        load_scene(args.input)
    elif not bpy.data.filepath:
        raise UsageError("no level to bake: give INPUT (a .blend, .obj, .gltf, .glb or .fbx file)")
    context = bpy.context
    settings = context.scene.navmesh
    if preset is not None:
        apply_preset(settings, preset)
    if args.collection is not None:
        collection = bpy.data.collections.get(args.collection)
        if collection is None:
            names = ", ".join(sorted(c.name for c in bpy.data.collections)) or "none"
            raise UsageError(
                f"no collection named {args.collection!r} in {args.input or bpy.data.filepath} (collections: {names})"
            )
        settings.source, settings.collection = "COLLECTION", collection
    elif args.input is not None and args.input.suffix.lower() != ".blend":
        settings.source = "VISIBLE"  # an imported scene: everything in it
    # A .blend bakes with the Source saved in it (Selected, a Collection or Visible), as the panel does.
    for name, value in values.items():
        settings.set_bake_parameter(name, value)
        stored = settings.bake_parameter(name)
        if not math.isclose(stored, value, rel_tol=1e-5, abs_tol=1e-6):
            raise UsageError(
                f"{name.replace('_', ' ')} {value} is outside the add-on's range (it would become {stored:g})"
            )
    agent_options = preset is not None or any(name in values for name in AGENT_PARAMETERS)
    if args.agent_type is not None:
        if agent_options:
            raise UsageError(
                "--agent-type picks one of a .blend's agent types: leave out --preset and the agent options"
            )
        if args.agent_type not in settings.agent_types:
            names = ", ".join(settings.agent_types.keys()) or "none"
            raise UsageError(f"no agent type named {args.agent_type!r} (agent types: {names})")
    # A .blend's agent types, unless the command line sets the agent. The settings are checked
    # together here (max_edge_len against the cell size the .blend or preset gives).
    try:
        targets = (
            [operators_bake.BakeTarget(operators_bake.result_name(context.scene, settings), settings.to_bake_params())]
            if agent_options
            else operators_bake.bake_targets(context.scene, settings, args.agent_type or "")
        )
    except lib.NavMeshError as exc:
        raise UsageError(str(exc)) from None
    for target in targets:
        if any(fmt == "bin" for fmt, _ in outputs):  # before the bake, not after it
            try:
                lib.detour.check_options(target.params, args.tile_size, args.piece_size)
            except lib.NavMeshError as exc:
                raise UsageError(str(exc)) from None
        for warning in target.params.warnings():
            print(f"navmesh: warning: {warning}", file=sys.stderr)
    for _, path in outputs:  # a read-only output is refused before the bake, not after it
        for written in _written_files(path, [t.agent_types[0] for t in targets if t.agent_types], len(targets)):
            _check_writable(written)
    for _, path in outputs:  # once every check has passed, before the bake
        _make_folder(path)
    progress = ProgressPrinter(sys.stderr)
    try:
        job = operators_bake.prepare(context, settings, args.seed, targets)
        job.on_progress = progress
        job.run()
        objects = operators_bake.finish(job)
    finally:
        progress.close()
    for obj in objects:
        mesh = mesh_write.read_navmesh_object(obj)
        served = obj["navmesh"].get("agent_types", ())
        print(island_report(mesh, obj["navmesh"].get("seeds", 0)), file=sys.stderr)
        for warning in obj["navmesh"].get("geometry_warnings", ()):
            print(f"navmesh: warning: {warning}", file=sys.stderr)
        for fmt, path in outputs:
            if len(objects) > 1 and fmt != "blend":  # a file per navmesh, named for its first agent type
                path = path.with_name(f"{path.stem}_{_file_part(served[0])}{path.suffix}")
            if fmt != "blend":
                io_formats.write_navmesh_file(
                    mesh,
                    path,
                    fmt,
                    y_up=args.y_up,
                    tile_size=args.tile_size,
                    piece_size=args.piece_size,
                    context=context,
                )
                for warning in io_formats.export_warnings(mesh, fmt):
                    print(f"navmesh: warning: {path.name}: {warning}", file=sys.stderr)
            who = f" for {', '.join(served)}" if served else ""
            count = f"{mesh.polygon_count} polygon{'s' if mesh.polygon_count != 1 else ''}"
            print(f"navmesh: {count}, {mesh.area_xy():.1f} m² walkable{who} -> {path}")
    for fmt, path in outputs:
        if fmt == "blend":  # one .blend holds every navmesh object
            _save_blend(path)
    return EXIT_OK


def _point(text: str) -> tuple[float, float, float]:
    """X,Y,Z as three finite numbers (an argparse type)."""
    try:
        point = tuple(float(v) for v in text.split(","))
    except ValueError:
        point = ()
    if len(point) != 3 or not all(map(math.isfinite, point)):
        raise argparse.ArgumentTypeError(f"{text!r} is not X,Y,Z (three numbers separated by commas)")
    return point


def _area_id(text: str) -> int:
    """AREA (an argparse type): an area id 0..63."""
    try:
        area = int(text)
    except ValueError:
        area = -1
    if not 0 <= area <= lib.navmesh.MAX_AREA:
        raise argparse.ArgumentTypeError(f"{text!r} is not an area id 0..{lib.navmesh.MAX_AREA}")
    return area


def _area_cost(text: str) -> tuple[int, float]:
    """AREA=COST (an argparse type)."""
    area, _, cost = text.partition("=")
    try:
        value = (int(area), float(cost))
    except ValueError:
        value = None
    if value is None or not 0 <= value[0] <= lib.navmesh.MAX_AREA or not (math.isfinite(value[1]) and value[1] > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not AREA=COST (an area id 0..63 and a cost > 0)")
    return value


def island_report(mesh: lib.NavMesh, seeds: int) -> str:
    """One line: how many islands the navmesh has and how large each is, and whether seeds pruned it."""
    found = prune.islands(mesh)
    sizes = ", ".join(f"{island.area:.1f}" for island in found[:8]) + (", ..." if len(found) > 8 else "")
    kept = f" (kept by {seeds} walkable seed{'s' if seeds != 1 else ''})" if seeds else ""
    return f"navmesh: {len(found)} island{'s' if len(found) != 1 else ''}{kept}: {sizes} m²"


class ProgressPrinter:
    """Bake progress on stderr: a bar redrawn in place on a terminal, else one line per stage (logs, CI)."""

    WIDTH = 30

    def __init__(self, stream):
        self.stream = stream
        self.terminal = stream.isatty()
        self.stage = None
        self.open_line = False

    def __call__(self, stage: str, fraction: float) -> None:
        if self.terminal:
            filled = round(self.WIDTH * fraction)
            end = "\n" if fraction >= 1.0 else ""
            self.stream.write(
                f"\rnavmesh: baking [{'#' * filled}{' ' * (self.WIDTH - filled)}] {fraction:4.0%} {stage:<12}{end}"
            )
            self.open_line = not end
        elif stage != self.stage:
            self.stream.write(f"navmesh: baking: {stage} ({fraction:.0%})\n")
        self.stage = stage
        self.stream.flush()

    def close(self) -> None:
        """End a bar the bake left unfinished (an empty result or an error), so the next line starts clean."""
        if self.open_line:
            self.stream.write("\n")
            self.open_line = False


def paths_command(args: argparse.Namespace) -> int:
    if args.radius is not None and not (math.isfinite(args.radius) and args.radius >= 0):
        raise UsageError(f"--radius must be a finite number >= 0, got {args.radius}")
    _refuse_overwriting([args.output], args.navmesh, "the navmesh")
    _refuse_overwriting([args.output], args.queries, "the queries")
    _check_writable(args.output)
    mesh = load_navmesh(args.navmesh, args.object)
    pairs = load_queries(args.queries)
    costs = {**dict(mesh.area_costs), **dict(args.area_cost)}
    try:  # the query object checks the extent, the costs and the radius against the bake radius
        path_filter = query.QueryFilter(area_cost=costs, excluded=frozenset(args.exclude_area))
        nav_query = query.NavMeshQuery(mesh, filter=path_filter, extent=args.extent)
        nav_query.check_radius(args.radius)
    except lib.NavMeshError as exc:
        raise UsageError(str(exc)) from None
    results = []
    for pair in pairs:
        found = nav_query.find_path(pair[:3], pair[3:], radius=args.radius)
        results.append(
            {
                "start": pair[:3],
                "goal": pair[3:],
                "status": str(found.status),
                "points": [[float(c) for c in p] for p in found.points],
                "length": float(found.length),
                "start_distance": float(found.start_distance),
                "goal_distance": float(found.goal_distance),
                "reason": found.reason,
                "links": [int(i) for i in found.links],
            }
        )
    missed = [i for i, r in enumerate(results) if r["status"] != "found"]
    report = {
        "navmesh": str(args.navmesh),
        "radius": mesh.params.agent_radius if args.radius is None else args.radius,
        "extent": list(nav_query.extent),
        "area_costs": {str(area): cost for area, cost in sorted(costs.items()) if cost != 1.0},
        "excluded_areas": sorted(set(args.exclude_area)),
        "results": results,
        "unreachable": missed,
    }
    _make_folder(args.output)
    lib.files.write_text(args.output, json.dumps(report, indent=1))
    print(f"navmesh: {len(results) - len(missed)} of {len(results)} paths found -> {args.output}")
    if missed and args.fail_unreachable:
        why = "; ".join(f"pair {i}: {results[i]['status']}, {results[i]['reason']}" for i in missed[:5])
        return _fail(
            EXIT_UNREACHABLE, f"goal not reached for pair(s) {', '.join(map(str, missed))} (see {args.output}): {why}"
        )
    return EXIT_OK


def output_paths(output: Path, formats: str | None) -> list[tuple[str, Path]]:
    """(format, path) per requested format; several formats share the output's stem, one file each."""
    if formats is None:
        fmt = output.suffix.lower().lstrip(".")
        if fmt not in OUTPUT_FORMATS:
            raise UsageError(
                f"cannot tell the format from {str(output)!r}: use an extension "
                f"({', '.join(OUTPUT_FORMATS)}) or --format"
            )
        return [(fmt, output)]
    names = [f.strip().lower().lstrip(".") for f in formats.split(",") if f.strip()]
    unknown = [f for f in names if f not in OUTPUT_FORMATS]
    if unknown or not names:
        raise UsageError(f"unknown --format {', '.join(unknown) or formats!r}; choose from {', '.join(OUTPUT_FORMATS)}")
    if "gltf" in names and "bin" in names:
        raise UsageError(
            "--format gltf writes its buffer to <name>.bin, where the Detour navmesh (bin) would go: "
            "use glb with bin, or write them in two runs"
        )
    stem = output.with_suffix("") if output.suffix.lower().lstrip(".") in OUTPUT_FORMATS else output
    return [(fmt, stem.with_name(f"{stem.name}.{fmt}")) for fmt in dict.fromkeys(names)]


def default_text(parameter) -> str:
    """A bake parameter's default with its unit, as --help shows it."""
    unit = "" if parameter.unit == "count" else " degrees" if parameter.unit == "degrees" else f" {parameter.unit}"
    return f"{parameter.default:g}{unit}"


def parameter_values(args: argparse.Namespace) -> dict[str, float]:
    """Bake parameter options given, as BakeParams fields (slope in degrees), checked before anything is loaded."""
    values = {p.name: getattr(args, p.name) for p in lib.BAKE_PARAMETERS if getattr(args, p.name) is not None}
    for parameter in lib.BAKE_PARAMETERS:  # each on its own: how they fit together depends on the level's settings
        problem = parameter.problem(values[parameter.name]) if parameter.name in values else None
        if problem:
            raise UsageError(f"parameter {parameter.name} {problem}")
    return values


def preset_names() -> dict[str, str | Path]:
    """Lower-case preset name -> built-in key or user preset file (Blender's preset folders)."""
    names: dict[str, str | Path] = {}
    for folder in bpy.utils.preset_paths(presets.PRESET_SUBDIR):
        for file in sorted(Path(folder).glob("*.py")):
            names[file.stem.lower()] = file
            names[bpy.path.display_name(file.stem).lower()] = file
    for key, label, _ in presets.BUILTIN_ITEMS:
        names[key.lower()] = key
        names[label.lower()] = key
    return names


def find_preset(name: str) -> str | Path:
    known = preset_names()
    found = known.get(name.lower())
    if found is None:
        choices = sorted({k.lower() for k in presets.BUILTIN} | {n for n, v in known.items() if isinstance(v, Path)})
        raise UsageError(f"unknown --preset {name!r}; choose from {', '.join(choices)}")
    return found


def apply_preset(settings, preset: str | Path) -> None:
    if isinstance(preset, Path):
        bpy.utils.execfile(str(preset))
    else:
        presets.apply_builtin(settings, preset)


def load_scene(path: Path) -> None:
    """Make `path` the scene to bake: open a .blend, or import a scene file into an empty scene."""
    _check_file(path, "input file")
    suffix = path.suffix.lower()
    if suffix == ".blend":
        _open_blend(path)
        return
    if suffix not in SCENE_IMPORTERS:
        raise UsageError(f"cannot read {path.name!r}: use a .blend, .obj, .gltf, .glb or .fbx file")
    if suffix == ".obj":
        check_obj(path)
    elif suffix in (".gltf", ".glb"):
        check_gltf(path)
    bpy.data.batch_remove(list(bpy.data.objects))
    module, name = SCENE_IMPORTERS[suffix]
    importer = getattr(getattr(bpy.ops, module), name)
    try:
        result = importer(filepath=str(path.resolve()))
    except RuntimeError as exc:
        raise UsageError(f"cannot import {path.name!r}: {io_formats.blender_error(exc)}") from None
    if "FINISHED" not in result or not any(o.type == "MESH" for o in bpy.context.scene.objects):
        raise UsageError(f"{path.name!r} holds no mesh to bake")


def check_gltf(path: Path) -> None:
    """Refuse a glTF whose vertex positions hold NaN or infinity, naming the mesh: Blender's importer
    would turn them into 0 without a word. Files this cannot read are left to the importer."""
    try:
        document, chunk = _gltf_parts(path)
        for mesh in document.get("meshes", []):
            for primitive in mesh.get("primitives", []):
                index = primitive.get("attributes", {}).get("POSITION")
                if index is None or "KHR_draco_mesh_compression" in primitive.get("extensions", {}):
                    continue
                positions = _gltf_floats(path, document, chunk, document["accessors"][index])
                if positions is not None and not np.isfinite(positions).all():
                    raise UsageError(
                        f"{path.name!r}: mesh {mesh.get('name', '')!r} has NaN or infinite vertex positions "
                        "(Blender's importer would make them 0)"
                    )
    except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError):
        return


def _gltf_parts(path: Path) -> tuple[dict, bytes | None]:
    """A glTF's JSON document and, for a .glb, its binary chunk."""
    data = path.read_bytes()
    if data[:4] != b"glTF":
        return json.loads(data.decode("utf-8")), None
    json_length = int.from_bytes(data[12:16], "little")
    document = json.loads(data[20 : 20 + json_length].decode("utf-8"))
    rest = 20 + json_length
    binary = data[rest + 8 : rest + 8 + int.from_bytes(data[rest : rest + 4], "little")] if len(data) > rest else None
    return document, binary


def _gltf_floats(path: Path, document: dict, chunk: bytes | None, accessor: dict) -> np.ndarray | None:
    """A float accessor's values (count, components); None for other component types."""
    if accessor.get("componentType") != 5126 or "bufferView" not in accessor:
        return None
    view = document["bufferViews"][accessor["bufferView"]]
    buffer = document["buffers"][view["buffer"]]
    uri = buffer.get("uri")
    if uri is None:
        data = chunk or b""
    elif uri.startswith("data:"):
        data = base64.b64decode(uri.split(",", 1)[1])
    else:
        data = (path.parent / urllib.parse.unquote(uri)).read_bytes()
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[accessor["type"]]
    stride = view.get("byteStride") or 4 * width
    start = view.get("byteOffset", 0) + accessor.get("byteOffset", 0)
    count = accessor["count"]
    if not count:
        return None
    step = stride // 4  # glTF aligns float accessors and strides to 4 bytes
    floats = np.frombuffer(data, dtype="<f4", count=step * (count - 1) + width, offset=start)
    return floats[np.arange(count)[:, None] * step + np.arange(width)]


def check_obj(path: Path) -> None:
    """Refuse an OBJ with non-finite coordinates or face indices out of range, naming the line:
    Blender's importer would turn NaN into 0 and drop such faces without a word."""
    vertices = 0
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read {path.name!r}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "v":
            try:
                xyz = [float(c) for c in parts[1:4]]
            except ValueError:
                raise UsageError(
                    f"{path.name}:{number}: vertex coordinates are not numbers: {line.strip()!r}"
                ) from None
            if len(xyz) < 3 or not all(math.isfinite(c) for c in xyz):
                raise UsageError(f"{path.name}:{number}: vertex needs three finite coordinates: {line.strip()!r}")
            vertices += 1
        elif parts[0] == "f":
            for corner in parts[1:]:
                try:
                    index = int(corner.split("/")[0])
                except ValueError:
                    raise UsageError(f"{path.name}:{number}: face index {corner!r} is not a number") from None
                if index == 0 or not -vertices <= index <= vertices:
                    raise UsageError(
                        f"{path.name}:{number}: face index {index} is out of range ({vertices} vertices so far)"
                    )


def load_navmesh(path: Path, object_name: str | None) -> lib.NavMesh:
    """The navmesh in a .json file, or our baked object in a .blend (the only one, or `object_name`)."""
    _check_file(path, "navmesh file")
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            return io_formats.read_navmesh_file(path)
        except lib.NavMeshError as exc:
            raise UsageError(f"{path.name}: {exc}") from None
    if suffix != ".blend":
        raise UsageError(f"cannot read a navmesh from {path.name!r}: use a navmesh .json or a .blend")
    _open_blend(path)
    ours = [o for o in bpy.data.objects if o.get(mesh_write.TAG)]
    if object_name is not None:
        ours = [o for o in ours if o.name == object_name]
    if len(ours) != 1:
        names = ", ".join(o.name for o in bpy.data.objects if o.get(mesh_write.TAG)) or "none"
        what = (
            f"no baked navmesh object named {object_name!r}"
            if object_name
            else ("no baked navmesh object" if not ours else "several baked navmesh objects, pick one with --object")
        )
        raise UsageError(f"{path.name}: {what} (baked navmeshes: {names})")
    try:
        return mesh_write.read_navmesh_object(ours[0])
    except lib.NavMeshError as exc:
        raise UsageError(f"{path.name}: {exc}") from None


def load_queries(path: Path) -> list[list[float]]:
    """Start/goal pairs from a JSON list of 6-number lists; every defect names the offending entry."""
    _check_file(path, "queries file")
    try:
        data = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path.name} is not valid JSON: {exc}") from None
    if not isinstance(data, list) or not data:
        raise UsageError(f"{path.name} must hold a non-empty JSON list of [sx, sy, sz, gx, gy, gz]")
    pairs = []
    for i, entry in enumerate(data):
        ok = (
            isinstance(entry, list)
            and len(entry) == 6
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in entry)
        )
        if not ok:
            raise UsageError(f"{path.name}: entry {i} must be 6 finite numbers [sx, sy, sz, gx, gy, gz], got {entry!r}")
        pairs.append([float(v) for v in entry])
    return pairs


def register() -> None:
    """Make `blender -c navmesh ...` available (Blender 4.2+)."""
    global _cli_handle
    if _cli_handle is None and hasattr(bpy.utils, "register_cli_command"):
        _cli_handle = bpy.utils.register_cli_command(COMMAND_ID, main)


def unregister() -> None:
    global _cli_handle
    if _cli_handle is not None:
        bpy.utils.unregister_cli_command(_cli_handle)
        _cli_handle = None


def _open_blend(path: Path) -> None:
    try:
        bpy.ops.wm.open_mainfile(filepath=str(path.resolve()), load_ui=False)
    except RuntimeError as exc:
        raise UsageError(f"cannot open {path.name!r}: {io_formats.blender_error(exc)}") from None


def _refuse_overwriting(outputs: list[Path], source: Path | None, what: str) -> None:
    """A UsageError when an output (or a .gltf's buffer, <name>.bin) would replace the source read."""
    if source is None or not source.exists():
        return
    for path in outputs:
        written = [path, path.with_suffix(".bin")] if path.suffix.lower() == ".gltf" else [path]
        for target in written:
            if target.exists() and target.samefile(source):
                raise UsageError(f"the output {str(target)!r} is {what} read: it would be replaced; write elsewhere")


def _refuse_unused_options(args: argparse.Namespace, formats: set[str]) -> None:
    """A UsageError for a format option none of the requested formats uses (it would be ignored)."""
    unused = [
        (option, applies)
        for option, given, applies in (
            ("--tile-size", args.tile_size is not None, ("bin",)),
            ("--piece-size", args.piece_size is not None, ("bin",)),
            ("--y-up", args.y_up, ("json", "dae")),
        )
        if given and not formats & set(applies)
    ]
    if unused:
        option, applies = unused[0]
        raise UsageError(
            f"{option} applies to {' and '.join(applies)} output only, and none is written "
            f"(formats: {', '.join(sorted(formats))}): add {applies[0]} to --format, or leave {option} out"
        )


def _written_files(path: Path, first_types: list[str], navmeshes: int) -> list[Path]:
    """The files writing `path` makes: one per navmesh when there are several (named for the first
    agent type each serves, as bake_command names them; a .blend holds them all), and a .gltf's
    buffer beside it."""
    if navmeshes > 1 and path.suffix.lower() != ".blend":
        paths = [path.with_name(f"{path.stem}_{_file_part(name)}{path.suffix}") for name in first_types]
    else:
        paths = [path]
    gltf = [path.with_suffix(".bin") for path in paths if path.suffix.lower() == ".gltf"]
    return paths + gltf


def _check_writable(path: Path) -> None:
    """A UsageError when the output cannot be written, found before any work and without creating
    anything: an existing file that is read-only, a folder at its place, or a folder we may not write in."""
    if path.is_dir():
        raise UsageError(f"cannot write {str(path)!r}: it is a folder")
    try:
        lib.files.check_writable(path)
    except lib.NavMeshError as exc:
        raise UsageError(str(exc)) from None
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # _make_folder makes the missing ones
        folder = folder.parent
    if not folder.is_dir():
        raise UsageError(f"cannot write {str(path)!r}: {str(folder)!r} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {str(path)!r}: no permission to write in the folder {str(folder)!r}")


def _file_part(name: str) -> str:
    """An agent type's name as part of a file name: characters no file name may hold become "_"."""
    return re.sub(r'[\\/:*?"<>|\x00-\x1f]', "_", name)


def _make_folder(path: Path) -> None:
    """Make the folder an output goes in; UsageError saying why it cannot be (a file of that name
    on the way, no permission)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write {str(path)!r}: cannot make its folder: {exc.strerror or exc}") from None


def _check_file(path: Path, kind: str) -> None:
    """A UsageError saying what is wrong with a file we must read: missing, or a folder."""
    if path.is_dir():
        raise UsageError(f"{kind} {str(path)!r} is a folder, not a file")
    if not path.is_file():
        raise UsageError(f"{kind} {str(path)!r} does not exist")


def _save_blend(path: Path) -> None:
    """Save the scene with its navmesh as a .blend, all or nothing, keeping the session's own file
    path. Blender reports a save cut short by a full disk as saved, so the file's end is checked."""
    with lib.files.replacing(path) as temp:
        try:
            bpy.ops.wm.save_as_mainfile(filepath=str(temp.resolve()), check_existing=False, copy=True)
        except RuntimeError as exc:
            raise OSError(io_formats.blender_error(exc)) from None
        if not _whole_blend(temp):
            raise OSError("Blender's file was cut short (is the disk full?)")


# How a .blend ends: its last block (uncompressed), or the seek table of zstd's seekable format
# that Blender compresses with.
_BLEND_END, _ZSTD_MAGIC, _SEEKABLE_END = b"ENDB", b"\x28\xb5\x2f\xfd", b"\xb1\xea\x92\x8f"


def _whole_blend(path: Path) -> bool:
    """Does the .blend at path end as a complete one does?"""
    with open(path, "rb") as fh:
        head = fh.read(8)
        fh.seek(0, os.SEEK_END)
        fh.seek(max(fh.tell() - 64, 0))
        tail = fh.read()
    if head.startswith(_ZSTD_MAGIC):
        return tail.endswith(_SEEKABLE_END)
    return head.startswith(b"BLENDER") and _BLEND_END in tail


def _fail(code: int, message: str) -> int:
    print(f"navmesh: error: {message}", file=sys.stderr)
    return code
