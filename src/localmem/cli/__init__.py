"""SURFACE: the `localmem` command (one module per command group), the prompt-hook fast
path, and the `local-memory` command. Empty on purpose: `local-memory` imports
`localmem.cli.facts` on every question and must pay for nothing else."""
