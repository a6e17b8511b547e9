"""``--out`` of ``pvnviz run``: refused up front (exit 2) when its name, or a name the run writes beside it (the
staging folder ``.NAME.partial``, ``pvnviz.runs.store``), is longer than the file system takes."""

from __future__ import annotations

import os
from pathlib import Path

from pvnviz.core.config_fields import ConfigError

NAME_MAX, PATH_MAX = 255, 4096  # Linux's limits, in bytes; a system's own from pathconf where it answers


def check_out(out: str) -> Path:
    """``--out`` as a Path; ConfigError (exit 2) if its name, or a name the run writes beside it, is too long."""
    path = Path(out)
    try:  # the limit of the file system the run goes to (the nearest folder that exists)
        parent = next((p for p in (path.parent, *path.parents) if p.is_dir()), Path("."))
        name_max = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = NAME_MAX
    room = name_max - len(".") - len(".partial")  # the run is written beside --out, in .NAME.partial
    for part in path.parts[:-1]:
        if len(os.fsencode(part)) > name_max:
            raise ConfigError(
                f"--out holds a name of {len(os.fsencode(part))} bytes, where this file system takes {name_max} "
                "per name; choose a shorter --out."
            )
    if len(os.fsencode(path.name)) > room:
        raise ConfigError(
            f"--out's folder name is too long: {len(os.fsencode(path.name))} bytes, where this file system takes "
            f"{name_max} per name and the run writes .NAME.partial beside --out; choose a name of at most {room} bytes."
        )
    if len(os.fsencode(str(path.absolute()))) + 64 > PATH_MAX:  # + a file inside the staging folder
        raise ConfigError(f"--out's path is too long (the system takes {PATH_MAX} bytes); choose a shorter --out.")
    return path
