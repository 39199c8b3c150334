"""The `local-memory` command (SPEC section 3): standard library only, and fast.

A voice assistant runs `local-memory prompt` for every question, so this module
imports only `os` and `sys` at the top and parses argv by hand (decision 12):
each command imports the few modules it needs. Exit statuses: 0 for every
answer, 1 for a refused input (message on stderr), 2 for wrong usage (usage on
stderr).
"""

from __future__ import annotations

import os
import sys

USAGE = """\
usage: local-memory COMMAND [ARGUMENTS]

Facts about the user, for local models only, one topic per file in
$LOCAL_MEMORY_DIR (else $XDG_DATA_HOME/local-memory).

  prompt                 print the memory block to put in front of a model
  recall TOPIC           print what is remembered about TOPIC
  remember TOPIC FACT    save FACT (one short sentence) under TOPIC
  forget TOPIC TEXT      remove the one fact of TOPIC whose line contains TEXT
  topics                 list the topics with their fact counts, core first
  git-init REMOTE        make the folder a git repository pushing to REMOTE
  history [TOPIC]        show what changed and when (after git-init)
  guard                  print the lines that keep cloud-model agents out
  trial --endpoint URL   measure how a local model uses its memory (trial --help)
  --test                 check this installation in a temporary folder
  --help                 show this text

A topic is 1 to 32 lowercase letters a-z, digits or hyphens; `core` is always
shown to the model. Exit status: 0 answered, 1 input refused, 2 wrong usage.
"""

# command: (fewest arguments, most arguments)
ARITY = {
    "prompt": (0, 0),
    "recall": (1, 1),
    "remember": (2, 2),
    "forget": (2, 2),
    "topics": (0, 0),
    "git-init": (1, 1),
    "history": (0, 1),
    "guard": (0, 0),
    "--test": (0, 0),
}


def _out(text: str) -> None:
    # Bytes, so facts in any language print whatever the locale says.
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))


def _usage_error(problem: str) -> int:
    sys.stderr.write(f"local-memory: {problem}\n\n{USAGE}")
    return 2


def _today() -> str:
    import time

    return time.strftime("%Y-%m-%d")


def _run(command: str, args: list[str]) -> int:
    from localmem import paths

    path = paths.facts_folder()
    if command == "prompt":
        from localmem.facts.block import memory_block

        _out(memory_block(path))
    elif command == "recall":
        from localmem.facts import store

        _out(store.recall(path, args[0]))
    elif command == "remember":
        from localmem.facts import store

        _out(store.remember(path, args[0], args[1], _today()).text)
    elif command == "forget":
        from localmem.facts import store

        _out(store.forget(path, args[0], args[1]).text)
    elif command == "topics":
        from localmem.facts import store

        _out(store.topics_text(path))
    elif command == "git-init":
        from localmem.gitsetup import git_init

        def say(step: str) -> None:
            _out(step + "\n")
            sys.stdout.flush()

        git_init(path, args[0], say)
    elif command == "history":
        from localmem.facts.gitrepo import history

        _out(history(path, args[0] if args else None))
    elif command == "guard":
        from localmem.facts.guard import guard_text

        _out(guard_text(path))
    else:  # --test
        from localmem.facts.selftest import self_test

        failure = self_test()
        if failure:
            sys.stderr.write(f"local-memory --test failed: {failure}\n")
            return 1
        _out("ok\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit status (the console script exits with it)."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        return _usage_error("no command given")
    command, rest = args[0], args[1:]
    if command in ("-h", "--help", "help") and not rest:
        _out(USAGE)
        return 0
    if command == "trial":
        # Its own module (HTTP, JSON, the chat layer): imported only when asked for.
        from localmem.cli.trial import main as trial_main

        return trial_main(rest)
    if command not in ARITY:
        from localmem.facts.rules import shown

        return _usage_error(f'unknown command "{shown(command)}"')
    fewest, most = ARITY[command]
    if len(rest) < fewest:
        return _usage_error(f"{command} needs {fewest} argument{'s' if fewest > 1 else ''}")
    if len(rest) > most:
        return _usage_error(f"{command} takes at most {most} argument{'s' if most != 1 else ''}")
    from localmem.errors import LocalmemError

    try:
        status = _run(command, rest)
        sys.stdout.flush()
        return status
    except LocalmemError as error:
        sys.stderr.write(f"local-memory: {error}\n")
        return error.exit_code
    except BrokenPipeError:
        # The reader went away (`| head`); nothing more to say, and no traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:
        from localmem.memory.faults import file_fault

        fault = file_fault(error)  # a full disk or a read-only folder: say so plainly
        if fault is not None:
            sys.stderr.write(f"local-memory: {fault}\n")
            return 1
        where = error.filename or "the facts folder"
        sys.stderr.write(f"local-memory: cannot use {where}: {error.strerror or error}.\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
