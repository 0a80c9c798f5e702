"""Importing price files into the catalog: checks, diff, guards, apply, and fetching over HTTP.

checks.py     strict checks of raw files: encoding, CSV shape, numbers (row, column, reason)
canonical.py  our own CSV/JSON format for hardware purchase and energy prices
parse.py      a file -> rows per price table and the scope of rows it replaces
tables.py     the four effective-dated price tables, described for diffing
diff.py       pure: added / changed / removed / unchanged, and the guards that hold an import
lock.py       one import at a time (PostgreSQL advisory lock, SQLite write lock)
fetch.py      HTTP(S) fetching: allow-list, no private addresses, retries, size limit, ETag
service.py    the entry points: `import_content`, `import_url`, `run_import`
"""

from __future__ import annotations

from wheretorun.pricing.imports.fetch import (
    Fetcher,
    FetchResult,
    HttpFetcher,
    UrlPolicy,
    Validators,
    fetcher_from_settings,
)
from wheretorun.pricing.imports.parse import FORMATS, Format
from wheretorun.pricing.imports.service import (
    ImportSpec,
    Progress,
    SourceFile,
    get_import_run,
    import_content,
    import_url,
    list_import_runs,
    run_import,
)

__all__ = [
    "FORMATS",
    "FetchResult",
    "Fetcher",
    "Format",
    "HttpFetcher",
    "ImportSpec",
    "Progress",
    "SourceFile",
    "UrlPolicy",
    "Validators",
    "fetcher_from_settings",
    "get_import_run",
    "import_content",
    "import_url",
    "list_import_runs",
    "run_import",
]
