"""The graph view in Chromium: opened while a submission runs, its nodes change colour from the
submission's events without a reload, and a for-each's body is one node with its counts."""

from __future__ import annotations

NAPS = """
api: 4.7.0
name: graph of naps
actions:
  - id: nap
    type: execute
    service: sleep
    inputs: [{id: seconds, value: 4}]
  - id: naps
    type: for
    input: {id: lengths, value: [0.1, 0.1, 0.1]}
    enumerator: length
    dependsOn: nap
    actions:
      - id: doze
        type: execute
        service: sleep
        inputs: [{id: seconds, var: length}]
"""


def test_graph_of_a_running_submission_turns_to_success(ui, browser_page) -> None:
    from playwright.sync_api import expect

    page = browser_page
    submission = ui.submit(NAPS)
    page.goto(f"{ui.url}/workflows/{submission}/graph")
    nap = page.locator('g.g-node[data-node="nap"]')
    # waiting or running (which one depends on how soon an agent takes it), not done yet
    assert nap.get_attribute("data-status") in ("NONE", "REGISTERED", "RUNNING")
    expect(page.locator('g.g-edge.k-depends[data-source="nap"][data-target="naps"]')) \
        .to_have_count(1)
    page.evaluate("window.notReloaded = true")  # the live region is swapped, no reload
    expect(nap).to_have_attribute("data-status", "SUCCESS")
    doze = page.locator('g.g-node[data-node="doze"]')
    expect(doze).to_have_attribute("data-status", "SUCCESS")
    expect(doze).to_have_attribute("data-total", "3")
    expect(doze.locator("text.g-counts")).to_have_text("×3: 3 done")
    expect(page.get_by_test_id("submission-status")).to_have_text("SUCCESS")
    assert page.evaluate("window.notReloaded") is True
    expect(page.locator("svg.graph")).to_be_visible()
