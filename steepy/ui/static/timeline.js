// The timeline (templates/timeline.html): while a run still runs its bar reaches until now,
// so the chart is redrawn every few seconds (besides on the submission's events) until
// nothing runs any more.
"use strict";
(function () {
  const EVERY_MS = 2000;
  setInterval(() => {
    const chart = document.getElementById("timeline");
    if (chart && chart.hasAttribute("data-running") && !document.hidden && window.steepy) {
      window.steepy.refresh();
    }
  }, EVERY_MS);
})();
