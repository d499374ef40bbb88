// The new-schedule form: POST /schedules with the workflow text and the trigger; shows the
// API's located problems, or goes to the new schedule's page.
"use strict";
(function () {
  const form = document.getElementById("new-schedule");
  if (!form) return;
  const list = document.getElementById("problems");
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = form.elements;
    const payload = { workflow: f.workflow.value };
    payload[f.kind.value] = f.trigger.value;
    if (f.name.value.trim()) payload.name = f.name.value.trim();
    if (f.timezone.value.trim()) payload.timezone = f.timezone.value.trim();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const result = await window.steepy.api("POST", "/schedules", payload);
      if (result.ok) {
        location.href = window.steepy.base + "/schedules/" + encodeURIComponent(result.data.id);
        return;
      }
      list.replaceChildren();
      const errors = result.problems.slice();
      if (!errors.length) errors.push({ message: window.steepy.message(result) });
      for (const p of errors) {
        const li = document.createElement("li");
        const where = [p.line != null ? "line " + p.line : "", p.column != null ? "column " + p.column : "",
                       p.path || ""].filter(Boolean).join(", ");
        li.textContent = (where ? where + ": " : "") + (p.message || JSON.stringify(p));
        list.appendChild(li);
      }
      list.hidden = false;
    } finally {
      button.disabled = false;
    }
  });
})();
