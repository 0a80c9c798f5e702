"""The planning page: `/` (plan a workload), `/scenarios` (compare finance scenarios) and
`/catalog` (browse prices), served as static files from `api/static/`.

The page is a client of the JSON API under `/v1`, like curl or the Python client: its script
calls the same endpoints, so every figure it shows is one the API answered (no second source of
truth), and an API error's `errors[].field` is shown next to the form control of that name. The
routes here only hand out files; they are not API operations (`include_in_schema=False`), so the
OpenAPI document is unchanged.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["PAGE_VIEWS", "STATIC_DIR", "mount_page"]

STATIC_DIR = Path(__file__).parent / "static"
PAGE_VIEWS = ("/", "/scenarios", "/catalog")
"""The page's views; each is the same document, whose script shows the view its path names."""

# The page loads only its own files and talks only to this server; charts are blob: images.
_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


def _document() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html", headers=_SECURITY_HEADERS)


for _path in PAGE_VIEWS:
    router.add_api_route(_path, _document, methods=["GET"], include_in_schema=False)


def mount_page(app: FastAPI) -> None:
    """Serve the page's views and its files under `/static` (neither is in the OpenAPI document)."""
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR, follow_symlink=False), name="static")
