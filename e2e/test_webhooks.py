"""Webhooks in Settings and on the job page: the default URL, the secret, deliveries and a replay."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from standardwebhooks.webhooks import Webhook

from backend.tests.integration.receiver import WebhookReceiver
from backend.tests.integration.stack import Stack, document
from e2e.conftest import screenshot


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as server:
        yield server


def _save_default_url(page: Page, base_url: str, url: str) -> None:
    page.goto(f"{base_url}/settings")
    page.get_by_label("Default webhook URL").fill(url)
    page.get_by_role("button", name="Save URL").click()
    expect(page.get_by_role("status")).to_contain_text("URL" if not url else "go to this URL")
    expect(page).to_have_url(f"{base_url}/settings")  # redirected after the post: a reload does not post again


def test_the_account_default_url_signed_deliveries_on_the_job_page_and_send_again(
    page: Page, live: Stack, receiver: WebhookReceiver
) -> None:
    # Given a default webhook URL saved in Settings, and the secret Settings shows
    url = receiver.url("ok")
    _save_default_url(page, live.base_url, url)
    secret = page.locator("[data-webhook-secret]").inner_text()
    assert secret.startswith("whsec_")
    try:
        # When a job without a callback_url of its own completes
        job_id = live.submit(document())
        live.wait(job_id)
        [call] = receiver.wait_for(url)
    finally:
        _save_default_url(page, live.base_url, "")
    # Then the default URL got it, signed with that secret
    assert Webhook(secret).verify(call.body, call.headers)["job_id"] == job_id
    # And the job page shows the delivery and its attempt
    page.goto(f"{live.base_url}/jobs/{job_id}")
    delivery = page.locator(f"[data-delivery-id='{call.headers['webhook-id']}']")
    expect(delivery).to_have_attribute("data-delivery-status", "delivered")
    expect(delivery.locator("tr[data-attempt]")).to_have_count(1)
    expect(delivery.locator("tr[data-attempt='1']")).to_contain_text("HTTP 200")
    screenshot(page, "job-webhooks")
    # When the person sends it again, the same message arrives once more and the page shows both attempts
    with page.expect_navigation():  # the form posts and is redirected back; reloading before that lands races it
        delivery.get_by_role("button", name="Send again").click()
    receiver.wait_for(url, 2)
    for _ in range(50):
        page.reload()
        if delivery.locator("tr[data-attempt]").count() == 2:
            break
        page.wait_for_timeout(100)
    expect(delivery.locator("tr[data-attempt='2']")).to_contain_text("HTTP 200")
    assert {c.headers["webhook-id"] for c in receiver.at(url)} == {call.headers["webhook-id"]}
