"""localmem: memory for language models that never leaves the user's machine.

This module holds the version only; it must stay free of imports so that the
`local-memory` fast path pays nothing for it.
"""

__version__ = "0.1.0"
