// steepy's web UI: the few things a server-rendered page cannot do alone.
//  - Live regions: <body data-live="*" or data-live="<submission id>" data-live-kinds="submission.,chain.">
//    listens to the live feed (GET /events, server-sent events) and, when an event of those
//    kinds arrives, fetches the page again and swaps every element marked data-live-region
//    (by id). At most one fetch at a time; events during a fetch cause one more.
//  - Relative times: <time datetime="..." data-relative> reads "3 s ago" / "in 5 s".
//  - Actions: <button data-api="PUT /workflows/ID" data-json='{"status":"CANCELLED"}'
//    data-confirm="..."> and <form data-api="PUT /workflows/ID"> (fields become JSON; number
//    inputs become numbers) call the API with the page's CSRF token and show the outcome.
"use strict";
(function () {
  const body = document.body;
  const base = body.dataset.base || "";
  const csrfMeta = document.querySelector('meta[name="csrf-token"]');
  const csrf = csrfMeta ? csrfMeta.content : "";

  function toast(message, bad) {
    const box = document.getElementById("toast");
    if (!box) return;
    box.textContent = message;
    box.className = bad ? "bad" : "";
    box.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { box.hidden = true; }, bad ? 8000 : 4000);
  }

  // Calls the API; resolves to {ok, status, data (JSON or text), problems (of bad input:
  // {message, path, file, line, column} each, from the X-Steepy-Problems header)}
  async function api(method, path, payload, type) {
    const headers = { "accept": "application/json", "x-csrf-token": csrf };
    let bodyText;
    if (payload !== undefined) {
      headers["content-type"] = type || "application/json";
      bodyText = typeof payload === "string" ? payload : JSON.stringify(payload);
    }
    const response = await fetch(base + path, { method, headers, body: bodyText,
                                                credentials: "same-origin" });
    const text = await response.text();
    let data = text;
    try { data = JSON.parse(text); } catch (e) { /* plain text */ }
    let problems = [];
    try { problems = JSON.parse(response.headers.get("x-steepy-problems") || "[]"); } catch (e) { /* none */ }
    if (!Array.isArray(problems)) problems = [];
    return { ok: response.ok, status: response.status, data, problems };
  }

  // An error's text (Steep's plain text); when its problems come apart, its first line only
  function message(result) {
    const d = result.data;
    if (typeof d !== "string" || !d.trim()) return "HTTP " + result.status;
    return result.problems && result.problems.length ? d.trim().split("\n")[0] : d.trim();
  }

  // ----------------------------------------------------------------- live regions
  let busy = false, again = false, timer = null;
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const response = await fetch(location.href, { headers: { "accept": "text/html" },
                                                     credentials: "same-origin" });
      if (response.ok) {
        const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
        document.querySelectorAll("[data-live-region]").forEach((old) => {
          const active = document.activeElement;
          if (active && old.contains(active) && active.matches("input, select, textarea")) return;
          const next = old.id && fresh.getElementById(old.id);
          if (next) { old.replaceWith(next); }
        });
        relativeTimes();
        document.dispatchEvent(new CustomEvent("steepy:refreshed"));
      }
    } catch (e) { /* the server is restarting: the next event or reconnect refreshes */ }
    busy = false;
    if (again) { again = false; schedule(); }
  }
  function schedule() {
    if (timer === null) timer = setTimeout(() => { timer = null; refresh(); }, 250);
  }

  function listen() {
    const scope = body.dataset.live;
    if (!scope || !window.EventSource) return;
    const kinds = (body.dataset.liveKinds || "").split(",").map((k) => k.trim()).filter(Boolean);
    const url = base + "/events" + (scope === "*" ? "" : "?submissionId=" + encodeURIComponent(scope));
    const source = new EventSource(url, { withCredentials: true });
    let opened = false;
    source.onopen = () => { if (opened) schedule(); opened = true; };  // missed events while away
    source.onmessage = (e) => {
      let event;
      try { event = JSON.parse(e.data); } catch (err) { return; }
      document.dispatchEvent(new CustomEvent("steepy:event", { detail: event }));
      if (!kinds.length || kinds.some((k) => (event.kind || "").startsWith(k))) schedule();
    };
    window.addEventListener("pagehide", () => source.close());
  }

  // ----------------------------------------------------------------- relative times
  function relative(ms) {
    const s = Math.round(Math.abs(ms) / 1000);
    let text;
    if (s < 60) text = s + " s";
    else if (s < 3600) text = Math.floor(s / 60) + " min " + (s % 60) + " s";
    else if (s < 86400) text = Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
    else text = Math.floor(s / 86400) + " d " + Math.floor((s % 86400) / 3600) + " h";
    return ms >= 0 ? "in " + text : text + " ago";
  }
  function relativeTimes() {
    const now = Date.now();
    document.querySelectorAll("time[data-relative]").forEach((t) => {
      const at = Date.parse(t.getAttribute("datetime"));
      if (isNaN(at)) return;
      if (!t.title) t.title = new Date(at).toLocaleString();
      t.textContent = (t.dataset.prefix || "") + relative(at - now);
    });
  }

  // ----------------------------------------------------------------- actions
  async function act(element, method, path, payload) {
    if (element.dataset.confirm && !window.confirm(element.dataset.confirm)) return;
    element.disabled = true;
    try {
      const result = await api(method, path, payload);
      if (!result.ok) { toast(message(result), true); return; }
      if (element.dataset.redirect) {
        const id = result.data && result.data.id;
        location.href = base + element.dataset.redirect.replace("{id}", encodeURIComponent(id || ""));
        return;
      }
      toast(element.dataset.done || "Done");
      schedule();
    } catch (e) {
      toast("steepy did not answer: " + e, true);
    } finally {
      element.disabled = false;
    }
  }
  function split(spec) {
    const at = spec.indexOf(" ");
    return [spec.slice(0, at), spec.slice(at + 1)];
  }
  document.addEventListener("click", (e) => {
    const button = e.target.closest("button[data-api]");
    if (!button || button.form && button.form.dataset.api) return;
    e.preventDefault();
    const [method, path] = split(button.dataset.api);
    act(button, method, path, button.dataset.json ? JSON.parse(button.dataset.json) : undefined);
  });
  document.addEventListener("submit", (e) => {
    const form = e.target.closest("form[data-api]");
    if (!form) return;
    e.preventDefault();
    const payload = form.dataset.json ? JSON.parse(form.dataset.json) : {};
    for (const field of form.elements) {
      if (!field.name) continue;
      payload[field.name] = field.type === "number" ? Number(field.value) : field.value;
    }
    const [method, path] = split(form.dataset.api);
    act(form.querySelector("button[type=submit]") || form, method, path, payload);
  });

  window.steepy = { api, toast, refresh: schedule, base, message };
  relativeTimes();
  setInterval(relativeTimes, 1000);
  listen();
})();
