"""The sites server's one hook into visit counting (issue 44, point 4): after a site's
request is answered, a page view of a published site (never a preview) is noted with the
connection's address and the User-Agent, on the event loop, at once
(``publishing/site_visits.py`` counts it later, in a worker thread). The address is the
socket's peer: ``X-Forwarded-For`` is whatever the client wrote."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import Response

from zerocode.publishing.pointers import SITE_PREFIX
from zerocode.publishing.site_visits import SiteVisits
from zerocode.publishing.visits import is_page_view

log = logging.getLogger(__name__)


def note_visit(
    visits: SiteVisits | None, pointer: str, path: str, request: Request, response: Response
) -> None:
    """Note the answer to ``request`` if it was a page view of a site; never raises."""
    if visits is None or not pointer.startswith(SITE_PREFIX):
        return
    try:
        kind = response.headers.get("content-type")
        if not is_page_view(request.method, response.status_code, kind, "/" + path):
            return
        address = request.client.host if request.client is not None else ""
        visits.saw(pointer[len(SITE_PREFIX) :], address, request.headers.get("user-agent", ""))
    except Exception:  # counting never costs a page
        log.exception("visits: a page view could not be noted")
