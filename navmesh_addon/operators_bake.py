"""The Bake operator: scene -> lib.generate -> navmesh object.

EXEC bakes synchronously (scripts, CLI). INVOKE extracts on the main thread, runs lib.generate in a
worker thread and polls it from a modal timer, so Blender stays responsive; Esc cancels and leaves
the scene as it was. The scene is only written on the main thread, once the worker has finished.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass

import bpy
import numpy as np
from bpy.app.handlers import persistent

import blender_navmesh as lib

from . import agents, mesh_write, scene_extract
from .scene_extract import SceneArrays

# Custom property on a navmesh object: the names of its source objects whose evaluated geometry no
# longer matches the bake's (on_depsgraph_update keeps it; a name leaves it when its source is as it
# was baked again). A string: the reason an earlier version of the add-on stored.
STALE_KEY = "navmesh_stale"


RESULT_SUFFIX = "_navmesh"


def result_name(scene, settings) -> str:
    """Name of the result object: the source collection's name, else the scene's."""
    if settings.source == "COLLECTION" and settings.collection is not None:
        return f"{settings.collection.name}{RESULT_SUFFIX}"
    return f"{scene.name}{RESULT_SUFFIX}"


@dataclass(frozen=True)
class BakeTarget:
    """One navmesh to bake: its object's name, its parameters and the agent types it serves (none:
    the settings' own agent)."""

    name: str
    params: lib.BakeParams
    agent_types: tuple[str, ...] = ()


def bake_targets(scene, settings, agent_type: str = "") -> list[BakeTarget]:
    """What a bake writes: one navmesh per agent type group (only `agent_type`'s group if given), or
    the settings' agent when the scene has no agent types. NavMeshError if a parameter is out of range
    or two types share a name."""
    base = result_name(scene, settings)
    if not len(settings.agent_types):
        return [BakeTarget(base, settings.to_bake_params())]
    names = [a.name for a in settings.agent_types]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise lib.NavMeshError(f"two agent types are named {twice!r}: rename one (each names its navmesh)")
    groups = agents.agent_groups(settings)
    if agent_type:
        groups = [group for group in groups if agent_type in {a.name for a in group}]
        if not groups:
            raise lib.NavMeshError(f"no agent type named {agent_type!r}")
    return [
        BakeTarget(agents.navmesh_name(base, group), agents.group_params(settings, group), tuple(a.name for a in group))
        for group in groups
    ]


def agent_navmesh(scene, agent) -> bpy.types.Object | None:
    """Our navmesh object that serves an agent type (the one its group bakes to), or None."""
    settings = scene.navmesh
    group = next(g for g in agents.agent_groups(settings) if agent in g)
    name = agents.navmesh_name(result_name(scene, settings), group)
    return next((obj for obj in mesh_write.own_navmesh_objects(scene) if obj.get(mesh_write.TAG) == name), None)


class BakeJob:
    """The bakes of one set of extracted arrays, run inline or in a worker thread, one target after
    another; cancellable at every progress report. `results` holds one NavMesh per target."""

    def __init__(self, scene, settings, arrays: SceneArrays, targets: list[BakeTarget], on_progress=None):
        # Where the result goes, fixed when the bake starts: the user may switch scenes or change the
        # sources while a modal bake runs.
        self.scene = scene
        self.base = result_name(scene, settings)
        self.source_kind = _source_kind(settings)
        self.arrays = arrays
        self.targets = targets
        self.on_progress = on_progress
        self.stage = "waiting"
        self.fraction = 0.0
        self.results: list[lib.NavMesh] = []
        self.downward: list[list[str]] = []  # per result, the objects whose floors face down
        self.error: Exception | None = None
        self.cancelled = False
        self.seconds = 0.0
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    def _progress(self, stage: str, fraction: float) -> None:
        done, count = len(self.results), len(self.targets)
        if count > 1:
            stage, fraction = f"{self.targets[done].name}: {stage}", (done + fraction) / count
        self.stage, self.fraction = stage, fraction
        if self.on_progress is not None:
            self.on_progress(stage, fraction)
        if self._cancel.is_set():
            raise lib.BakeCancelled(stage)

    def run(self) -> None:
        """Bake now, on this thread; outcome in results / error / cancelled."""
        start = time.perf_counter()
        a = self.arrays
        try:
            for target in self.targets:
                self.results.append(
                    lib.generate(
                        a.vertices,
                        a.triangles,
                        target.params,
                        a.walkable,
                        a.areas,
                        self._progress,
                        seeds=a.seeds if len(a.seeds) else None,
                        seed_names=a.seed_names,
                        area_costs=a.area_costs,
                        volumes=a.volumes,
                        links=a.links,
                    )
                )
                self.downward.append(self._downward(target.params))
        except lib.BakeCancelled:
            self.cancelled = True
            self.results = []
        except Exception as exc:  # reported to the user by the operator, never lost in the thread
            self.error = exc
        self.seconds = time.perf_counter() - start

    def _downward(self, params: lib.BakeParams) -> list[str]:
        """arrays.downward_floors, once per slope and region area (agent type groups share them)."""
        for target, found in zip(self.targets, self.downward):
            if (target.params.agent_max_slope, target.params.region_min_area) == (
                params.agent_max_slope,
                params.region_min_area,
            ):
                return found
        return self.arrays.downward_floors(params)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="navmesh-bake", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def done(self) -> bool:
        return self._thread is None or not self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


