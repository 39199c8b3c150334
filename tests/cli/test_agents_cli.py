"""`localmem agents` as a real subprocess, with HOME in a temporary folder."""

from __future__ import annotations

import json
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import script

import localmem

# `make test` installs this checkout, so the install advice must name it.
CHECKOUT = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # the dev extra installs tomli on 3.10
    import tomli as tomllib


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "project"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "pkg" / "sub").mkdir(parents=True)
    return root


def run(
    args: list[str], cwd: Path, env: dict[str, str], exe: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [exe or script("localmem"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_listing_json(repo: Path, env: dict[str, str], isolated_home: Path) -> None:
    (isolated_home / ".codex").mkdir()
    done = run(["agents", "--json"], repo / "pkg", env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["command"] == str(Path(script("localmem")).resolve())
    by_name = {a["name"]: a for a in data["agents"]}
    assert list(by_name) == [
        "claude-code",
        "codex",
        "antigravity",
        "kiro",
        "cursor",
        "claude-desktop",
    ]
    assert by_name["codex"]["detected"] is True
    assert by_name["codex"]["config_path"] == str(isolated_home / ".codex" / "config.toml")
    assert by_name["claude-code"]["config_path"] == str(repo / ".mcp.json")
    assert by_name["claude-code"]["state"] == "not_registered"
    text = run(["agents"], repo, env)
    assert text.returncode == 0
    assert "codex" in text.stdout and str(repo / ".mcp.json") in text.stdout


def test_install_two_agents_from_a_subfolder(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    claude_json = isolated_home / ".claude.json"
    claude_json.write_text('{"numStartups": 3, "projects": {}}')
    before = claude_json.read_bytes()
    (isolated_home / ".codex").mkdir()
    (isolated_home / ".codex" / "config.toml").write_text('# mine\nmodel = "o3"\n')

    done = run(
        ["agents", "--install", "claude-code", "--install", "codex"], repo / "pkg" / "sub", env
    )
    assert done.returncode == 0, done.stderr
    command = str(Path(script("localmem")).resolve())
    mcp = json.loads((repo / ".mcp.json").read_text())
    assert mcp == {"mcpServers": {"localmem": {"command": command, "args": ["serve"]}}}
    toml_text = (isolated_home / ".codex" / "config.toml").read_text()
    assert toml_text.startswith('# mine\nmodel = "o3"\n')
    assert tomllib.loads(toml_text)["mcp_servers"]["localmem"] == {
        "command": command,
        "args": ["serve"],
    }
    assert claude_json.read_bytes() == before
    assert "Claude Code: registered localmem in" in done.stdout

    again = run(["agents", "--install", "codex"], repo, env)
    assert again.returncode == 0 and "already registered" in again.stdout


def test_install_through_a_planted_link_is_refused(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    claude_json = isolated_home / ".claude.json"
    claude_json.write_text('{"numStartups": 3, "projects": {}}')
    before = claude_json.read_bytes()
    (repo / ".mcp.json").symlink_to(claude_json)
    done = run(["agents", "--install", "claude-code"], repo, env)
    assert done.returncode == 1
    assert "never writes ~/.claude.json" in done.stderr and "Traceback" not in done.stderr
    assert claude_json.read_bytes() == before
    assert not list(isolated_home.rglob("*.bak")) and not list(repo.rglob("*.bak"))


def test_stale_entry_exits_non_zero_until_repair(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    stale = {"mcpServers": {"localmem": {"command": "/gone/localmem", "args": ["serve"]}}}
    path = repo / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text(json.dumps(stale))
    before = path.read_bytes()

    listing = run(["agents"], repo, env)
    assert listing.returncode == 1
    assert "STALE" in listing.stdout and "--repair" in listing.stderr

    refused = run(["agents", "--install", "cursor"], repo, env)
    assert refused.returncode == 1
    assert "--repair" in refused.stderr and "Traceback" not in refused.stderr
    assert path.read_bytes() == before

    repaired = run(["agents", "--repair", "--json"], repo, env)
    assert repaired.returncode == 0, repaired.stderr
    (result,) = json.loads(repaired.stdout)["results"]
    assert result["name"] == "cursor" and result["status"] == "repaired"
    assert Path(result["backup"]).read_bytes() == before
    entry = json.loads(path.read_text())["mcpServers"]["localmem"]
    assert entry["command"] == str(Path(script("localmem")).resolve())
    assert run(["agents"], repo, env).returncode == 0


def test_unparseable_file_prints_the_block(repo: Path, env: dict[str, str]) -> None:
    path = repo / ".mcp.json"
    path.write_text('{"mcpServers": {"x": {"command": "y",}}}')
    done = run(["agents", "--install", "claude-code"], repo, env)
    assert done.returncode == 1
    assert "does not parse" in done.stderr and "nothing was written" in done.stderr
    block = done.stderr[done.stderr.index("{") :]
    assert json.loads(block)["mcpServers"]["localmem"]["args"] == ["serve"]
    assert path.read_text() == '{"mcpServers": {"x": {"command": "y",}}}'
    assert "Traceback" not in done.stderr


def test_one_refusal_does_not_stop_the_others(repo: Path, env: dict[str, str]) -> None:
    done = run(["agents", "--install", "nope", "--install", "cursor", "--json"], repo, env)
    assert done.returncode == 1
    results = json.loads(done.stdout)["results"]
    assert results[0]["status"] == "refused" and "unknown agent" in results[0]["error"]
    assert results[1]["status"] == "installed"


def _make_venv(where: Path) -> Path:
    """A real virtual environment at `where` that can run this checkout's localmem."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(where)
    purelib = next((where / "lib").glob("python3*/site-packages"))
    source = Path(localmem.__file__).resolve().parents[1]
    # Reuse the test environment's packages (click, mcp) instead of installing.
    paths = [str(source), *site.getsitepackages()]
    (purelib / "localmem_checkout.pth").write_text("\n".join(paths) + "\n")
    program = where / "bin" / "localmem"
    body = "import sys\nfrom localmem.cli.main import main\nsys.exit(main())\n"
    program.write_text(f"#!{where / 'bin' / 'python'}\n{body}")
    program.chmod(0o755)
    return program


@pytest.mark.parametrize(
    ("cache", "advice"),
    [
        # The advice names the checkout this copy was installed from (PEP 610 record).
        (".cache/uv/archive-v0/Xa1b2", f"uv tool install {CHECKOUT}"),
        (".local/pipx/.cache/4f2e9a", f"pipx install {CHECKOUT}"),
    ],
    ids=["uvx", "pipx-run"],
)
def test_throwaway_cache_is_refused(
    repo: Path, env: dict[str, str], isolated_home: Path, cache: str, advice: str
) -> None:
    program = _make_venv(isolated_home / cache)
    done = run(["agents", "--install", "claude-code"], repo, env, exe=str(program))
    assert done.returncode == 1
    assert advice in done.stderr and "Traceback" not in done.stderr
    assert not (repo / ".mcp.json").exists()
    listing = run(["agents", "--json"], repo, env, exe=str(program))
    assert listing.returncode == 0 and advice in json.loads(listing.stdout)["warning"]


def test_ordinary_venv_under_tmp_is_accepted(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    program = _make_venv(tmp_path / "venvs" / "lm")
    done = run(["agents", "--install", "claude-code"], repo, env, exe=str(program))
    assert done.returncode == 0, done.stderr
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["localmem"]
    assert entry == {"command": str(program.resolve()), "args": ["serve"]}


def test_a_config_path_that_cannot_be_read_is_one_sentence(repo: Path, env: dict[str, str]) -> None:
    (repo / ".mcp.json").mkdir()  # a folder where the file should be
    listing = run(["agents"], repo, env)
    assert listing.returncode == 0 and "Traceback" not in listing.stderr
    assert "UNREADABLE" in listing.stdout
    done = run(["agents", "--install", "claude-code"], repo, env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "cannot be read (Is a directory); nothing was written." in done.stderr
    assert '"args": [' in done.stderr  # the block to add by hand


TEAM_URL = "postgresql://alice@db.internal:5432/team"


def test_install_records_the_store_the_shell_names(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    env = {**env, "LOCALMEM_DB": TEAM_URL}
    (isolated_home / ".codex").mkdir()
    (isolated_home / ".codex" / "config.toml").write_text('# mine\nmodel = "o3"\n')
    done = run(
        ["agents", "--install", "codex", "--install", "claude-code", "--json"], repo / "pkg", env
    )
    assert done.returncode == 0, done.stderr
    command = str(Path(script("localmem")).resolve())
    wanted = {"command": command, "args": ["serve"], "env": {"LOCALMEM_DB": TEAM_URL}}
    document = json.loads(done.stdout)
    assert document["store"] == TEAM_URL
    assert [(r["name"], r["status"], r["store"]) for r in document["results"]] == [
        ("codex", "installed", TEAM_URL),
        ("claude-code", "installed", TEAM_URL),
    ]
    toml_text = (isolated_home / ".codex" / "config.toml").read_text()
    assert toml_text.startswith('# mine\nmodel = "o3"\n')
    assert tomllib.loads(toml_text)["mcp_servers"]["localmem"] == wanted
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"localmem": wanted}}

    listing = run(["agents"], repo, env)
    assert listing.returncode == 0, listing.stderr
    assert f"store for agents: {TEAM_URL}\n" in listing.stdout
    listed = json.loads(run(["agents", "--json"], repo, env).stdout)
    assert listed["store"] == TEAM_URL
    states = {a["name"]: a["state"] for a in listed["agents"]}
    assert states["codex"] == states["claude-code"] == "registered"

    # Another store named: stale, shown, refused until --repair.
    moved = {**env, "LOCALMEM_DB": "postgresql://alice@db2.internal/team"}
    stale = run(["agents"], repo, moved)
    assert stale.returncode == 1 and "STALE" in stale.stdout
    refused = run(["agents", "--install", "codex"], repo, moved)
    assert refused.returncode == 1
    assert "a different command or store" in refused.stderr
    assert f"serve; LOCALMEM_DB={TEAM_URL})" in refused.stderr
    repaired = run(["agents", "--repair"], repo, moved)
    assert repaired.returncode == 0, repaired.stderr
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["localmem"]
    assert entry["env"] == {"LOCALMEM_DB": "postgresql://alice@db2.internal/team"}


def test_without_a_store_nothing_about_one_is_said(repo: Path, env: dict[str, str]) -> None:
    assert "LOCALMEM_DB" not in env
    done = run(["agents", "--install", "cursor", "--json"], repo, env)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["store"] is None and document["results"][0]["store"] is None
    assert (
        "env"
        not in json.loads((repo / ".cursor" / "mcp.json").read_text())["mcpServers"]["localmem"]
    )
    listing = run(["agents"], repo, env)
    assert "store for agents" not in listing.stdout
    assert json.loads(run(["agents", "--json"], repo, env).stdout)["store"] is None


def test_a_url_with_a_password_is_refused_and_nothing_written(
    repo: Path, env: dict[str, str], isolated_home: Path
) -> None:
    env = {**env, "LOCALMEM_DB": "postgresql://alice:s3cret@db.internal:5432/team"}
    done = run(["agents", "--install", "codex", "--install", "claude-code"], repo, env)
    assert done.returncode == 1
    assert "carries a password" in done.stderr and "Traceback" not in done.stderr
    assert "s3cret" not in done.stderr + done.stdout
    assert not (repo / ".mcp.json").exists()
    assert not (isolated_home / ".codex" / "config.toml").exists()
    as_json = run(["agents", "--install", "claude-code", "--json"], repo, env)
    assert as_json.returncode == 1 and "s3cret" not in as_json.stdout
    document = json.loads(as_json.stdout)
    assert document["store"] is None and document["results"][0]["status"] == "refused"
    assert not (repo / ".mcp.json").exists()
    listing = run(["agents"], repo, env)
    assert listing.returncode == 1 and "carries a password" in listing.stderr
    assert "s3cret" not in listing.stderr + listing.stdout and "Traceback" not in listing.stderr


def test_a_relative_file_path_is_written_absolute(repo: Path, env: dict[str, str]) -> None:
    env = {**env, "LOCALMEM_DB": "data/team.db"}
    done = run(["agents", "--install", "claude-code"], repo / "pkg", env)
    assert done.returncode == 0, done.stderr
    assert "Claude Code: registered localmem in" in done.stdout  # the line as before
    wanted = str((repo / "pkg").resolve() / "data" / "team.db")  # the folder it ran in
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["localmem"]
    assert entry["env"] == {"LOCALMEM_DB": wanted}
    listing = run(["agents"], repo / "pkg", env)
    assert f"store for agents: {wanted}\n" in listing.stdout
