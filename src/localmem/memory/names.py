"""The reserved workspace names and the core cap, in a module cheap enough for the prompt-hook path.

`model` re-exports them; `workspaces` and the fast `search --context` path import
them from here so they never pay for `dataclasses` and `typing`.
"""

GLOBAL = "global"  # the shared tier every workspace reads
ALL = "all"  # on search: every workspace; never a workspace to write
CORE_TOKEN_CAP = 400  # estimated tokens of the core block pushed with every recall
