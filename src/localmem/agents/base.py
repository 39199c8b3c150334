"""What every agent writer shares: the entry, the merge flow, the backup and the refusals.

An agent is a config file location plus a format. The flow is the same for all
of them (SPEC section 8): read what is there, refuse a file that does not parse
(printing the block to add by hand), leave an identical entry alone, refuse a
stale one unless `repair`, otherwise merge our entry in keeping everything else,
back the original up to `<file>.bak` and replace the file atomically.

The entry also names the store the user's shell names (`$LOCALMEM_DB`, see
`named_store`), because an agent started from a desktop does not inherit the
shell's environment and Codex passes its servers only a whitelisted one
(decision 224). Only a named store is enforced: without one, an `env` the user
wrote into our entry is theirs, kept and never compared.

Before any of that the path is resolved (symlinks, `..`): the forbidden file
(`~/.claude.json`) is judged on where a write would really land, and a config
that leads outside the agent's own config location (`Agent.config_home`) is
refused, so a cloned repository's `.mcp.json -> ~/.claude.json` or `-> ~/x.json`
cannot turn `--install` into an edit of another file.

Formats (`json_format`, `toml_format`) only turn text into "the entry we find"
and "the text with our entry"; they never touch the disk.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from localmem.errors import Conflict, InvalidInput
from localmem.memory.workspaces import find_root
from localmem.paths import check_store_url, is_store_url, write_atomic

SERVER_NAME = "localmem"
STORE_SETTING = "LOCALMEM_DB"

Scope = Literal["project", "user"]
State = Literal["registered", "stale", "not_registered", "unreadable"]
InstallStatus = Literal["installed", "already_registered", "repaired"]


def server_entry(command: Path | str, store: str | None = None) -> dict[str, object]:
    """The entry every agent gets: the absolute localmem command and `serve`, and
    `env.LOCALMEM_DB` when the user's shell names a store (`named_store`)."""
    entry: dict[str, object] = {"command": str(command), "args": ["serve"]}
    if store is not None:
        entry["env"] = {STORE_SETTING: store}
    return entry


def named_store(ctx: AgentContext) -> str | None:
    """The store `ctx`'s environment names in `$LOCALMEM_DB`, as an agent's entry records
    it, or None when it names none (empty or unset).

    A team store's URL is kept as given once `check_store_url` accepts it (it raises
    InvalidInput for one carrying a password, which must never be written); a file
    path becomes absolute (`~` expanded, a relative path taken from the current
    folder, symlinks left as they are), since the agent starts the server elsewhere.
    """
    value = ctx.env.get(STORE_SETTING)
    if not value:
        return None
    if is_store_url(value):
        check_store_url(value)
        return value
    if value == "~" or value.startswith("~/"):
        expanded = str(ctx.home) + value[1:]  # the context's home, as a test sandbox gives it
    else:
        expanded = os.path.expanduser(value)
    return os.path.abspath(os.path.join(ctx.cwd, expanded))


class FormatError(Exception):
    """Raised by a format when a text does not parse; the message says where."""


class ConfigFormat(ABC):
    """Reads and writes the `localmem` server entry inside one kind of config text."""

    @abstractmethod
    def find_entry(self, text: str) -> dict[str, object] | None:
        """Our server's entry in `text`, or None. Raises FormatError if `text` does not parse."""

    @abstractmethod
    def add_entry(self, text: str | None, entry: dict[str, object]) -> str:
        """`text` (None: no file yet) with our entry added, everything else kept."""

    @abstractmethod
    def replace_entry(self, text: str, entry: dict[str, object]) -> str:
        """`text` with our existing entry's command and args replaced and the keys of the
        entry's `env` set inside the existing `env`, every other key kept."""

    @abstractmethod
    def block(self, entry: dict[str, object]) -> str:
        """The block a user adds by hand when we refuse to edit the file."""

    @abstractmethod
    def unchanged_elsewhere(self, old: str | None, new: str) -> bool:
        """True when `new` holds the same data as `old` apart from our entry."""


class UnreadableConfig(InvalidInput):
    """The config file does not parse (or cannot take our entry): nothing was written."""

    def __init__(self, path: Path, reason: str, block: str) -> None:
        self.path = path
        self.reason = reason
        self.block = block
        super().__init__(
            f"{path} {reason}; nothing was written. Add this block to it by hand:\n\n{block}"
        )


class RedirectedConfig(InvalidInput):
    """The config path leads (through a symlink) outside the agent's config location."""

    def __init__(self, path: Path, target: Path, home: Path, block: str) -> None:
        self.path = path
        self.target = target
        super().__init__(
            f"{path} leads to {target}, outside {home} where this agent's configuration "
            "lives, and localmem writes an agent's configuration only there (a cloned "
            "repository must not be able to aim it at another file), so nothing was "
            f"written; if that file is yours, add this block to it by hand:\n\n{block}"
        )