def prepare(context, settings, extra_seeds=(), targets: list[BakeTarget] | None = None) -> BakeJob:
    """Main-thread half before the bake: validated parameters and extracted arrays (NavMeshError if
    unusable). extra_seeds: walkable seeds besides the scene's seed empties (the CLI's --seed);
    targets: what to bake, by default bake_targets (every agent type group)."""
    targets = bake_targets(context.scene, settings) if targets is None else targets
    mesh_write.check_not_edited(context.scene)
    arrays = scene_extract.extract_scene(context, settings.source, settings.collection)
    extra = np.asarray(extra_seeds, dtype=np.float64).reshape(-1, 3)
    arrays.seeds = np.vstack([arrays.seeds, extra])
    arrays.seed_names += [f"--seed {k + 1}" for k in range(len(extra))]
    return BakeJob(context.scene, settings, arrays, targets)


def finish(job: BakeJob, replace_stale: bool = False) -> list[bpy.types.Object]:
    """Main-thread half after the bake: write one object per target into the scene the bake was
    started in, or raise the bake's error (then nothing is written). replace_stale (a bake of every
    agent type group): the scene's own navmeshes of the same result that this bake no longer writes
    are removed, so a re-bake leaves only what it wrote: a type renamed, or moved to another group by
    a new height, climb or slope; the scene's agent before agent types were added, or the types before
    they were all removed; the result of the scene's sources under the scene's old name, or of a
    source collection under its old name. Navmeshes baked from another source collection, imported,
    or of another scene or file, stay."""
    scene = job.scene
    if not _alive(scene):
        raise lib.NavMeshError("the scene was deleted while the navmesh baked: nothing was written")
    if job.error is not None:
        if isinstance(job.error, lib.NavMeshError):
            raise job.error
        raise lib.NavMeshError(f"the bake failed unexpectedly: {type(job.error).__name__}: {job.error}") from job.error
    for target, mesh, downward in zip(job.targets, job.results, job.downward):
        if mesh.is_empty:
            who = f" for {', '.join(target.agent_types)}" if target.agent_types else ""
            if downward:
                raise lib.NavMeshError(
                    f"nothing walkable{who}: the floor faces of {_listed(downward)} face down (flipped "
                    "normals), and only faces facing up are walked on: select them, and in Edit Mode "
                    "Mesh > Normals > Recalculate Outside (or Flip)"
                )
            raise lib.NavMeshError(
                f"nothing walkable{who}: {mesh.empty_reason}. Check the objects' Navmesh role, "
                "lower Agent Radius or Min Region Area, or raise Max Slope"
            )
    mesh_write.check_not_edited(scene)  # entered while a modal bake ran
    objects = []
    for target, mesh, downward in zip(job.targets, job.results, job.downward):
        stats = {
            "bake_time": job.seconds / len(job.targets),
            "sources": job.arrays.object_names,
            "warnings": target.params.warnings(),
            # Faults of the level geometry that the bake leaves out.
            "geometry_warnings": ([downward_warning(downward)] if downward else [])
            + left_out_links_warning(job.arrays.links, mesh),
            "islands": int(len(np.unique(mesh.islands()))),
            "seeds": len(job.arrays.seeds),
            # What out_of_date and on_depsgraph_update compare a later scene with.
            "digests": job.arrays.digests,
            "settings": json.dumps(job.arrays.settings, sort_keys=True),
            "area_types": json.dumps(job.arrays.area_types),
        }
        stats["result"] = job.base
        stats["source"] = job.source_kind
        if target.agent_types:
            stats["agent_types"] = list(target.agent_types)
        obj = mesh_write.write_navmesh_object(scene, mesh, target.name, stats=stats)
        if STALE_KEY in obj:
            del obj[STALE_KEY]
        objects.append(obj)
    if replace_stale:
        written = {target.name for target in job.targets}
        for obj in mesh_write.own_navmesh_objects(scene):
            if obj.get(mesh_write.TAG) not in written and _replaced_by(obj, job):
                mesh_write.remove_navmesh_object(obj)
    return objects


