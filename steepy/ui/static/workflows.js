// The workflow pages: what the shared script (steepy.js) does not do already.
//  - The search form sends the browser's time zone, so dates in a query are the user's.
//  - A submission's priority form is shown only while the submission may change (ACCEPTED,
//    RUNNING); it lives outside the live regions (so a live update never swaps it while typed
//    into) and follows the status the live region #workflow-actions carries.
"use strict";
(function () {
  const zone = document.querySelector("input[data-time-zone]");
  if (zone && !zone.value && window.Intl) {
    try { zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { /* none */ }
  }
  function follow() {
    const actions = document.getElementById("workflow-actions");
    if (!actions) return;
    const active = actions.dataset.active === "true";
    document.querySelectorAll("form[data-active-only]").forEach((form) => { form.hidden = !active; });
  }
  document.addEventListener("steepy:refreshed", follow);
  follow();
})();
