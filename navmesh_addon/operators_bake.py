"""The Bake operator: scene -> lib.generate -> navmesh object.

EXEC bakes synchronously (scripts, CLI). INVOKE extracts on the main thread, runs lib.generate in a
worker thread and polls it from a modal timer, so Blender stays responsive; Esc cancels and leaves
the scene as it was. The scene is only written on the main thread, once the worker has finished.
"""
from __future__ import annotations

import threading
import time

import bpy
import numpy as np
from bpy.app.handlers import persistent

from . import lib, mesh_write, scene_extract
from .scene_extract import SceneArrays


# Custom property on a navmesh object: why it no longer matches its sources (set when one changes).
STALE_KEY = "navmesh_stale"


def result_name(context, settings) -> str:
    """Name of the result object: the source collection's name, else the scene's."""
    if settings.source == "COLLECTION" and settings.collection is not None:
        return f"{settings.collection.name}_navmesh"
    return f"{context.scene.name}_navmesh"


class BakeJob:
    """One bake of already-extracted arrays, run inline or in a worker thread; cancellable between stages."""

    def __init__(self, arrays: SceneArrays, params: lib.BakeParams, on_progress=None):
        self.arrays = arrays
        self.params = params
        self.on_progress = on_progress
        self.stage = "waiting"
        self.fraction = 0.0
        self.result: lib.NavMesh | None = None
        self.error: Exception | None = None
        self.cancelled = False
        self.seconds = 0.0
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    def _progress(self, stage: str, fraction: float) -> None:
        self.stage, self.fraction = stage, fraction
        if self.on_progress is not None:
            self.on_progress(stage, fraction)
        if self._cancel.is_set():
            raise lib.BakeCancelled(stage)

    def run(self) -> None:
        """Bake now, on this thread; outcome in result / error / cancelled."""
        start = time.perf_counter()
        try:
            a = self.arrays
            self.result = lib.generate(a.vertices, a.triangles, self.params, a.walkable, a.areas, self._progress,
                                       seeds=a.seeds if len(a.seeds) else None, area_costs=a.area_costs,
                                       volumes=a.volumes, links=a.links)
        except lib.BakeCancelled:
            self.cancelled = True
        except Exception as exc:  # reported to the user by the operator, never lost in the thread
            self.error = exc
        self.seconds = time.perf_counter() - start

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


def prepare(context, settings, extra_seeds=()) -> BakeJob:
    """Main-thread half before the bake: validated parameters and extracted arrays (NavMeshError if
    unusable). extra_seeds: walkable seeds besides the scene's seed empties (the CLI's --seed)."""
    params = settings.to_bake_params()
    arrays = scene_extract.extract_scene(context, settings.source, settings.collection)
    arrays.seeds = np.vstack([arrays.seeds, np.asarray(extra_seeds, dtype=np.float64).reshape(-1, 3)])
    return BakeJob(arrays, params)


def finish(context, settings, job: BakeJob) -> bpy.types.Object:
    """Main-thread half after the bake: write the result object, or raise the bake's error."""
    if job.error is not None:
        if isinstance(job.error, lib.NavMeshError):
            raise job.error
        raise lib.NavMeshError(f"the bake failed unexpectedly: {type(job.error).__name__}: {job.error}") from job.error
    mesh = job.result
    if mesh.is_empty:
        raise lib.NavMeshError(f"nothing walkable: {mesh.empty_reason}. Check the objects' Navmesh role, "
                               "lower Agent Radius or Min Region Area, or raise Max Slope")
    stats = {
        "bake_time": job.seconds,
        "sources": job.arrays.object_names,
        "warnings": job.params.warnings(),
        "islands": int(len(np.unique(mesh.islands()))),
        "seeds": len(job.arrays.seeds),
    }
    obj = mesh_write.write_navmesh_object(context, mesh, result_name(context, settings), stats=stats)
    if STALE_KEY in obj:
        del obj[STALE_KEY]
    return obj


def bake_to_object(context, settings=None, on_progress=None, extra_seeds=()) -> bpy.types.Object:
    """Synchronous bake of the scene's navmesh settings; returns the navmesh object, raises NavMeshError.
    on_progress(stage, fraction) is called as the bake goes; extra_seeds as in `prepare`."""
    settings = settings or context.scene.navmesh
    job = prepare(context, settings, extra_seeds)
    job.on_progress = on_progress
    job.run()
    return finish(context, settings, job)