def _replaced_by(obj, job: BakeJob) -> bool:
    """Is our navmesh object an earlier result of what `job` bakes: of its result name, of the
    scene's sources under the scene's old name, or of a source collection since renamed (its name
    gone, its objects among this bake's)?"""
    info, tag = obj.get("navmesh", {}), obj.get(mesh_write.TAG)
    if info.get("result") == job.base or tag == job.base:
        return True
    if info.get("source") == "scene" == job.source_kind:
        return True
    if info.get("source") == "collection" == job.source_kind:
        collection = str(info.get("result", "")).removesuffix(RESULT_SUFFIX)
        return collection not in bpy.data.collections and bool(
            set(info.get("sources", ())) & set(job.arrays.object_names)
        )
    return False


def _alive(block) -> bool:
    """Is the datablock still there (Blender raises ReferenceError on a deleted one)?"""
    try:
        return block.name is not None
    except ReferenceError:
        return False


def _source_kind(settings) -> str:
    """'collection' when the bake reads a source collection (its navmesh is named after it), else
    'scene' (named after the scene)."""
    return "collection" if settings.source == "COLLECTION" and settings.collection is not None else "scene"


def bake_to_object(context, settings=None, on_progress=None, extra_seeds=()) -> bpy.types.Object:
    """Synchronous bake of the settings' own agent (the Agent fields, not the agent types); returns
    the navmesh object, raises NavMeshError. on_progress(stage, fraction) is called as the bake goes;
    extra_seeds as in `prepare`."""
    settings = settings or context.scene.navmesh
    target = BakeTarget(result_name(context.scene, settings), settings.to_bake_params())
    job = prepare(context, settings, extra_seeds, [target])
    job.on_progress = on_progress
    job.run()
    return finish(job)[0]


class NAVMESH_OT_bake(bpy.types.Operator):
    """Bake a navmesh from the chosen sources (Esc cancels)"""

    bl_idname = "navmesh.bake"
    bl_label = "Bake Navmesh"
    bl_options = {"REGISTER", "UNDO"}

    agent_type: bpy.props.StringProperty(
        name="Agent Type",
        default="",
        options={"SKIP_SAVE"},
        description="Bake only the navmesh of this agent type (and the types sharing it); empty: every navmesh",
    )

    _job: BakeJob | None = None
    _timer = None

    def execute(self, context):
        settings = context.scene.navmesh
        try:
            job = prepare(context, settings, targets=bake_targets(context.scene, settings, self.agent_type))
            job.run()
            objects = finish(job, replace_stale=not self.agent_type)
        except lib.NavMeshError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        for obj in objects:
            self.report({"INFO"}, f"Navmesh {obj.name}: {obj['navmesh']['polygons']} polygons")
            _report_warnings(self, obj)
        return {"FINISHED"}

    def invoke(self, context, event):
        if context.window is None:
            return self.execute(context)
        settings = context.scene.navmesh
        try:
            self._job = prepare(context, settings, targets=bake_targets(context.scene, settings, self.agent_type))
        except lib.NavMeshError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self._job.start()
        self._timer = context.window_manager.event_timer_add(0.1, window=context.window)
        context.window_manager.modal_handler_add(self)
        self._show(context, "starting", 0.0)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        job = self._job
        if event.type == "ESC":
            job.cancel()
            job.wait()
            self._cleanup(context)
            self.report({"WARNING"}, "Navmesh bake cancelled; the scene is unchanged")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        if not job.done:
            self._show(context, job.stage, job.fraction)
            return {"RUNNING_MODAL"}
        self._cleanup(context)
        try:
            objects = finish(job, replace_stale=not self.agent_type)
        except lib.NavMeshError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        for obj in objects:
            self.report({"INFO"}, f"Navmesh {obj.name}: {obj['navmesh']['polygons']} polygons in {job.seconds:.2f} s")
            _report_warnings(self, obj)
        return {"FINISHED"}  # with the UNDO option this pushes the undo step for the write

    def _show(self, context, stage: str, fraction: float) -> None:
        if _alive(self._job.scene):  # the scene baked, whichever the window shows now
            settings = self._job.scene.navmesh
            settings.bake_stage, settings.bake_progress = stage, fraction
        context.workspace.status_text_set(f"Baking navmesh: {stage} {fraction:.0%}  (Esc to cancel)")
        for area in context.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()

    def _cleanup(self, context) -> None:
        context.window_manager.event_timer_remove(self._timer)
        context.workspace.status_text_set(None)
        if _alive(self._job.scene):
            settings = self._job.scene.navmesh
            settings.bake_stage, settings.bake_progress = "", 0.0


