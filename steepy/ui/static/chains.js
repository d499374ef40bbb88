// The process-chain page: hide cancel and priority once a refresh shows the chain finished.
"use strict";
(function () {
  const FINISHED = ["SUCCESS", "ERROR", "CANCELLED"];
  function update() {
    const facts = document.getElementById("chain-facts");
    const actions = document.getElementById("chain-actions");
    if (facts && actions && FINISHED.includes(facts.dataset.status)) actions.hidden = true;
  }
  document.addEventListener("steepy:refreshed", update);
  update();
})();
