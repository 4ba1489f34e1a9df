"""Blender units and lib's meters. A scene's Unit Scale is how many meters one Blender unit is (a
level modelled in centimetres has 0.01): the add-on hands lib meters and shows its answers back in
Blender units, so the sidebar's "40 cm" agent is 0.4 m to the bake whatever the scale."""

from __future__ import annotations


def meters_per_unit(scene) -> float:
    """Meters in one Blender unit: the scene's Unit Scale (1 without a unit system, where Blender
    shows lengths unscaled)."""
    units = scene.unit_settings
    return float(units.scale_length) if units.system != "NONE" else 1.0
