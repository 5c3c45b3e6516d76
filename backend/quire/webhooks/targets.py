"""Where a webhook may go: checked when a URL is given, and again after DNS resolution at send time.

A target on a loopback, private, link-local (cloud metadata lives there), shared, multicast or
reserved address is refused unless `QUIRE_WEBHOOK_ALLOW_PRIVATE=true`. The sender connects to
the very address checked here, so a name that resolves to a public address for the check and to
an internal one for the connection (DNS rebinding) gets nowhere.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from quire.settings import Settings
from quire.webhooks.models import MAX_URL_CHARS

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class TargetRefused(Exception):
    """The URL cannot be a webhook target; the message is safe to show."""


class TargetUnresolved(TargetRefused):
    """The URL's host could not be looked up now: a name server down, a host being set up. Worth trying again,
    where an address that may never be a target is not."""


@dataclass(frozen=True)
class Target:
    """A checked target: the URL as given, and the address to connect to for it."""

    url: str
    scheme: str
    host: str
    port: int
    address: IPAddress


def check_url(settings: Settings, url: str) -> str:
    """A callback URL as given by a person or a program: http(s), a host, no credentials, not too long.

    A literal address is checked here too; a name is checked when it is resolved, at send time.
    """
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise TargetRefused(f"The callback URL is longer than {MAX_URL_CHARS} characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise TargetRefused("The callback URL is not a valid URL.") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetRefused("The callback URL must be an http:// or https:// URL with a host.")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused("The callback URL must not carry a user name or password.")
    if port == 0:
        raise TargetRefused("The callback URL's port is not valid.")
    literal = _literal(parts.hostname)
    if literal is not None:
        refuse_private(settings, literal)
    return url


def refuse_private(settings: Settings, address: IPAddress, allow_private: bool | None = None) -> None:
    if allow_private is None:
        allow_private = settings.webhook_allow_private
    if allow_private:
        return
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    checked = mapped or address
    if not checked.is_global or checked.is_multicast:
        raise TargetRefused(f"Webhooks are not sent to {checked}: a loopback, private or reserved address.")


def resolve(settings: Settings, url: str, allow_private: bool | None = None) -> Target:
    """Resolve the URL's host and pick the first address that may be a target; refuse if none may."""
    check_url(settings, url)
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    literal = _literal(host)
    if literal is not None:
        candidates: list[IPAddress] = [literal]
    else:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise TargetUnresolved(f"The host {host!r} could not be resolved.") from exc
        except UnicodeError as exc:  # a label over 63 characters, say: no later lookup can succeed
            raise TargetRefused(f"The host {host!r} is not a valid host name.") from exc
        candidates = [ipaddress.ip_address(info[4][0]) for info in infos]
    refusal: TargetRefused | None = None
    for address in candidates:
        try:
            refuse_private(settings, address, allow_private)
        except TargetRefused as exc:
            refusal = refusal or exc
            continue
        return Target(url, parts.scheme, host, port, address)
    raise refusal or TargetRefused(f"The host {host!r} has no address.")


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