class StaleEntry(Conflict):
    """Our entry exists with another command, args or store, and `--repair` was not given."""

    def __init__(self, agent: str, path: Path, found: dict[str, object]) -> None:
        self.agent = agent
        self.path = path
        self.found = found
        super().__init__(
            f"{path} already registers localmem with a different command or store "
            f"({found.get('command')!s} {_args_text(found)}{_store_text(found)}); run "
            f"`localmem agents --install {agent} --repair` to point it at this install "
            "and store."
        )


def _args_text(entry: Mapping[str, object]) -> str:
    args = entry.get("args")
    if isinstance(args, list):
        return " ".join(str(a) for a in args)
    return str(args)


def _store_text(entry: Mapping[str, object]) -> str:
    # Only LOCALMEM_DB is shown: the entry's other env keys may be tokens.
    env = entry.get("env")
    if not isinstance(env, Mapping) or STORE_SETTING not in env:
        return ""
    store = str(env[STORE_SETTING])
    if is_store_url(store):
        try:
            check_store_url(store)
        except InvalidInput:  # written there by hand: still never shown
            store = "a URL carrying a password, not shown"
    return f"; {STORE_SETTING}={store}"


@dataclass(frozen=True)
class AgentContext:
    """Where the user is: home folder, current folder, environment and platform.

    Everything an agent's location or detection depends on, so tests pass a
    sandbox instead of patching globals.
    """

    home: Path
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)
    platform: str = sys.platform

    @classmethod
    def current(cls) -> AgentContext:
        return cls(home=Path.home(), cwd=Path.cwd(), env=dict(os.environ), platform=sys.platform)

    @property
    def project_root(self) -> Path:
        """The git repository root above the current folder (the workspace rule's
        `find_root`), else the current folder.

        Project-scoped configs (`.mcp.json`, `.cursor/mcp.json`) live there so a
        run from a subfolder still writes the file the agent reads.
        """
        root = find_root(self.cwd)
        return Path(root) if root is not None else self.cwd

    def which(self, name: str) -> str | None:
        return shutil.which(name, path=self.env.get("PATH", ""))


@dataclass(frozen=True)
class AgentStatus:
    name: str
    title: str
    detected: bool
    config_path: Path
    scope: Scope
    state: State
    entry: dict[str, object] | None
    problem: str | None = None  # why the file is unreadable


@dataclass(frozen=True)
class InstallResult:
    name: str
    title: str
    config_path: Path
    status: InstallStatus
    backup: Path | None
    store: str | None = None  # the LOCALMEM_DB the entry carries, when a store is named


def same_entry(found: Mapping[str, object], wanted: Mapping[str, object]) -> bool:
    """Same command and args, and the same `env.LOCALMEM_DB` when `wanted` names a store;
    without one, whatever `env` the user gave our entry is theirs and not compared."""
    if found.get("command") != wanted["command"] or found.get("args") != wanted["args"]:
        return False
    wanted_env = wanted.get("env")
    if not isinstance(wanted_env, Mapping) or STORE_SETTING not in wanted_env:
        return True
    env = found.get("env")
    return isinstance(env, Mapping) and env.get(STORE_SETTING) == wanted_env[STORE_SETTING]


