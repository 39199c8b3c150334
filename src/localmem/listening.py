"""What both local servers (`serve --http`, `ui`) need of the network: whether an address
is this machine only, and a listening socket, refused in one sentence when the address
cannot be had."""

from __future__ import annotations

import ipaddress
import socket

from localmem.errors import LocalmemError


def listen(host: str, port: int, advice: str) -> socket.socket:
    """A socket listening on `host`:`port`; LocalmemError ending with `advice` if not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except (OSError, OverflowError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise LocalmemError(f"cannot listen on {host} port {port} ({reason}); {advice}.") from None


def is_loopback(host: str) -> bool:
    """Whether `host` reaches this machine only (anything else gets a warning)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