class NAVMESH_OT_clear(bpy.types.Operator):
    """Remove the scene's baked navmesh objects (the sources are untouched; Undo brings them back)"""

    bl_idname = "navmesh.clear"
    bl_label = "Clear Navmesh"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return mesh_write.poll_navmesh(
            cls, context, "there is no navmesh baked in this scene", mesh_write.own_navmesh_objects
        )

    def execute(self, context):
        try:
            mesh_write.check_not_edited(context.scene)
        except lib.NavMeshError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        found = mesh_write.own_navmesh_objects(context.scene)
        for obj in found:
            mesh_write.remove_navmesh_object(obj)
        self.report({"INFO"}, f"Removed {len(found)} navmesh object{'s' if len(found) != 1 else ''}")
        return {"FINISHED"}


class NAVMESH_OT_add_seed(bpy.types.Operator):
    """Add a walkable seed at the 3D cursor: with seeds, a bake keeps only the navmesh islands they stand on"""

    bl_idname = "navmesh.add_seed"
    bl_label = "Add Walkable Seed"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        obj = bpy.data.objects.new("Walkable Seed", None)
        obj[scene_extract.SEED_TAG] = True
        obj.empty_display_type = "CONE"
        obj.empty_display_size = 0.5
        obj.hide_render = True
        obj.location = context.scene.cursor.location
        mesh_write.collection_for_new_objects(context).objects.link(obj)
        self.report({"INFO"}, "Walkable seed added: the next bake keeps only the islands seeds stand on")
        return {"FINISHED"}


def out_of_date(obj, settings) -> str | None:
    """Why a navmesh object no longer matches what a bake would give now, or None: a source object's
    geometry changed (on_depsgraph_update), its navmesh role, area or materials' areas changed, it
    was renamed or deleted, the area types changed, or the bake settings differ from the ones it used."""
    stale = obj.get(STALE_KEY)
    if isinstance(stale, str):
        return stale  # marked by an earlier version of the add-on
    if stale:
        return f"{stale[0]} changed"
    info = obj.get("navmesh", {})
    if "sources" not in info:
        return None  # imported, not baked here: nothing to compare with
    gone = [name for name in info.get("sources", ()) if name not in bpy.data.objects]
    if gone:
        return f"{gone[0]} was renamed or deleted"
    for name, then in json.loads(info.get("settings", "{}")).items():
        source = bpy.data.objects.get(name)
        if source is not None and not scene_extract.same_settings(scene_extract.source_settings(source), then):
            return f"{name}'s navmesh role, area or materials changed"
    if "area_types" in info and json.loads(info["area_types"]) != scene_extract.area_types(settings):
        return "the area types changed"
    served = list(info.get("agent_types", ()))
    group = None
    if served:
        base = result_name(settings.id_data, settings)
        group = next(
            (g for g in agents.agent_groups(settings) if agents.navmesh_name(base, g) == obj.get(mesh_write.TAG)), None
        )
        if group is None:
            return "no agent type bakes to it any more"
        if [a.name for a in group] != served:
            return "its agent types changed"
    baked = info.get("params")
    if baked is not None:
        try:
            now = (settings.to_bake_params() if group is None else agents.group_params(settings, group)).to_dict()
        except lib.NavMeshError:
            return None  # the panel shows the settings' own error
        changed = [name for name, value in now.items() if name in baked and abs(float(baked[name]) - value) > 1e-6]
        if changed:
            return f"{changed[0]} changed"
    return None