class Agent(ABC):
    """One coding agent: its name, where its config lives, how to tell it is installed."""

    name: str
    title: str
    config_format: ConfigFormat

    @abstractmethod
    def config_path(self, ctx: AgentContext) -> Path:
        """The file `--install` writes for this user and this folder."""

    @abstractmethod
    def scope(self, ctx: AgentContext) -> Scope:
        """`project` when the file belongs to the repository, `user` when to the home folder."""

    @abstractmethod
    def detect(self, ctx: AgentContext) -> bool:
        """Whether the agent looks installed (its config folder or its program is there)."""

    def config_home(self, ctx: AgentContext) -> Path:
        """The folder the config file must resolve inside: the repository for a project
        file, else the folder holding the file (agents with a settings tree override it)."""
        if self.scope(ctx) == "project":
            return ctx.project_root
        return self.config_path(ctx).parent

    # The flow below is the same for every agent.

    def status(self, ctx: AgentContext, command: Path) -> AgentStatus:
        path = self.config_path(ctx)
        wanted = server_entry(command, named_store(ctx))
        state: State
        found: dict[str, object] | None = None
        problem: str | None = None
        try:
            text = _read_text(path)
            found = self.config_format.find_entry(text) if text is not None else None
        except (FormatError, UnicodeDecodeError) as error:
            state, problem = "unreadable", str(error)
        except OSError as error:  # a folder where the file should be, no permission...
            state, problem = "unreadable", f"cannot be read ({error.strerror or error})"
        else:
            if found is None:
                state = "not_registered"
            else:
                state = "registered" if same_entry(found, wanted) else "stale"
        return AgentStatus(
            name=self.name,
            title=self.title,
            detected=self.detect(ctx),
            config_path=path,
            scope=self.scope(ctx),
            state=state,
            entry=found,
            problem=problem,
        )

    def install(self, ctx: AgentContext, command: Path, repair: bool = False) -> InstallResult:
        path = self.config_path(ctx)
        store = named_store(ctx)  # a URL with a password is refused here, before any read
        wanted = server_entry(command, store)
        fmt = self.config_format
        block = fmt.block(wanted)
        target = self._write_target(ctx, path, block)
        try:
            original = target.read_bytes() if target.exists() else None
        except OSError as error:
            raise UnreadableConfig(
                path, f"cannot be read ({error.strerror or error})", block
            ) from None
        try:
            text = _decode(original)
            found = fmt.find_entry(text) if text is not None else None
        except (FormatError, UnicodeDecodeError) as error:
            raise UnreadableConfig(path, f"does not parse ({error})", block) from None

        status: InstallStatus
        if found is None:
            status = "installed"
        elif same_entry(found, wanted):
            return InstallResult(self.name, self.title, path, "already_registered", None, store)
        elif not repair:
            raise StaleEntry(self.name, path, found)
        else:
            status = "repaired"

        # Whatever the format did, check the result says exactly what we meant.
        try:
            if status == "installed":
                new_text = fmt.add_entry(text, wanted)
            else:
                new_text = fmt.replace_entry(text or "", wanted)
            written = fmt.find_entry(new_text)
        except FormatError as error:
            reason = f"defines its servers in a form localmem cannot edit ({error})"
            raise UnreadableConfig(path, reason, block) from None
        if written is None or not same_entry(written, wanted):
            reason = "defines its servers in a form localmem cannot edit"
            raise UnreadableConfig(path, reason, block)
        if not fmt.unchanged_elsewhere(text, new_text):
            reason = "could not be merged without changing other settings"
            raise UnreadableConfig(path, reason, block)

        backup = _backup(target, original) if original is not None else None
        mode = _mode_for(target, original is not None, self.scope(ctx))
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, new_text.encode("utf-8"), mode=mode)
        return InstallResult(self.name, self.title, path, status, backup, store)

    def _write_target(self, ctx: AgentContext, path: Path, block: str) -> Path:
        """Where a write to `path` really lands, once it is known to be allowed.

        A link that stays inside the config location is written through (the link
        survives); one that leads elsewhere is refused, as is the forbidden file
        wherever the path that reaches it starts.
        """
        target = path.resolve()
        _refuse_forbidden(ctx, path, target)
        home = self.config_home(ctx).resolve()
        if not target.is_relative_to(home):
            raise RedirectedConfig(path, target, home, block)
        return target


def _refuse_forbidden(ctx: AgentContext, path: Path, target: Path) -> None:
    # ~/.claude.json is Claude Code's own state file (history, per-project
    # settings); a half-understood merge there can cost the user much more than
    # an MCP entry is worth, so no writer may ever target it, however the path
    # that leads there is spelled.
    forbidden = ctx.home / ".claude.json"
    if path.expanduser() == forbidden or target == forbidden.resolve():
        raise InvalidInput(
            f"localmem never writes ~/.claude.json (Claude Code's own state file), and {path} "
            "leads there; nothing was written, use the project's own .mcp.json."
        )


def _read_text(path: Path) -> str | None:
    target = path.resolve()
    if not target.exists():
        return None
    return _decode(target.read_bytes())


def _decode(data: bytes | None) -> str | None:
    if data is None:
        return None
    # utf-8-sig: an editor that saved a BOM should not make the file "unparseable".
    return data.decode("utf-8-sig")


def _backup(target: Path, original: bytes) -> Path:
    backup = target.with_name(target.name + ".bak")
    write_atomic(backup, original, mode=stat.S_IMODE(target.stat().st_mode))
    return backup


def _mode_for(target: Path, exists: bool, scope: Scope) -> int:
    if exists:
        return stat.S_IMODE(target.stat().st_mode)
    # A project file is meant to be committed and read by teammates; a file in
    # the home folder may later hold tokens other servers need, so it starts private.
    return 0o644 if scope == "project" else 0o600
