"""The project's own error type, so callers can tell bad input from bugs."""


class NavMeshError(ValueError):
    """Raised for input or parameters the generator cannot use. The message names the problem."""


class InputError(NavMeshError):
    """A NavMeshError for input that names something unusable as it stands: a walkable seed on no
    floor, two costs for one area id. Callers that catch NavMeshError see no difference; the command
    line exits with its "unusable input" code for it rather than "the bake failed"."""


class BakeCancelled(Exception):
    """Raised out of `generate` when its progress callback asks to stop."""
