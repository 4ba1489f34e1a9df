"""Blender units and lib's meters. A scene's Unit Scale is how many meters one Blender unit is (a
level modelled in centimetres has 0.01): the add-on hands lib meters and shows its answers back in
Blender units, so the sidebar's "40 cm" agent is 0.4 m to the bake whatever the scale."""

from __future__ import annotations


def meters_per_unit(scene) -> float:
    """Meters in one Blender unit: the scene's Unit Scale (1 without a unit system, where Blender
    shows lengths unscaled)."""
    units = scene.unit_settings
    return float(units.scale_length) if units.system != "NONE" else 1.0


# Blender's symbol for each fixed Length unit of the scene's Units panel.
_LENGTH_SYMBOLS = {
    "KILOMETERS": "km",
    "METERS": "m",
    "CENTIMETERS": "cm",
    "MILLIMETERS": "mm",
    "MICROMETERS": "µm",
    "MILES": "mi",
    "FEET": "'",
    "INCHES": '"',
    "THOU": "thou",
}


def length_text(scene, value: float, precision: int = 4) -> str:
    """A length in Blender units as Blender shows it in this scene: times the Unit Scale, in the
    scene's Length unit (Adaptive or Separate Units: the unit Blender's own formatting picks), or
    the plain number when the scene has no unit system."""
    from bpy.utils import units as blender_units

    settings = scene.unit_settings
    if settings.system == "NONE":
        return f"{value:.{precision}g}"
    meters = value * settings.scale_length
    symbol = _LENGTH_SYMBOLS.get(settings.length_unit)
    if symbol is None or settings.use_separate:
        return blender_units.to_string(
            settings.system, "LENGTH", meters, precision=precision, split_unit=settings.use_separate
        )
    size = blender_units.to_value(settings.system, "LENGTH", "1" + symbol)
    gap = "" if symbol in ("'", '"') else " "  # feet and inches stick to the number, as Blender writes them
    return f"{meters / size:.2f}{gap}{symbol}"
