"""Standard Webhooks signatures: the three headers of a delivery.

The signed content is `<webhook-id>.<webhook-timestamp>.<body>`, HMAC-SHA256 keyed with the
secret's base64 part, sent as `webhook-signature: v1,<base64>` (the Standard Webhooks
specification, "Signature scheme"); the library is the specification's reference implementation.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from standardwebhooks.webhooks import Webhook


def new_message_id() -> str:
    """A delivery's `webhook-id`: no `.` in it, so the signed content splits one way only."""
    return "msg_" + secrets.token_hex(16)


def signed_headers(secret: str, message_id: str, at: datetime, body: str) -> dict[str, str]:
    """The headers of one attempt: the same id every time, this attempt's timestamp and signature."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, at, body),
    }
