#!/bin/sh
# localmem auto-recall hook: put what localmem remembers about a prompt in front
# of the model.
#
# Reads the hook payload (JSON) on stdin, as Claude Code sends it for
# UserPromptSubmit (`prompt`, `cwd`), runs `localmem search --context -k 3` on
# the prompt (its first 2,000 characters) in the payload's `cwd`, and prints
# the context lines, one `- (workspace) text` line per hit; nothing when nothing
# matched. Claude Code adds a UserPromptSubmit hook's output to the context.
#
# Opt-in, silent, never in the way: without jq or localmem it exits 0 and
# prints nothing, and it always exits 0 so a failure never blocks the prompt.

command -v jq >/dev/null 2>&1 || exit 0
localmem=$(command -v localmem 2>/dev/null)
if [ -z "$localmem" ] && [ -x "$HOME/.local/bin/localmem" ]; then
  localmem=$HOME/.local/bin/localmem  # `uv tool install` / `pipx install` put it here
fi
[ -n "$localmem" ] || exit 0

payload=$(cat)
prompt=$(printf '%s' "$payload" | jq -r '(.prompt // "")[:2000]' 2>/dev/null)
[ -n "$prompt" ] || exit 0
cwd=$(printf '%s' "$payload" | jq -r '.cwd // empty' 2>/dev/null)

[ -n "$cwd" ] && cd "$cwd" 2>/dev/null
"$localmem" search --context -k 3 -- "$prompt" 2>/dev/null
exit 0
