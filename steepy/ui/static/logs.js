// A chain's log page: "Load earlier" fetches the previous range, and while the run goes on
// the log is tailed: every second the bytes after the current end are fetched (the API on
// the same path, with x-range), until the run has ended. "Follow" keeps the view at the bottom.
"use strict";
(function () {
  const box = document.getElementById("log");
  if (!box) return;
  const CHUNK = 64 * 1024, MAX_TAIL = 4 * CHUNK, FINISHED = ["SUCCESS", "ERROR", "CANCELLED"];
  const base = document.body.dataset.base || "";
  const chain = box.dataset.chain, run = box.dataset.run;
  const pre = box.querySelector(".log-text");
  const earlier = box.querySelector(".load-earlier");
  const info = box.querySelector(".log-range");
  const note = box.querySelector(".log-message");
  const follow = box.querySelector(".follow-toggle");
  const state = box.querySelector(".tail-state");
  const chainUrl = base + "/processchains/" + encodeURIComponent(chain);
  const logUrl = base + "/logs/processchains/" + encodeURIComponent(chain) +
                 (run ? "?runNumber=" + encodeURIComponent(run) : "");
  let start = Number(box.dataset.start), end = Number(box.dataset.end), size = end;
  const decoder = new TextDecoder();

  function showRange() {
    if (size > 0) info.textContent = "showing bytes " + start + "–" + end + " of " + size;
    earlier.hidden = start <= 0;
  }
  function atBottom() { return pre.scrollHeight - pre.scrollTop - pre.clientHeight < 8; }
  function toBottom() { if (follow.checked) pre.scrollTop = pre.scrollHeight; }

  // {bytes, start, total} of a byte range; null: nothing there (not yet, or past the end)
  async function fetchRange(range) {
    const response = await fetch(logUrl, { credentials: "same-origin",
      headers: { "accept": "text/plain", "x-range": "bytes=" + range } });
    if (response.status === 404 || response.status === 416) return null;
    if (!response.ok) throw new Error("HTTP " + response.status);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const m = /bytes (\d+)-(-?\d+)\/(\d+)/.exec(response.headers.get("x-content-range") || "");
    return { bytes, start: m ? Number(m[1]) : 0, total: m ? Number(m[3]) : bytes.length };
  }

  async function loadEarlier() {
    if (start <= 0) return;
    earlier.disabled = true;
    try {
      const got = await fetchRange(Math.max(0, start - CHUNK) + "-" + (start - 1));
      if (got) {
        let bytes = got.bytes, at = got.start;
        if (at > 0) {  // begin with a whole line (or at least a whole character)
          const cut = bytes.indexOf(10);
          let skip = cut >= 0 && cut < bytes.length - 1 ? cut + 1 : 0;
          while (!skip && skip < 4 && skip < bytes.length && (bytes[skip] & 0xC0) === 0x80) skip++;
          bytes = bytes.subarray(skip);
          at += skip;
        }
        const before = pre.scrollHeight, top = pre.scrollTop;
        pre.prepend(document.createTextNode(new TextDecoder().decode(bytes)));
        pre.hidden = false;
        pre.scrollTop = top + pre.scrollHeight - before;
        start = at;
        size = Math.max(size, got.total);
      }
    } catch (e) {
      window.steepy.toast("Could not load the log: " + e.message, true);
    }
    earlier.disabled = false;
    showRange();
  }

  // Appends what follows `end`; true when there is still more to fetch.
  async function more() {
    const from = end > 0 ? end - 1 : 0;  // one known byte first: never an unsatisfiable range
    const got = await fetchRange(from + "-" + (from + MAX_TAIL - 1));
    if (!got) return false;
    const bytes = end > 0 ? got.bytes.subarray(end - got.start) : got.bytes;
    size = got.total;
    if (bytes.length) {
      pre.append(document.createTextNode(decoder.decode(bytes, { stream: true })));
      end += bytes.length;
      pre.hidden = false;
      note.hidden = true;
      toBottom();
    }
    showRange();
    return end < size;
  }

  async function runEnded() {
    const response = await fetch(chainUrl + "/runs/" + encodeURIComponent(run), {
      credentials: "same-origin", headers: { "accept": "application/json" } });
    if (!response.ok) return false;
    const doc = await response.json();
    return Boolean(doc.endTime) || FINISHED.includes(doc.status);
  }

  async function tail() {
    try {
      const ended = await runEnded();  // asked first: after it, the log is complete
      while (await more()) { /* catch up */ }
      if (ended) {
        state.textContent = "run ended";
        follow.closest("label").hidden = true;
        window.steepy.refresh();
        return;
      }
      state.textContent = "following the run";
    } catch (e) {
      state.textContent = "waiting for steepy…";
    }
    setTimeout(tail, 1000);
  }

  async function waitForRun() {  // the chain has not started: show its log once it has
    try {
      const response = await fetch(chainUrl, { credentials: "same-origin",
                                               headers: { "accept": "application/json" } });
      if (response.ok) {
        const doc = await response.json();
        if (doc.runNumber || FINISHED.includes(doc.status)) { location.reload(); return; }
      }
    } catch (e) { /* try again */ }
    setTimeout(waitForRun, 1000);
  }

  earlier.addEventListener("click", loadEarlier);
  follow.addEventListener("change", toBottom);
  for (const kind of ["wheel", "touchmove", "keydown"]) {
    pre.addEventListener(kind, () => setTimeout(() => { if (!atBottom()) follow.checked = false; }, 100),
                         { passive: true });
  }
  pre.scrollTop = pre.scrollHeight;
  showRange();
  if (box.dataset.running || box.dataset.waiting) follow.closest("label").hidden = false;
  if (box.dataset.running) tail();
  else if (box.dataset.waiting) waitForRun();
})();
