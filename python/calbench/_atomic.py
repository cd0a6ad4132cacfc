"""Files written whole or not at all, like the C++ library's (lib/core/atomic_file.hpp): the
content goes to a staging file beside the target, created by tempfile.mkstemp (an unpredictable
name, O_CREAT | O_EXCL so never through a symbolic link planted there, mode 0600 while it is
written), then gets the target's usual mode (0644 less the umask) and is renamed over it."""
from __future__ import annotations

import os
import tempfile


def _umask() -> int:
    # Linux reports the umask without changing it; os.umask would have to set it to read it.
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def write_atomically(path: str | os.PathLike, data: str | bytes) -> None:
    """Writes DATA (text as UTF-8 with "\\n" line ends) to PATH atomically."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, staging = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                                   suffix=".tmp-calbench")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            os.fchmod(f.fileno(), 0o644 & ~_umask())
        os.replace(staging, path)
    except BaseException:
        try:
            os.unlink(staging)
        except FileNotFoundError:
            pass
        raise
