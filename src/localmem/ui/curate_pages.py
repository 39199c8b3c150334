"""The curate actions on one memory: forget (asked first), promote, keywords, correct.

Each is one call to the store; the rules are the domain's (forget's chain rule,
promote's core warning, add's supersede checks). What is the view's own:
forgetting brings you back to the listing you came from (decision 164), and a
correction is written at the current end of a supersede chain only (decision 165).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

import localmem
from localmem.errors import Conflict, NotFound
from localmem.memory.model import Memory
from localmem.ui.html import h, join
from localmem.ui.layout import View, form, hidden, memory_link, page, with_query
from localmem.ui.memory_pages import _done, _missing, back_target


def forget_confirm(view: View, request: Request) -> Response:
    memory_id = int(request.path_params["memory_id"])
    back = back_target(request.query_params.get("back"), "")
    with localmem.open(view.db, create=False) as store:
        try:
            # The same dry run as `localmem forget --dry-run`: a forget the chain rule
            # refuses is refused here, before anyone is asked.
            preview_result = store.forget(memory_id, dry_run=True)
        except NotFound:
            return _missing(view, memory_id)
        except Conflict:
            older = store.chain(memory_id).older
            return _forget_refused(view, memory_id, older)
    memory = preview_result.memory
    details = [h("pre", {"class": "content long"}, memory.content)]
    if preview_result.relinked:
        details.append(
            h(
                "p",
                {},
                f"Memories {', '.join(map(str, preview_result.relinked))} will then be "
                f"superseded by memory {memory.superseded_by} (the chain is relinked, not broken).",
            )
        )
    if preview_result.entities_removed:
        details.append(
            h(
                "p",
                {},
                f"{preview_result.entities_removed} entities no other memory uses go with it.",
            )
        )
    body = join(
        [
            h(
                "p",
                {},
                f"Forget memory #{memory.id} ({memory.workspace}, {memory.kind})? "
                "This cannot be undone.",
            ),
            *details,
            form(
                view,
                f"/memory/{memory.id}/forget",
                hidden("confirm", "yes"),
                hidden("back", back),
                button="Yes, forget it",
                danger=True,
            ),
            h(
                "p",
                {},
                h("a", {"href": with_query(f"/memory/{memory.id}", back=back)}, "No, keep it"),
            ),
        ]
    )
    return page(view, f"Forget memory #{memory.id}?", body)


def _forget_refused(view: View, memory_id: int, older: tuple[Memory, ...]) -> Response:
    links = join([[", " if i else "", memory_link(m)] for i, m in enumerate(older)])
    body = join(
        [
            h(
                "p",
                {"class": "error"},
                f"Memory #{memory_id} is the current correction of ",
                links,
                "; forgetting it would silently bring the old text back. Forget the older "
                "memory first, or save a correction of this one on its page.",
            ),
            h("p", {}, h("a", {"href": f"/memory/{memory_id}", "class": "back"}, "← Back")),
        ]
    )
    return page(view, "Refused", body, status=409)


def forget(view: View, memory_id: int, fields: dict[str, str]) -> Response:
    if fields.get("confirm") != "yes":
        return RedirectResponse(f"/memory/{memory_id}/forget", status_code=303)
    with localmem.open(view.db, create=False) as store:
        try:
            result = store.forget(memory_id)
        except NotFound:
            return _missing(view, memory_id)
        except Conflict:
            return _forget_refused(view, memory_id, store.chain(memory_id).older)
    sentence = f"Forgot memory {memory_id}."
    if result.relinked:
        sentence += (
            f" Memories {', '.join(map(str, result.relinked))} are now superseded by memory "
            f"{result.memory.superseded_by}."
        )
    fallback = with_query("/browse", workspace=result.memory.workspace)
    return _done(back_target(fields.get("back"), fallback), sentence)


def promote(view: View, memory_id: int, fields: dict[str, str]) -> Response:
    with localmem.open(view.db, create=False) as store:
        result = store.promote(memory_id, fields.get("kind", "lesson"))
    if result.previous_kind == result.memory.kind:
        sentence = f"Memory {memory_id} is already {result.memory.kind}."
    else:
        sentence = f"Memory {memory_id}: {result.previous_kind} → {result.memory.kind}."
    if result.warning:
        sentence += f" Warning: {result.warning}"
    return _done(f"/memory/{memory_id}", sentence)


def _keywords(text: str) -> list[str]:
    return [word for word in text.replace("\n", ",").split(",") if word.strip()]


def edit_keywords(view: View, memory_id: int, fields: dict[str, str]) -> Response:
    with localmem.open(view.db, create=False) as store:
        memory = store.edit_keywords(memory_id, _keywords(fields.get("keywords", "")))
    shown = ", ".join(memory.keywords) or "none"
    return _done(f"/memory/{memory_id}", f"Keywords of memory {memory_id}: {shown}.")


def correct(view: View, memory_id: int, fields: dict[str, str]) -> Response:
    with localmem.open(view.db, create=False) as store:
        old = store.get(memory_id)
        if old.superseded:
            current = store.chain(memory_id).newer[-1]
            return _correct_the_end(view, old, current, fields)
        kind = "note" if old.kind == "imported" else old.kind  # `imported` is import's alone
        # Exactly `localmem add TEXT -w WS --supersedes ID`: the write path's checks apply.
        result = store.add(
            fields.get("content", ""),
            workspace=old.workspace,
            kind=kind,
            keywords=_keywords(fields.get("keywords", "")),
            supersedes=[memory_id],
        )
    verb = "Saved" if result.status == "added" else "Merged into the identical"
    return _done(
        f"/memory/{result.id}", f"{verb} memory {result.id}; it supersedes memory {memory_id}."
    )


def _correct_the_end(view: View, old: Memory, current: Memory, fields: dict[str, str]) -> Response:
    """Refused, keeping the typed text: a second correction of `old` would fork its chain."""
    body = join(
        [
            h(
                "p",
                {"class": "error"},
                f"Memory #{old.id} is already corrected; the current end of its chain is ",
                memory_link(current),
                f". A correction of #{old.id} would leave #{old.superseded_by} correcting "
                "nothing, so nothing was saved.",
            ),
            h("pre", {"class": "content long"}, current.content),
            form(
                view,
                f"/memory/{current.id}/correct",
                h(
                    "label",
                    {"class": "block"},
                    f"Your text, as a correction of #{current.id}",
                    h(
                        "textarea",
                        {"name": "content", "rows": 3, "required": True},
                        fields.get("content", ""),
                    ),
                ),
                hidden("keywords", fields.get("keywords", "")),
                button=f"Save as a correction of #{current.id}",
            ),
        ]
    )
    return page(view, "Refused", body, status=409)


__all__ = ["correct", "edit_keywords", "forget", "forget_confirm", "promote"]
