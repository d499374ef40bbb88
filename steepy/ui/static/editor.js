// The "New workflow" editor: a plain <textarea> with a line-number gutter and a highlighted
// copy of its text underneath (<pre>, kept in sync on every input and scroll). Submitting
// POSTs the text to the API's /workflows (window.steepy.api sends the CSRF token); the API's
// problems (line, column, path, message) are marked in the gutter and listed beside the text,
// and clicking one puts the cursor there. The text itself is never replaced.
"use strict";
(function () {
  const form = document.getElementById("editor-form");
  const box = document.getElementById("editor");
  const area = document.getElementById("editor-text");
  if (!form || !box || !area || !window.steepy) return;
  const lines = box.querySelector(".editor-lines");
  const shadow = box.querySelector(".editor-highlight");
  const button = document.getElementById("editor-submit");
  const state = document.getElementById("editor-state");
  const problems = document.getElementById("editor-problems");
  const messageBox = document.getElementById("editor-message");
  const list = document.getElementById("editor-errors");
  const OWN_FILE = "<request>";  // the name the API gives the posted text in its problems
  const DRAFT = "steepy.editor.draft";
  const LINE_PX = 20;  // editor.css: line-height of the textarea, gutter and highlight
  const MAX_HIGHLIGHT = 500000;  // characters

  let marked = new Map();  // line number -> messages, of the last failed submission
  let sending = false;
  let escaped = false;     // Esc pressed: the next Tab leaves the textarea

  // ----------------------------------------------------------------- highlighting
  const TOKENS = new RegExp([
    String.raw`(?<c>(?<=^|\s)#.*$)`,
    String.raw`(?<s>(?<=^|[\s\[{,:])(?:"(?:[^"\\]|\\.)*"?|'(?:[^']|'')*'?))`,
    String.raw`(?<k>(?<![\w.$-])[A-Za-z_$][\w.$-]*(?=\s*:(?:\s|$)))`,
    String.raw`(?<n>(?<![\w.-])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.]))`,
    String.raw`(?<w>(?<![\w.-])(?:true|false|null|~)(?![\w.-]))`,
  ].join("|"), "g");
  const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
  const escape = (text) => text.replace(/[&<>]/g, (c) => ESCAPES[c]);

  // One line as HTML: the same characters, some wrapped in <span class="k|s|n|w|c">
  function colour(line) {
    let out = "", at = 0;
    TOKENS.lastIndex = 0;
    for (const found of line.matchAll(TOKENS)) {
      const groups = found.groups;
      let kind = Object.keys(groups).find((name) => groups[name] !== undefined);
      if (!kind || !found[0]) continue;
      const end = found.index + found[0].length;
      if (kind === "s" && /^\s*:(\s|$)/.test(line.slice(end))) kind = "k";
      out += escape(line.slice(at, found.index)) + `<span class="${kind}">` + escape(found[0]) + "</span>";
      at = end;
    }
    return out + escape(line.slice(at));
  }

  function render() {
    const text = area.value.split("\n");
    // a very large text (pasted data?) stays plain: the page must not freeze on it
    const plain = area.value.length > MAX_HIGHLIGHT;
    box.classList.toggle("highlighting", !plain);
    let html = "";
    if (!plain) {
      text.forEach((line, i) => {
        html += (marked.has(i + 1) ? '<span class="marked">' : "<span>") + colour(line) + "</span>";
      });
    }
    shadow.innerHTML = html;
    renderGutter(text.length);
    sync();
  }

  function renderGutter(count) {
    while (lines.childElementCount < count) {
      const number = document.createElement("div");
      number.textContent = String(lines.childElementCount + 1);
      number.dataset.line = number.textContent;
      lines.appendChild(number);
    }
    while (lines.childElementCount > count) lines.lastElementChild.remove();
    lines.parentElement.style.width = `calc(${Math.max(2, String(count).length)}ch + 1.6em)`;
    lines.querySelectorAll(".error").forEach((n) => {
      n.classList.remove("error"); n.removeAttribute("title");
    });
    marked.forEach((messages, line) => {
      const number = lines.children[line - 1];
      if (!number) return;
      number.classList.add("error");
      number.title = messages.join("\n");
    });
  }

  function sync() {
    const top = area.scrollTop, left = area.scrollLeft;
    lines.style.transform = `translateY(${-top}px)`;
    shadow.style.transform = `translate(${-left}px, ${-top}px)`;
  }

  let pending = false;
  function later() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; render(); });
  }

  // ----------------------------------------------------------------- editing keys
  function replace(from, to, text) {
    area.focus();
    area.setSelectionRange(from, to);
    // insertText keeps the browser's undo history; setRangeText where it is not supported
    if (!document.execCommand || !document.execCommand("insertText", false, text)) {
      area.setRangeText(text, from, to, "end");
      area.dispatchEvent(new Event("input"));
    }
  }

  function indent(outdent) {
    const { selectionStart: start, selectionEnd: end, value } = area;
    if (!outdent && !value.slice(start, end).includes("\n")) {
      replace(start, end, "  ");
      return;
    }
    const first = value.lastIndexOf("\n", start - 1) + 1;
    const last = end > start && value[end - 1] === "\n" ? end - 1 : end;
    const stop = value.indexOf("\n", last) < 0 ? value.length : value.indexOf("\n", last);
    const before = value.slice(first, stop).split("\n");
    const after = before.map((line) => outdent ? line.replace(/^ {1,2}/, "") : "  " + line);
    const text = after.join("\n");
    if (text === before.join("\n")) return;
    const shift = after[0].length - before[0].length;
    replace(first, stop, text);
    if (before.length === 1) {
      const caret = Math.max(first, start + shift);
      area.setSelectionRange(caret, Math.max(caret, end + shift));
    } else {
      area.setSelectionRange(first, first + text.length);
    }
  }

  area.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      submit();
      return;
    }
    if (e.key === "Escape") { escaped = true; return; }
    if (e.key === "Tab" && !e.ctrlKey && !e.altKey && !e.metaKey) {
      if (escaped) { escaped = false; return; }  // leave the text, as Tab usually does
      e.preventDefault();
      indent(e.shiftKey);
      return;
    }
    if (!["Shift", "Control", "Alt", "Meta"].includes(e.key)) escaped = false;
  });
  let lastText = area.value;
  area.addEventListener("input", () => {
    follow(lastText, area.value);
    lastText = area.value;
    later();
    fieldsLater();
  });
  area.addEventListener("scroll", sync, { passive: true });
  new ResizeObserver(sync).observe(area);

  // ----------------------------------------------------------------- problems
  function where(problem) {
    let place = problem.file && problem.file !== OWN_FILE ? problem.file : "";
    if (problem.line != null) {
      place += (place ? ":" : "") + problem.line + (problem.column != null ? ":" + problem.column : "");
    }
    if (problem.path) place += (place ? ": " : "") + problem.path;
    return place;
  }

  function ours(problem) {
    return problem.line != null && (!problem.file || problem.file === OWN_FILE);
  }

  // The problems of the last failed submission, each with the line it is on now: editing
  // above a problem moves it, deleting its line drops it (see follow()).
  let shown = [];  // {problem, line, button}

  function label(item) {
    const place = where(Object.assign({}, item.problem, { line: item.line ?? item.problem.line }));
    return (place ? place + ": " : "") + (item.problem.message || "");
  }

  function mark() {
    marked = new Map();
    for (const item of shown) {
      if (!item.button) continue;
      item.button.textContent = label(item);
      if (item.line == null) {
        item.button.disabled = true;
        item.button.title = "Its line was deleted";
        continue;
      }
      item.button.title = "Go to line " + item.line;
      const at = marked.get(item.line) || [];
      at.push(label(item));
      marked.set(item.line, at);
    }
  }

  function show(message, errors, extra) {
    shown = [];
    list.replaceChildren();
    for (const problem of errors) {
      const element = document.createElement("li");
      const item = { problem, line: ours(problem) ? problem.line : null, button: null };
      if (ours(problem)) {
        item.button = document.createElement("button");
        item.button.type = "button";
        item.button.className = "link";
        item.button.addEventListener("click", () => goTo(item.line, problem.column));
        element.appendChild(item.button);
      } else {
        element.textContent = label(item);
      }
      shown.push(item);
      list.appendChild(element);
    }
    mark();
    messageBox.textContent = message;
    if (extra) messageBox.append(" ", extra);
    problems.hidden = false;
    render();
    const first = shown.find((item) => item.line != null);
    if (first) reveal(first.line, first.problem.column);
    problems.scrollIntoView({ block: "nearest" });
  }

  function clear() {
    shown = [];
    marked = new Map();
    problems.hidden = true;
    list.replaceChildren();
    render();
  }

  const newlines = (text) => text.split("\n").length - 1;
  function lineOf(text, index) { return newlines(text.slice(0, index)) + 1; }
  function lineRange(text, line) {  // [start, end) of a line (1-based) without its newline
    let start = 0;
    for (let n = 1; n < line; n++) {
      const at = text.indexOf("\n", start);
      if (at < 0) return null;
      start = at + 1;
    }
    const end = text.indexOf("\n", start);
    return [start, end < 0 ? text.length : end];
  }

  // The text changed from `before` to `after` (typing, pasting, undo: one changed stretch):
  // move each problem's line along
  function follow(before, after) {
    if (!shown.some((item) => item.line != null) || before === after) return;
    const most = Math.min(before.length, after.length);
    let head = 0;
    while (head < most && before[head] === after[head]) head++;
    let tail = 0;
    while (tail < most - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
    const end = before.length - tail;  // before[head, end) became after[head, after.length - tail)
    const delta = newlines(after.slice(head, after.length - tail)) - newlines(before.slice(head, end));
    for (const item of shown) {
      if (item.line == null) continue;
      const range = lineRange(before, item.line);
      if (!range) { item.line = null; continue; }
      const [start, stop] = range;
      if (start >= end) item.line += delta;                 // wholly after the change
      else if (stop <= head || start < head) continue;      // before it, or edited within
      else if (stop >= end) item.line = lineOf(after, end + after.length - before.length);
      else item.line = null;                                 // deleted
    }
    mark();
  }

  let charWidth = 0;
  function characterWidth() {
    if (!charWidth) {
      const context = document.createElement("canvas").getContext("2d");
      const style = getComputedStyle(area);
      context.font = `${style.fontSize} ${style.fontFamily}`;
      charWidth = context.measureText("0000000000").width / 10 || 8;
    }
    return charWidth;
  }

  // Scroll the text (not the caret) so that line and column are in view
  function reveal(line, column) {
    const top = (line - 1) * LINE_PX;
    if (top < area.scrollTop || top + 2 * LINE_PX > area.scrollTop + area.clientHeight) {
      area.scrollTop = Math.max(0, top - area.clientHeight / 3);
    }
    const x = ((column || 1) - 1) * characterWidth();
    if (x < area.scrollLeft || x + 40 > area.scrollLeft + area.clientWidth) {
      area.scrollLeft = Math.max(0, x - area.clientWidth / 2);
    }
    sync();
  }

  function goTo(line, column) {
    const text = area.value.split("\n");
    const row = Math.min(Math.max(line, 1), text.length);
    let offset = 0;
    for (let i = 0; i < row - 1; i++) offset += text[i].length + 1;
    offset += Math.min(Math.max((column || 1) - 1, 0), text[row - 1].length);
    area.focus({ preventScroll: true });
    area.setSelectionRange(offset, offset);
    reveal(row, column);
    box.scrollIntoView({ block: "nearest" });
  }

  // ----------------------------------------------------------------- submitting
  // The variables' fields that were filled in, as the API's query parameter `vars' (a JSON
  // object): a value that is JSON is sent as such (3, [1, 2], true), any other as text.
  function givenVars() {
    const given = {};
    let any = false;
    for (const field of form.querySelectorAll("[data-var]")) {
      if (field.value.trim() === "") continue;
      try { given[field.dataset.var] = JSON.parse(field.value); }
      catch (e) { given[field.dataset.var] = field.value; }
      any = true;
    }
    return any ? "?vars=" + encodeURIComponent(JSON.stringify(given)) : "";
  }

  // ----------------------------------------------------------------- variables
  // A field per variable with a default value, following the text (a workflow typed or
  // pasted, a variable renamed): the server reads the text and names them. A field that stays
  // keeps what was typed in it; while the text cannot be read, the fields stay as they are.
  const fieldset = document.getElementById("editor-vars");
  let fieldsTimer = null, fieldsAsked = 0;
  function fieldsLater() {
    clearTimeout(fieldsTimer);
    fieldsTimer = setTimeout(refreshFields, 400);
  }

  async function refreshFields() {
    if (!fieldset) return;
    const asked = ++fieldsAsked;
    let result = null;
    try {
      result = await window.steepy.api("POST", "/new/workflow/variables", area.value,
                                       "text/plain");
    } catch (e) { return; }
    if (asked !== fieldsAsked || !result.ok || !Array.isArray(result.data)) return;
    showFields(result.data);
  }

  function showFields(fields) {
    const shown = new Map();
    for (const input of fieldset.querySelectorAll("[data-var]")) {
      shown.set(input.dataset.var, input.closest("label"));
      input.closest("label").remove();
    }
    for (const field of fields) {
      let label = shown.get(field.id);
      if (!label) {
        label = document.createElement("label");
        label.className = "editor-var";
        const name = document.createElement("code");
        name.textContent = field.id;
        const input = document.createElement("input");
        Object.assign(input, { type: "text", name: "var-" + field.id, autocomplete: "off",
                               spellcheck: false });
        input.dataset.var = field.id;
        label.append(name, " ", input);
      }
      label.querySelector("input").placeholder = field.default;
      fieldset.append(label);
    }
    fieldset.hidden = fields.length === 0;
  }

  async function submit() {
    if (sending) return;
    const text = area.value;
    const json = /^\s*[[{]/.test(text);  // the API's own rule for JSON
    sending = true;
    button.disabled = true;
    state.textContent = "Submitting…";
    let result = null;
    try {
      result = await window.steepy.api("POST", "/workflows" + givenVars(), text,
                                       json ? "application/json" : "application/x-yaml");
    } catch (e) {
      show("steepy did not answer: " + (e && e.message || e), []);
    }
    sending = false;
    button.disabled = false;
    state.textContent = "";
    if (!result) return;
    const data = result.data;
    if (result.status === 202 && data && data.id) {
      state.textContent = "Submitted";
      location.href = window.steepy.base + "/workflows/" + encodeURIComponent(data.id);
      return;
    }
    const errors = result.problems;
    let extra = null;
    if (result.status === 401) {
      sessionStorage.setItem(DRAFT, text);  // back here after logging in, with this text
      extra = document.createElement("a");
      extra.href = window.steepy.base + "/login?next=" + encodeURIComponent("/new/workflow");
      extra.textContent = "Log in (your text is kept)";
    }
    const said = window.steepy.message(result);
    show(said + (errors.length && !said.endsWith(":") ? ":" : ""), errors, extra);
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); submit(); });

  const draft = sessionStorage.getItem(DRAFT);
  if (draft !== null) {
    sessionStorage.removeItem(DRAFT);
    area.value = draft;
    lastText = draft;
    state.textContent = "Your text from before the login is back.";
    refreshFields();
  }
  box.classList.add("active");
  button.disabled = false;
  render();
  window.steepyEditor = { clear, goTo, render };
})();
