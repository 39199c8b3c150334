#!/bin/sh
# localmem capture hook: store a session's final summary as a `trace` memory.
#
# Reads the hook payload (JSON) on stdin, as Claude Code sends it for SessionEnd
# and Stop, and Codex CLI for Stop. The summary is `last_assistant_message`
# when the payload has it (Stop), else the last assistant text in the session
# transcript at `transcript_path` (SessionEnd). It is stored only when it is
# at least 80 characters long and novel (`localmem add --if-novel` skips a text
# that restates a memory already in the workspace); past 100,000 characters it
# is cut, with a marker saying so. The workspace is the payload's `cwd`.
#
# Opt-in, silent, never in the way: without jq or localmem it exits 0 and does
# nothing, and it always exits 0 so a failure never blocks the agent.

command -v jq >/dev/null 2>&1 || exit 0
localmem=$(command -v localmem 2>/dev/null)
if [ -z "$localmem" ] && [ -x "$HOME/.local/bin/localmem" ]; then
  localmem=$HOME/.local/bin/localmem  # `uv tool install` / `pipx install` put it here
fi
[ -n "$localmem" ] || exit 0

payload=$(cat)
cwd=$(printf '%s' "$payload" | jq -r '.cwd // empty' 2>/dev/null)
session=$(printf '%s' "$payload" | jq -r '.session_id // empty' 2>/dev/null)
summary=$(printf '%s' "$payload" | jq -r '.last_assistant_message // empty' 2>/dev/null)
if [ -z "$summary" ]; then
  transcript=$(printf '%s' "$payload" | jq -r '.transcript_path // empty' 2>/dev/null)
  if [ -n "$transcript" ] && [ -r "$transcript" ]; then
    summary=$(jq -rn '
      [inputs | select(.type? == "assistant") | (.message.content // empty)
       | if type == "string" then . else ([.[]? | select(.type? == "text") | .text] | join("\n")) end
       | select(length > 0)]
      | last // empty' "$transcript" 2>/dev/null)
  fi
fi

# The gate and the cut, counted in characters (jq), the text passed on stdin
# (a 150,000-character argument would be refused by the kernel).
trace=$(printf '%s' "$summary" | jq -Rrs --argjson min 80 --argjson max 100000 '
  if length < $min then empty
  elif length > $max then .[:$max] + "\n[cut by the localmem capture hook: the first \($max) of \(length) characters are kept]"
  else . end' 2>/dev/null)
[ -n "$trace" ] || exit 0

[ -n "$cwd" ] && cd "$cwd" 2>/dev/null
if [ -n "$session" ]; then
  printf '%s' "$trace" | "$localmem" add --kind trace --if-novel --source capture-hook \
    --session-id "$session" - >/dev/null 2>&1
else
  printf '%s' "$trace" | "$localmem" add --kind trace --if-novel --source capture-hook - \
    >/dev/null 2>&1
fi
exit 0
