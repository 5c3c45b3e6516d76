// Live updates: a region marked data-live-stream follows its server-sent event stream and swaps in
// each fragment it sends (the element with the same id is replaced). While the stream is open the
// region's polling is held back; if the stream cannot be opened or breaks, the region asks its
// data-live-poll URL at once and the server-decided polling schedule takes over, and the stream is
// tried again later. Without JavaScript, or without EventSource, the page polls as before.
// A region added after the page loaded (the upload page's new job) is followed through
// window.quireLive.follow.
(function () {
  "use strict";
  if (!window.EventSource || !window.htmx) return;

  const RETRY_FIRST_MS = 2000;
  const RETRY_MAX_MS = 30000;
  // A stream that was open this long and then ends is reopened at once (the server ends streams
  // after their lifetime, which the page names, and a restarted server is back quickly); a younger
  // one falls back to polling. Half the lifetime, between 2 and 30 s.
  const lifetime = document.querySelector('meta[name="stream-max-s"]');
  const LONG_LIVED_MS = Math.max(2000, Math.min(30000, (Number(lifetime && lifetime.content) || 3600) * 500));

  function follow(region) {
    // A region follows one stream at a time: the upload page reuses its region for the next job.
    if (region.liveSource) region.liveSource.close();
    const source = new EventSource(region.dataset.liveStream);
    region.liveSource = source;
    let openedAt = 0;
    // A retry made while polling leaves polling alone until the stream is really open.
    if (region.dataset.live !== "polling") region.dataset.live = "connecting";
    source.addEventListener("open", () => {
      openedAt = Date.now();
      region.dataset.live = "streaming";
      region.liveRetryMs = RETRY_FIRST_MS;
    });
    const apply = (event) => replace(region, event.data);
    source.addEventListener("job", apply);
    source.addEventListener("table", apply);
    source.addEventListener("batch", apply);
    source.addEventListener("end", () => {
      source.close();
      region.dataset.live = "ended";
    });
    source.addEventListener("error", () => {
      source.close();
      if (openedAt && Date.now() - openedAt > LONG_LIVED_MS) {
        follow(region);
      } else if (region.dataset.live === "polling") {
        retryLater(region);
      } else {
        fallBack(region);
      }
    });
  }

  function fallBack(region) {
    region.dataset.live = "polling";
    fetch(region.dataset.livePoll, { headers: { "HX-Request": "true" }, credentials: "same-origin" })
      .then((response) => (response.ok ? response.text() : null))
      .then((html) => html && replace(region, html))
      .catch(() => {
        /* the server is unreachable: the retry reconnects when it is back */
      });
    retryLater(region);
  }

  function retryLater(region) {
    const wait = region.liveRetryMs || RETRY_FIRST_MS;
    region.liveRetryMs = Math.min(wait * 2, RETRY_MAX_MS);
    const stream = region.dataset.liveStream;
    // Not when the region has moved on to another job's stream meanwhile.
    window.setTimeout(() => {
      if (region.dataset.live === "polling" && region.dataset.liveStream === stream) follow(region);
    }, wait);
  }

  function replace(region, html) {
    const template = document.createElement("template");
    template.innerHTML = html.trim();
    const fresh = template.content.firstElementChild;
    const current = fresh && fresh.id && region.querySelector(`#${CSS.escape(fresh.id)}`);
    if (current) window.htmx.swap(current, html, { swapStyle: "outerHTML" });
  }

  // Polling belongs to the regions that are not streaming: hold back a poll while the stream is
  // open (or opening: if it fails, the fallback asks at once).
  document.addEventListener("htmx:beforeRequest", (event) => {
    const element = event.detail.elt;
    const region = element.closest && element.closest("[data-live-stream]");
    const live = region && region.dataset.live;
    if (element.hasAttribute("data-poll") && (live === "streaming" || live === "connecting")) {
      event.preventDefault();
    }
  });

  window.quireLive = { follow, longLivedMs: LONG_LIVED_MS };

  document.addEventListener("DOMContentLoaded", () => {
    document.querySelectorAll("[data-live-stream]").forEach(follow);
  });
})();
