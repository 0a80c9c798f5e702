"""Fetching price files: the SSRF policy, retries with backoff, the size limit, conditional requests
and redirects. All HTTP goes through httpx.MockTransport; DNS through a fake resolver."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from wheretorun.errors import InvalidInput, PayloadTooLarge, UpstreamError
from wheretorun.pricing.imports.fetch import HttpFetcher, UrlPolicy, Validators

PUBLIC = {"prices.example.com": ["93.184.216.34"], "cdn.example.org": ["2606:2800:220:1::248"]}
INTERNAL = {
    "loopback.example.com": ["127.0.0.1"],
    "private.example.com": ["10.0.0.7"],
    "metadata.example.com": ["169.254.169.254"],
    "v6loop.example.com": ["::1"],
    "mapped.example.com": ["::ffff:192.168.1.1"],
    "mixed.example.com": ["93.184.216.34", "172.16.0.1"],
}
HOSTS = {**PUBLIC, **INTERNAL}


def resolve(host: str) -> list[str]:
    return HOSTS[host]


def policy(allow_private: bool = False) -> UrlPolicy:
    return UrlPolicy(
        allowed_hosts=("prices.example.com", ".example.org", *INTERNAL),
        allow_private_addresses=allow_private,
        resolver=resolve,
    )


def fetcher(
    handler: Callable[[httpx.Request], httpx.Response], **options: object
) -> tuple[HttpFetcher, list[float]]:
    sleeps: list[float] = []
    made = HttpFetcher(
        policy(),
        transport=httpx.MockTransport(handler),
        sleep=sleeps.append,
        **options,  # type: ignore[arg-type]
    )
    return made, sleeps


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://prices.example.com/vms.csv", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("gopher://prices.example.com/", "only http and https"),
        ("https://evil.example.net/vms.csv", "not on the import allow-list"),
        ("https://prices.example.com.evil.net/vms.csv", "not on the import allow-list"),
        ("https://user:secret@prices.example.com/vms.csv", "credentials"),
        ("https://loopback.example.com/", "non-public address 127.0.0.1"),
        ("https://private.example.com/", "non-public address 10.0.0.7"),
        ("https://metadata.example.com/latest/meta-data", "non-public address 169.254.169.254"),
        ("https://v6loop.example.com/", "non-public address ::1"),
        ("https://mapped.example.com/", "non-public address ::ffff:192.168.1.1"),
        ("https://mixed.example.com/", "non-public address 172.16.0.1"),
        ("https:///no-host", "no host"),
    ],
)
def test_urls_outside_the_policy_are_refused_before_any_request(url: str, reason: str) -> None:
    calls: list[httpx.Request] = []
    made, _ = fetcher(lambda request: calls.append(request) or httpx.Response(200, text="x"))
    with pytest.raises(InvalidInput) as refused:
        made.fetch(url)
    assert refused.value.field == "body.url"
    assert reason in refused.value.reason
    assert calls == []


def test_allowed_hosts_subdomains_and_explicitly_allowed_private_addresses() -> None:
    policy().check("https://prices.example.com/a.csv")
    policy().check("http://cdn.example.org/a.json")  # `.example.org` allows subdomains
    with pytest.raises(InvalidInput):
        policy().check("https://example.org.evil.com/")
    policy(allow_private=True).check("https://loopback.example.com/")


def test_server_errors_are_retried_with_exponential_backoff() -> None:
    statuses = iter([503, 502, 200])

    def handler(request: httpx.Request) -> httpx.Response:
        status = next(statuses)
        return httpx.Response(status, content=b"ok" if status == 200 else b"")

    made, sleeps = fetcher(handler, retries=3, backoff_s=0.5)
    assert made.fetch("https://prices.example.com/vms.csv").content == b"ok"
    assert sleeps == [0.5, 1.0]


def test_giving_up_after_the_retries_is_a_502_kind_of_error() -> None:
    attempts: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        raise httpx.ConnectTimeout("timed out", request=request)

    made, sleeps = fetcher(handler, retries=2, backoff_s=1)
    with pytest.raises(UpstreamError, match="did not answer.*after 3 attempts"):
        made.fetch("https://prices.example.com/vms.csv")
    assert len(attempts) == 3
    assert sleeps == [1, 2]


def test_a_client_error_is_not_retried() -> None:
    attempts: list[int] = []
    made, _ = fetcher(lambda request: attempts.append(1) or httpx.Response(404))
    with pytest.raises(UpstreamError, match="HTTP 404"):
        made.fetch("https://prices.example.com/missing.csv")
    assert attempts == [1]


def test_a_declared_size_above_the_limit_is_refused() -> None:
    made, _ = fetcher(lambda request: httpx.Response(200, headers={"content-length": "5000"}), max_bytes=4096)
    with pytest.raises(PayloadTooLarge):
        made.fetch("https://prices.example.com/big.csv")


def test_a_streamed_body_above_the_limit_is_cut_off() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=iter([b"x" * 3000, b"x" * 3000]))  # no content-length

    made, _ = fetcher(handler, max_bytes=4096)
    with pytest.raises(PayloadTooLarge, match="4,096 bytes"):
        made.fetch("https://prices.example.com/big.csv")


def test_validators_are_sent_and_304_means_not_modified() -> None:
    seen: list[httpx.Headers] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        if request.headers.get("if-none-match") == '"v1"':
            return httpx.Response(304, headers={"etag": '"v1"'})
        return httpx.Response(
            200, content=b"data", headers={"etag": '"v1"', "last-modified": "Mon, 30 Nov 2026"}
        )

    made, _ = fetcher(handler)
    first = made.fetch("https://prices.example.com/vms.csv")
    assert (first.content, first.etag, first.last_modified) == (b"data", '"v1"', "Mon, 30 Nov 2026")
    again = made.fetch(
        "https://prices.example.com/vms.csv", Validators(etag='"v1"', last_modified="Mon, 30 Nov 2026")
    )
    assert again.not_modified
    assert seen[1]["if-modified-since"] == "Mon, 30 Nov 2026"
    assert "if-none-match" not in seen[0]


def test_redirects_are_followed_only_to_allowed_hosts() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/moved":
            return httpx.Response(302, headers={"location": "https://cdn.example.org/vms.csv"})
        if request.url.path == "/to-metadata":
            return httpx.Response(301, headers={"location": "http://metadata.example.com/latest"})
        return httpx.Response(200, content=b"moved here")

    made, _ = fetcher(handler)
    result = made.fetch("https://prices.example.com/moved")
    assert (result.url, result.content) == ("https://cdn.example.org/vms.csv", b"moved here")
    with pytest.raises(InvalidInput, match="169.254.169.254"):
        made.fetch("https://prices.example.com/to-metadata")
