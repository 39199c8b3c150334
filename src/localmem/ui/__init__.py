"""SURFACE: `localmem ui`, the local web view (browse, search, curate, charts).

`server.py` starts it; `app.py` holds the routes; `security.py` the token, the
Host/Origin checks, CSRF and the response headers; `html.py` the escaping
builder every page is written with; `charts.py` the inline SVG; `pages.py`
the memory pages and `facts_pages.py` the facts pages (only with `--facts`).
Nothing here is imported by `search`, `add`, `serve` or `local-memory`.
"""
