"""Fetch a price file over HTTP(S), safely.

* Only `http`/`https` URLs to a host on the allow-list (`WHERETORUN_IMPORT_ALLOWED_HOSTS`; an entry
  `.example.com` allows its subdomains) whose addresses are all public, unless private addresses are
  explicitly allowed (`WHERETORUN_IMPORT_ALLOW_PRIVATE_ADDRESSES`). Redirects are followed by hand
  (at most 5), each hop checked the same way. Credentials in the URL are refused.
* A timeout per request, retries with exponential backoff on connection errors, timeouts, 429 and
  5xx (`retries` attempts after the first, waiting `backoff_s`, 2x, 4x, ...).
* A size limit, checked against `Content-Length` and while streaming.
* Conditional requests: the `ETag` / `Last-Modified` of the previous import of the same URL are sent
  as `If-None-Match` / `If-Modified-Since`; a 304 means "unchanged", and nothing is re-imported.

The transport and the DNS resolver are injectable: the tests use `httpx.MockTransport` and a fake
resolver, never the network.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urljoin, urlsplit

import httpx

from wheretorun.errors import InvalidInput, PayloadTooLarge, UpstreamError
from wheretorun.settings import Settings

__all__ = [
    "FetchResult",
    "Fetcher",
    "HttpFetcher",
    "UrlPolicy",
    "Validators",
    "fetcher_from_settings",
]

Resolver = Callable[[str], Sequence[str]]  # host -> its IP addresses
_MAX_REDIRECTS = 5
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class Validators:
    """HTTP cache validators of the last successful import of a URL."""

    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True, slots=True)
class FetchResult:
    url: str  # after redirects
    content: bytes | None  # None: not modified since the validators
    etag: str | None
    last_modified: str | None
    fetched_at: dt.datetime

    @property
    def not_modified(self) -> bool:
        return self.content is None


class Fetcher(Protocol):
    def fetch(self, url: str, validators: Validators | None = None) -> FetchResult: ...


def system_resolver(host: str) -> list[str]:
    try:
        return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)})
    except socket.gaierror as error:
        raise UpstreamError(f"cannot resolve {host!r}: {error}") from error


@dataclass(frozen=True)
class UrlPolicy:
    """Which URLs may be fetched (see the module docstring)."""

    allowed_hosts: tuple[str, ...]
    allow_private_addresses: bool = False
    resolver: Resolver = system_resolver

    def check(self, url: str, field: str = "body.url") -> None:
        """Raise `InvalidInput` naming `field` unless `url` may be fetched."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise InvalidInput(
                field, f"only http and https URLs can be imported, not {parts.scheme or 'none'!r}"
            )
        if parts.username or parts.password:
            raise InvalidInput(field, "URLs with credentials are not fetched")
        host = (parts.hostname or "").lower().rstrip(".")
        if not host:
            raise InvalidInput(field, "the URL has no host")
        if not self._host_allowed(host):
            allowed = ", ".join(self.allowed_hosts) or "none configured"
            raise InvalidInput(
                field,
                f"host {host!r} is not on the import allow-list (WHERETORUN_IMPORT_ALLOWED_HOSTS: {allowed})",
            )
        if self.allow_private_addresses:
            return
        for address in self.resolver(host):
            if not _is_public(address):
                raise InvalidInput(
                    field,
                    f"host {host!r} resolves to the non-public address {address}; "
                    "set WHERETORUN_IMPORT_ALLOW_PRIVATE_ADDRESSES to allow it",
                )

    def _host_allowed(self, host: str) -> bool:
        for entry in self.allowed_hosts:
            entry = entry.lower().rstrip(".")
            if host == entry or (entry.startswith(".") and host.endswith(entry)):
                return True
        return False


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class HttpFetcher:
    """The real fetcher: httpx with the policy, timeouts, retries, size limit and validators."""

    def __init__(
        self,
        policy: UrlPolicy,
        *,
        timeout_s: float = 30.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        max_bytes: int = 64 * 1024 * 1024,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.policy = policy
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_bytes = max_bytes
        self._transport = transport
        self._sleep = sleep
        self._clock = clock

    def fetch(self, url: str, validators: Validators | None = None) -> FetchResult:
        headers = {"User-Agent": "wheretorun-price-import", "Accept-Encoding": "gzip"}
        if validators and validators.etag:
            headers["If-None-Match"] = validators.etag
        if validators and validators.last_modified:
            headers["If-Modified-Since"] = validators.last_modified
        with httpx.Client(
            transport=self._transport, timeout=self.timeout_s, follow_redirects=False, headers=headers
        ) as client:
            for _ in range(_MAX_REDIRECTS + 1):
                self.policy.check(url)
                outcome = self._get_with_retries(client, url)
                if isinstance(outcome, FetchResult):
                    return outcome
                url = urljoin(url, outcome)
        raise UpstreamError(f"more than {_MAX_REDIRECTS} redirects")

    def _get_with_retries(self, client: httpx.Client, url: str) -> FetchResult | str:
        """The result, or the location a redirect points to."""
        failure = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self._sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                with client.stream("GET", url) as response:
                    if response.status_code in _RETRY_STATUSES:
                        failure = f"{url} answered HTTP {response.status_code}"
                        continue
                    if response.has_redirect_location:
                        return str(response.headers.get("location", ""))
                    return self._result(url, response)
            except httpx.TimeoutException:
                failure = f"{url} did not answer within {self.timeout_s:g} s"
            except httpx.TransportError as error:
                failure = f"cannot reach {url}: {error}"
        raise UpstreamError(f"{failure} (after {self.retries + 1} attempts)")

    def _result(self, url: str, response: httpx.Response) -> FetchResult:
        fetched_at = self._clock()
        etag = response.headers.get("etag")
        last_modified = response.headers.get("last-modified")
        if response.status_code == 304:
            return FetchResult(url, None, etag, last_modified, fetched_at)
        if response.status_code != 200:
            raise UpstreamError(f"{url} answered HTTP {response.status_code}")
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self.max_bytes:
            raise PayloadTooLarge(f"the file at {url}", self.max_bytes)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise PayloadTooLarge(f"the file at {url}", self.max_bytes)
            chunks.append(chunk)
        return FetchResult(url, b"".join(chunks), etag, last_modified, fetched_at)


def fetcher_from_settings(settings: Settings, transport: httpx.BaseTransport | None = None) -> HttpFetcher:
    """The fetcher the settings describe (`WHERETORUN_IMPORT_*`); `transport` is for tests."""
    policy = UrlPolicy(
        allowed_hosts=settings.import_allowed_hosts,
        allow_private_addresses=settings.import_allow_private_addresses,
    )
    return HttpFetcher(
        policy,
        timeout_s=settings.import_fetch_timeout_seconds,
        retries=settings.import_fetch_retries,
        backoff_s=settings.import_fetch_backoff_seconds,
        max_bytes=settings.import_max_fetch_bytes,
        transport=transport,
    )
