"""A seeded synthetic corpus of engineering notes, and queries against it.

Memories read like what coding agents store: lessons (symptom, real cause,
fix), notes about where things live and how they run, session traces, a few
core rules, with the identifiers real notes carry (paths, error codes,
environment variables, ports, versions). The same seed always gives the same
corpus, so figures from different runs compare.

    from corpus import memories, queries
    for item in memories(10_000, seed=7): ...
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SERVICES = [
    "auth service",
    "billing api",
    "search indexer",
    "payments worker",
    "notification hub",
    "user profile service",
    "inventory sync",
    "report generator",
    "gateway",
    "scheduler",
    "image resizer",
    "webhook relay",
    "session store",
    "feature flag service",
    "audit log",
]
TECH = [
    "postgres",
    "redis",
    "kafka",
    "nginx",
    "docker",
    "kubernetes",
    "terraform",
    "webpack",
    "pytest",
    "celery",
    "sqlite",
    "grpc",
    "graphql",
    "elasticsearch",
    "rabbitmq",
    "s3",
    "github actions",
    "helm",
    "prometheus",
    "grafana",
    "sentry",
    "vite",
    "django",
    "fastapi",
]
SYMPTOMS = [
    "requests time out after 30 seconds",
    "the test suite hangs on CI",
    "memory climbs until OOM",
    "login fails with 401 after deploy",
    "migrations deadlock",
    "the build is twice as slow",
    "duplicate rows appear in the ledger",
    "p99 latency spikes every hour",
    "the container restarts in a loop",
    "emails are sent twice",
    "cache hit rate dropped to 10%",
    "uploads over 10 MB fail",
    "timestamps are off by one hour",
    "the queue backs up at night",
    "flaky snapshot tests",
    "connections are refused on startup",
]
CAUSES = [
    "the connection pool was capped at 5",
    "a missing index on the foreign key",
    "the retry loop had no backoff",
    "the token clock skew was not tolerated",
    "two workers consumed the same partition",
    "the DNS cache held a stale address",
    "the cron ran in UTC, not local time",
    "an N+1 query in the serializer",
    "the health check hit the database",
    "a global lock around the logger",
    "the default timeout was infinite",
    "the env var was read before dotenv loaded",
    "the volume was mounted read-only",
    "the ORM loaded every column",
]
FIXES = [
    "raise the pool size to 20 and add a queue timeout",
    "add the index in a new migration",
    "use exponential backoff with jitter",
    "allow 60 seconds of leeway when verifying",
    "pin one consumer per partition",
    "set the resolver TTL to 30 seconds",
    "schedule it with an explicit timezone",
    "prefetch related rows in one query",
    "make the health check return the process state only",
    "log through a queue handler",
    "pass an explicit timeout everywhere",
    "load dotenv at the entry point",
    "mount the volume read-write in compose",
    "select only the needed columns",
]
FILES = [
    "src/app/settings.py",
    "deploy/helm/values.yaml",
    "Makefile",
    "docker-compose.yml",
    "scripts/release.sh",
    ".github/workflows/ci.yml",
    "src/api/routes.py",
    "config/nginx.conf",
    "tests/conftest.py",
    "infra/main.tf",
    "package.json",
    "src/worker/tasks.py",
]
ENV_VARS = [
    "DATABASE_URL",
    "REDIS_URL",
    "SENTRY_DSN",
    "AWS_PROFILE",
    "LOG_LEVEL",
    "FEATURE_FLAGS_PATH",
    "KAFKA_BROKERS",
    "JWT_SECRET",
    "PORT",
    "WORKER_CONCURRENCY",
]
PEOPLE = ["Ana", "Minh", "Priya", "Tomasz", "Lea", "Kenji", "Sofia", "Omar"]
ACTIONS = [
    "refactored",
    "profiled",
    "migrated",
    "debugged",
    "documented",
    "upgraded",
    "load tested",
    "split",
    "cached",
    "rewrote the retries of",
]
VIETNAMESE = [
    "Lỗi kết nối cơ sở dữ liệu khi triển khai {svc}; nguyên nhân: {cause}.",
    "Khi chạy kiểm thử cho {svc} cần đặt biến {env} trước.",
    "Cấu hình {tech} của {svc} nằm trong {file}.",
]


@dataclass(frozen=True)
class Item:
    content: str
    kind: str
    keywords: tuple[str, ...]
    workspace: str


def _one(rng: random.Random, n: int, workspaces: list[str]) -> Item:
    svc, tech, file = rng.choice(SERVICES), rng.choice(TECH), rng.choice(FILES)
    env, who = rng.choice(ENV_VARS), rng.choice(PEOPLE)
    version = f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
    ticket = f"{rng.choice(['OPS', 'API', 'WEB', 'DATA'])}-{rng.randint(100, 9999)}"
    roll = rng.random()
    workspace = rng.choice(workspaces)
    if roll < 0.35:
        symptom, cause, fix = rng.choice(SYMPTOMS), rng.choice(CAUSES), rng.choice(FIXES)
        text = (
            f"{svc.capitalize()}: {symptom} ({ticket}). Real cause: {cause} in {tech}. "
            f"Fix: {fix}; see {file}."
        )
        return Item(text, "lesson", (tech, ticket.lower(), svc.split()[0]), workspace)
    if roll < 0.7:
        port = rng.randint(1024, 65000)
        templates = [
            f"The {svc} reads {env} from {file}; locally it listens on port {port}.",
            f"To run the {svc} tests use `make test-{svc.split()[0]}`; they need {tech} {version}.",
            f"{who} owns the {svc}; ask before changing {file} (decided in {ticket}).",
            f"The {tech} cluster for {svc} is pinned to {version} because of {ticket}.",
            f"Deploys of {svc} go through {rng.choice(TECH)} then {tech}; rollback with "
            f"`scripts/rollback.sh {svc.split()[0]} {version}`.",
        ]
        return Item(rng.choice(templates), "note", (svc.split()[0], tech), workspace)
    if roll < 0.97:
        action = rng.choice(ACTIONS)
        text = (
            f"Session {n}: {action} the {svc} ({ticket}). Touched {file} and {rng.choice(FILES)}; "
            f"{tech} {version} behaves; left a note for {who} about {env}. Next: "
            f"{rng.choice(FIXES)}."
        )
        return Item(text, "trace", (), workspace)
    template = rng.choice(VIETNAMESE)
    text = template.format(svc=svc, cause=rng.choice(CAUSES), env=env, tech=tech, file=file)
    return Item(f"{text} ({ticket})", "note", ("vietnamese", tech), workspace)


def _core(rng: random.Random, n: int, workspaces: list[str]) -> Item:
    # Core rows are human-curated and few: one per 2,500 memories, in a workspace or global.
    svc, ticket = rng.choice(SERVICES), f"OPS-{rng.randint(100, 9999)}"
    workspace = rng.choice(workspaces[-2:])  # the last repo or global
    return Item(
        f"Always run `make lint` before pushing changes to {svc} ({ticket}).", "core", (), workspace
    )


def memories(count: int, seed: int = 7, workspace_count: int = 8) -> Iterator[Item]:
    """`count` memories spread over `workspace_count` workspaces plus global."""
    rng = random.Random(seed)
    names = [f"repo{i}" for i in range(workspace_count)] + ["global"]
    for n in range(count):
        yield _core(rng, n, names) if n % 2500 == 1 else _one(rng, n, names)


def queries(count: int, seed: int = 11) -> list[tuple[str, str]]:
    """(query, workspace) pairs shaped like agents' recalls: a few words from the corpus's
    vocabulary, some with an identifier, some that match nothing stored."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.4:
            text = f"why does {rng.choice(SYMPTOMS)}"
        elif roll < 0.6:
            text = f"how do I run the {rng.choice(SERVICES)} tests with {rng.choice(TECH)}"
        elif roll < 0.75:
            text = f"where is {rng.choice(ENV_VARS)} configured"
        elif roll < 0.9:
            text = f"{rng.choice(TECH)} {rng.choice(CAUSES).split()[-1]} fix"
        else:
            text = rng.choice(
                ["quarterly tax filing deadline", "favourite pizza topping", "bluetooth pairing"]
            )
        out.append((text, f"repo{rng.randint(0, 7)}"))
    return out


def distinct_queries(count: int, seed: int = 11) -> list[tuple[str, str]]:
    """`count` queries with distinct texts (in `queries()` order), so a bench that asks each
    once per pass times `count` different searches, never a cached repeat."""
    seen: dict[str, str] = {}
    for text, workspace in queries(count * 400, seed):
        seen.setdefault(text, workspace)
        if len(seen) == count:
            return list(seen.items())
    raise SystemExit(f"the corpus has only {len(seen)} distinct queries; ask for fewer")


def first_search(path: Path, asked: list[tuple[str, str]]) -> tuple[list[float], list[float]]:
    """What a short-lived process pays: for each query, open the store, time that first
    search, close. Returns (open seconds, first-search seconds), one per query."""
    import time

    import localmem

    opens: list[float] = []
    firsts: list[float] = []
    for text, workspace in asked:
        started = time.perf_counter()
        store = localmem.open(path, create=False)
        opened = time.perf_counter()
        store.search(text, workspace=workspace, k=5, track=False)
        firsts.append(time.perf_counter() - opened)
        opens.append(opened - started)
        store.close()
    return opens, firsts
