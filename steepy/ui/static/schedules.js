// The new-schedule form: POST /schedules with the workflow text and the trigger; shows the
// API's located problems, or goes to the new schedule's page.
"use strict";
(function () {
  const form = document.getElementById("new-schedule");
  if (!form) return;
  const list = document.getElementById("problems");
  // The variables' lines (`id: value'), as the API's `vars' object: a value that is JSON is
  // sent as such (3, [1, 2], true), any other as text; null when there are none. A value
  // that starts like a list or an object but is no JSON (`[a.txt, b.txt]') is a problem:
  // sent as text it would be one value, not a list.
  function givenVars(text, problems) {
    const given = {};
    let any = false;
    text.split("\n").forEach((line, index) => {
      const at = line.indexOf(":");
      const id = (at < 0 ? line : line.slice(0, at)).trim();
      if (!id) return;
      const value = at < 0 ? "" : line.slice(at + 1).trim();
      try { given[id] = JSON.parse(value); } catch (e) {
        if (/^[[{]/.test(value)) {
          problems.push({ line: index + 1, path: "vars." + id,
                          message: "not JSON: write a list as [\"a.txt\", \"b.txt\"]" });
        }
        given[id] = value;
      }
      any = true;
    });
    return any ? given : null;
  }
  function show(errors) {
    list.replaceChildren();
    for (const p of errors) {
      const li = document.createElement("li");
      const where = [p.line != null ? "line " + p.line : "", p.column != null ? "column " + p.column : "",
                     p.path || ""].filter(Boolean).join(", ");
      li.textContent = (where ? where + ": " : "") + (p.message || JSON.stringify(p));
      list.appendChild(li);
    }
    list.hidden = false;
  }
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = form.elements;
    const payload = { workflow: f.workflow.value };
    payload[f.kind.value] = f.trigger.value;
    if (f.name.value.trim()) payload.name = f.name.value.trim();
    if (f.timezone.value.trim()) payload.timezone = f.timezone.value.trim();
    const problems = [];
    const given = givenVars(f.vars.value, problems);
    if (problems.length) { show(problems); return; }
    if (given) payload.vars = given;
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const result = await window.steepy.api("POST", "/schedules", payload);
      if (result.ok) {
        location.href = window.steepy.base + "/schedules/" + encodeURIComponent(result.data.id);
        return;
      }
      const errors = result.problems.slice();
      if (!errors.length) errors.push({ message: window.steepy.message(result) });
      show(errors);
    } finally {
      button.disabled = false;
    }
  });
})();
