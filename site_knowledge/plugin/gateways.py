"""The ``gateways`` option: a list of gateway URLs, or one comma-separated string so that it
can come from the environment (``gateways: !ENV [SITE_KNOWLEDGE_GATEWAY, []]``), and the
check that a public site does not send its visitors to a loopback gateway."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from mkdocs.config import config_options as c
from mkdocs.config.base import ValidationError


class GatewayList(c.ListOfItems[str]):
    """Gateway base URLs. A string is split on commas; an unset or empty value (an ``!ENV``
    variable that is not set, or set to nothing) is no gateway: the chat box then goes
    straight to the browser engines."""

    def __init__(self) -> None:
        super().__init__(c.Type(str), default=[])

    def run_validation(self, value: object) -> list[str]:
        if value is None:
            value = []
        elif isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        urls = super().run_validation(value)
        for url in urls:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValidationError(f"gateway {url!r} is not an http(s) URL with a host")
        return urls


def is_local_host(host: str | None) -> bool:
    """``localhost`` (and ``*.localhost``), a loopback address, or the unspecified address."""
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def loopback_gateways(site_url: str | None, gateways: list[str]) -> list[str]:
    """The gateways that point at the visitor's own machine, when the site is public (its
    ``site_url`` names a host that is not local); none for a local or URL-less build."""
    host = urlsplit(site_url or "").hostname
    if not host or is_local_host(host):
        return []
    return [url for url in gateways if is_local_host(urlsplit(url).hostname)]


def loopback_warnings(site_url: str | None, gateways: list[str]) -> list[str]:
    """One warning for each gateway that :func:`loopback_gateways` flags, for every adapter."""
    return [f"gateway {url} is on the visitor's own machine, but site_url {site_url} is "
            "public: deployed pages would send each question to the visitor's computer. Name "
            "your public gateway (gateways, or SITE_KNOWLEDGE_GATEWAY with `!ENV`), or none to "
            "use the browser engines." for url in loopback_gateways(site_url, gateways)]
