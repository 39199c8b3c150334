"""Which `localmem` program an agent should start, and whether it will still be there.

Agents started from a desktop do not inherit the shell's PATH, so the entry
holds an absolute path (SPEC section 8). A path inside uv's or pipx's own cache
(where `uvx localmem` and `pipx run localmem` put a temporary environment) works
today and disappears at the next cache clean, so it is refused with the command
that installs localmem for good. An ordinary virtual environment, anywhere, is a
real install.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from localmem.errors import InvalidInput, NotFound

# Path fragments of the caches `uvx` and `pipx run` create environments in.
UV_CACHE_MARKERS = ("/.cache/uv/", "/uv/archive-", "/Library/Caches/uv/")
PIPX_CACHE_MARKERS = ("/.cache/pipx/", "/pipx/.cache/", "/Library/Caches/pipx/")


def _under(path: str, root: str | None) -> bool:
    if not root:
        return False
    root = os.path.abspath(root).rstrip("/") + "/"
    return path.startswith(root)


def throwaway_tool(path: Path | str, env: Mapping[str, str] | None = None) -> str | None:
    """`uv` or `pipx` when `path` lies in that tool's cache, else None."""
    env = os.environ if env is None else env
    text = os.path.abspath(str(path)) + "/"
    if any(marker in text for marker in UV_CACHE_MARKERS) or _under(text, env.get("UV_CACHE_DIR")):
        return "uv"
    if any(marker in text for marker in PIPX_CACHE_MARKERS) or _under(
        text, env.get("PIPX_CACHE_DIR")
    ):
        return "pipx"
    return None


def install_source() -> str:
    """What to hand `uv tool install` / `pipx install`: where this copy came from.

    A copy built from a checkout records that folder in its `direct_url.json`
    (PEP 610); naming it installs the same localmem for good. Without that
    record the package name is the best we know.
    """
    from importlib import metadata

    try:
        record = metadata.distribution("localmem").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        record = None
    if record:
        import json
        from urllib.parse import unquote, urlparse

        try:
            url = urlparse(str(json.loads(record).get("url", "")))
        except (ValueError, AttributeError):
            url = urlparse("")
        if url.scheme == "file" and url.path:
            return unquote(url.path)
    return "localmem"


def install_commands(source: str | None = None) -> dict[str, str]:
    """The two commands that install localmem for good, keyed by tool."""
    source = install_source() if source is None else source
    return {"uv": f"uv tool install {source}", "pipx": f"pipx install {source}"}


def localmem_command(
    executable: str = sys.executable,
    prefix: str = sys.prefix,
    which: Callable[[str], str | None] = shutil.which,
    env: Mapping[str, str] | None = None,
    refuse_throwaway: bool = True,
) -> Path:
    """The absolute, resolved path of the installed `localmem` script.

    The script next to the running interpreter is preferred (it is the one
    running now); PATH is the fallback. Raises InvalidInput for a throwaway
    cache install (unless `refuse_throwaway` is False, for a listing that only
    reports) and NotFound when no script can be found.
    """
    beside = Path(executable).parent / "localmem"
    found = str(beside) if beside.is_file() and os.access(beside, os.X_OK) else which("localmem")
    if found is None:
        commands = install_commands()
        raise NotFound(
            "cannot find the installed `localmem` command; install it with "
            f"`{commands['uv']}` (or `{commands['pipx']}`) and run this again."
        )
    resolved = Path(found).resolve()
    if not refuse_throwaway:
        return resolved
    for candidate in (found, str(resolved), prefix, executable):
        tool = throwaway_tool(candidate, env)
        if tool is not None:
            raise InvalidInput(
                f"localmem is running from {tool}'s temporary cache ({found}), which is "
                f"deleted when the cache is cleaned, so an agent could not start it later; "
                f"install it for good with `{install_commands()[tool]}` and run "
                f"`localmem agents --install NAME` from that install."
            )
    return resolved