class NAVMESH_OT_bake(bpy.types.Operator):
    """Bake a navmesh from the chosen sources (Esc cancels)"""

    bl_idname = "navmesh.bake"
    bl_label = "Bake Navmesh"
    bl_options = {"REGISTER", "UNDO"}

    _job: BakeJob | None = None
    _timer = None

    def execute(self, context):
        try:
            obj = bake_to_object(context)
        except lib.NavMeshError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Navmesh {obj.name}: {obj['navmesh']['polygons']} polygons")
        _report_warnings(self, obj)
        return {"FINISHED"}

    def invoke(self, context, event):
        if context.window is None:
            return self.execute(context)
        settings = context.scene.navmesh
        try:
            self._job = prepare(context, settings)
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
            obj = finish(context, context.scene.navmesh, job)
        except lib.NavMeshError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Navmesh {obj.name}: {obj['navmesh']['polygons']} polygons in {job.seconds:.2f} s")
        _report_warnings(self, obj)
        return {"FINISHED"}  # with the UNDO option this pushes the undo step for the write

    def _show(self, context, stage: str, fraction: float) -> None:
        settings = context.scene.navmesh
        settings.bake_stage, settings.bake_progress = stage, fraction
        context.workspace.status_text_set(f"Baking navmesh: {stage} {fraction:.0%}  (Esc to cancel)")
        for area in context.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()

    def _cleanup(self, context) -> None:
        context.window_manager.event_timer_remove(self._timer)
        context.workspace.status_text_set(None)
        settings = context.scene.navmesh
        settings.bake_stage, settings.bake_progress = "", 0.0


class NAVMESH_OT_clear(bpy.types.Operator):
    """Remove the baked navmesh objects from the scene (the sources are untouched; Undo brings them back)"""

    bl_idname = "navmesh.clear"
    bl_label = "Clear Navmesh"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return mesh_write.poll_navmesh(cls, context, "there is no baked navmesh in the scene")

    def execute(self, context):
        found = mesh_write.find_navmesh_objects(context.scene)
        for obj in found:
            data = obj.data
            bpy.data.objects.remove(obj)
            if data is not None and data.users == 0:
                bpy.data.meshes.remove(data)
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
        context.collection.objects.link(obj)
        self.report({"INFO"}, "Walkable seed added: the next bake keeps only the islands seeds stand on")
        return {"FINISHED"}


def out_of_date(obj, settings) -> str | None:
    """Why a navmesh object no longer matches what a bake would give now, or None: a source object
    changed or was deleted since the bake, or the bake settings differ from the ones it used."""
    if obj.get(STALE_KEY):
        return obj[STALE_KEY]
    info = obj.get("navmesh", {})
    if "sources" not in info:
        return None  # imported, not baked here: nothing to compare with
    gone = [name for name in info.get("sources", ()) if name not in bpy.data.objects]
    if gone:
        return f"{gone[0]} was deleted"
    baked = info.get("params")
    if baked is not None:
        try:
            now = settings.to_bake_params().to_dict()
        except lib.NavMeshError:
            return None  # the panel shows the settings' own error
        changed = [name for name, value in now.items() if name in baked and abs(float(baked[name]) - value) > 1e-6]
        if changed:
            return f"{changed[0]} changed"
    return None


@persistent
def on_depsgraph_update(scene, depsgraph) -> None:
    """Mark a navmesh out of date when one of its source objects is moved or its geometry edited."""
    changed = {update.id.original.name for update in depsgraph.updates
               if isinstance(update.id, bpy.types.Object) and (update.is_updated_geometry or update.is_updated_transform)}
    if not changed:
        return
    for nav in mesh_write.find_navmesh_objects(scene):
        if nav.get(STALE_KEY):
            continue
        hit = sorted(changed.intersection(nav.get("navmesh", {}).get("sources", ())))
        if hit:
            nav[STALE_KEY] = f"{hit[0]} changed"


def register_handlers() -> None:
    if on_depsgraph_update not in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.append(on_depsgraph_update)


def unregister_handlers() -> None:
    if on_depsgraph_update in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.remove(on_depsgraph_update)


def _report_warnings(operator, obj) -> None:
    """The bake parameters' warnings (settings that make little sense together), in the Info log."""
    for warning in obj["navmesh"].get("warnings", ()):
        operator.report({"WARNING"}, f"Navmesh settings: {warning}")


CLASSES = (NAVMESH_OT_bake, NAVMESH_OT_clear, NAVMESH_OT_add_seed)