@persistent
def on_depsgraph_update(scene, depsgraph) -> None:
    """Keep each navmesh's list of the source objects whose evaluated geometry differs from the
    bake's (STALE_KEY) up to date: a source is checked again when it is moved or edited, when an
    object it instances (a collection instance's, kept in another scene or an excluded collection)
    is, when a collection it instances changes (an object added or removed), or when its modifiers'
    inputs move (Blender then re-evaluates the source itself). A source whose digest is the bake's
    again (entering and leaving Edit Mode, a move cancelled with Esc) leaves the list."""
    objects, collections = set(), set()
    for update in depsgraph.updates:
        if not (update.is_updated_geometry or update.is_updated_transform):
            continue
        if isinstance(update.id, bpy.types.Object):
            original = update.id.original
            feeds = original.type in scene_extract.GEOMETRY_TYPES or original.instance_type != "NONE"
            if feeds and not original.get("navmesh_generated"):  # a navmesh is never a source
                objects.add(original.name)
        elif isinstance(update.id, bpy.types.Collection):
            collections.add(update.id.original.name)
    if not objects and not collections:
        return
    navs = [nav for nav in mesh_write.own_navmesh_objects(scene) if "digests" in nav.get("navmesh", {})]
    sources = set().union(*(nav["navmesh"]["digests"].keys() for nav in navs))
    hit = _hit_sources(depsgraph, sources, objects, collections)
    if not hit:
        return
    now = scene_extract.source_digests(depsgraph, scene, [bpy.data.objects[name] for name in hit])
    for nav in navs:
        baked = nav["navmesh"]["digests"]
        mine = hit.intersection(baked.keys())
        if not mine:
            continue
        before = nav.get(STALE_KEY)
        if isinstance(before, str):
            continue  # marked by an earlier version, which did not say which source: stays until a bake
        was = [] if before is None else list(before)
        stale = sorted((set(was) - mine) | {name for name in mine if baked[name] != now[name]})
        if stale == was:
            continue  # written only when it changes: a write is an update of its own
        if stale:
            nav[STALE_KEY] = stale
        else:
            del nav[STALE_KEY]


def _hit_sources(depsgraph, sources: set[str], objects: set[str], collections: set[str]) -> set[str]:
    """The sources (names) whose evaluated geometry may have changed with the updated objects and
    collections: updated themselves, instancing an updated object, or instancing an updated
    collection (or a collection holding it)."""
    hit = {name for name in sources & objects if name in bpy.data.objects}
    others = objects - sources
    if others:
        for inst in depsgraph.object_instances:
            if inst.is_instance and inst.object.original.name in others:
                owner = inst.parent.original.name
                if owner in sources:
                    hit.add(owner)
    if collections:
        for name in sources - hit:
            obj = bpy.data.objects.get(name)
            group = obj.instance_collection if obj is not None and obj.instance_type == "COLLECTION" else None
            if group is not None and (
                group.name in collections or any(c.name in collections for c in group.children_recursive)
            ):
                hit.add(name)
    return hit


def register_handlers() -> None:
    if on_depsgraph_update not in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.append(on_depsgraph_update)


def unregister_handlers() -> None:
    if on_depsgraph_update in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.remove(on_depsgraph_update)


def _report_warnings(operator, obj) -> None:
    """The bake parameters' warnings (settings that make little sense together) and the level
    geometry's (floors facing down), in the Info log."""
    for warning in obj["navmesh"].get("warnings", ()):
        operator.report({"WARNING"}, f"Navmesh settings: {warning}")
    for warning in obj["navmesh"].get("geometry_warnings", ()):
        operator.report({"WARNING"}, f"Navmesh sources: {warning}")


def downward_warning(names: list[str]) -> str:
    """The warning for floors facing down in a bake that found other floors."""
    return (
        f"the floor faces of {_listed(names)} face down (flipped normals?), so they get no navmesh: if "
        "agents should walk there, select them, and in Edit Mode Mesh > Normals > Recalculate Outside"
    )


def left_out_links_warning(specs: list, mesh: lib.NavMesh) -> list[str]:
    """The warning for off-mesh links for smaller agents that this navmesh leaves out (an end lies
    on no floor this agent fits on, lib.links.attach_links): a mistyped end must not vanish unsaid."""
    kept = {link.name for link in mesh.links}
    names = [spec.name for spec in specs if spec.name not in kept]
    if not names:
        return []
    return [
        f"off-mesh link{'s' if len(names) > 1 else ''} {_listed(names)} (Link Radius below this agent's) "
        f"left out: an end lies on no floor an agent of radius {mesh.params.agent_radius:g} m fits on"
    ]


def _listed(names: list[str]) -> str:
    """'A', 'A and B', 'A, B and 2 more'."""
    if len(names) > 3:
        return f"{', '.join(names[:2])} and {len(names) - 2} more"
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


CLASSES = (NAVMESH_OT_bake, NAVMESH_OT_clear, NAVMESH_OT_add_seed)
