"""Moving memories in and out: the export format, restore, import of instruction files, and
the git mirror."""
