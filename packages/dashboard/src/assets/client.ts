/**
 * The browser script, served from /assets/app.js: theme toggle, auto-refresh with a visible pause,
 * write buttons and forms (with the CSRF token; a form's JSON fields parsed before it is sent), and the
 * dead-letter bulk actions with their dry-run count.
 * Plain ES2020 so it runs as is; the pages work without it for reading.
 */
export const CLIENT_JS = String.raw`(function () {
  "use strict";
  var root = document.documentElement;
  var THEME_KEY = "soniq-theme";
  function applyTheme(t) {
    if (t === "light" || t === "dark") root.setAttribute("data-theme", t); else root.removeAttribute("data-theme");
  }
  try { applyTheme(localStorage.getItem(THEME_KEY)); } catch (e) {}

  function $(sel, el) { return (el || document).querySelector(sel); }
  function $all(sel, el) { return Array.prototype.slice.call((el || document).querySelectorAll(sel)); }
  function csrf() { var m = $("meta[name=csrf-token]"); return m ? m.getAttribute("content") : ""; }
  function flash(text, kind) {
    var f = $("#flash"); if (!f) return;
    f.className = "banner " + (kind || "ok"); f.textContent = text;
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": csrf() },
      body: JSON.stringify(body || {})
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (json) {
        if (!res.ok) throw new Error((json.error && json.error.message) || ("HTTP " + res.status));
        return json;
      });
    });
  }

  var paused = false, timer = null;
  function refreshMs() { return Number(document.body.getAttribute("data-refresh-ms")) || 5000; }
  function busy() {
    var main = $("#main");
    if (!main || main.getAttribute("data-refresh") === "off") return true;
    if ($all("input[data-select]:checked").length > 0 || $("#select-all-matching:checked")) return true;
    if ($(".confirm")) return true;
    if ($all("form[data-post] input, form[data-post] textarea").some(edited)) return true;
    var a = document.activeElement;
    return !!(a && main.contains(a) && (a.tagName === "INPUT" || a.tagName === "SELECT" || a.tagName === "TEXTAREA"));
  }
  function refreshNow() {
    return fetch(location.href, { credentials: "same-origin", headers: { "x-soniq-refresh": "1" } })
      .then(function (res) { return res.ok ? res.text() : null; })
      .then(function (text) {
        if (text === null || busy()) return;
        var doc = new DOMParser().parseFromString(text, "text/html");
        var next = doc.getElementById("main"), main = $("#main");
        if (next && main) { main.innerHTML = next.innerHTML; bind(main); }
        var s = $("#refresh-status"); if (s) s.textContent = "updated " + new Date().toLocaleTimeString();
      }).catch(function () {});
  }
  function schedule() {
    clearTimeout(timer);
    if (paused) return;
    timer = setTimeout(function () {
      if (!document.hidden && !busy()) refreshNow().then(schedule); else schedule();
    }, refreshMs());
  }
  function setPaused(p) {
    paused = p;
    var b = $("#refresh-toggle");
    if (b) { b.setAttribute("aria-pressed", p ? "true" : "false"); b.textContent = p ? "Resume auto-refresh" : "Pause auto-refresh"; }
    var s = $("#refresh-status"); if (s) s.textContent = p ? "auto-refresh paused" : "auto-refresh every " + Math.round(refreshMs() / 1000) + " s";
    try { localStorage.setItem("soniq-refresh-paused", p ? "1" : "0"); } catch (e) {}
    schedule();
  }

  function armed(button) {
    var text = button.getAttribute("data-confirm");
    if (!text || button.getAttribute("data-armed") === "1") return true;
    button.setAttribute("data-armed", "1");
    button.setAttribute("data-label", button.textContent);
    button.textContent = text;
    setTimeout(function () {
      if (button.getAttribute("data-armed") === "1") { button.removeAttribute("data-armed"); button.textContent = button.getAttribute("data-label"); }
    }, 6000);
    return false;
  }

  function onPost(button) {
    if (!armed(button)) return;
    button.disabled = true;
    post(button.getAttribute("data-post"), JSON.parse(button.getAttribute("data-body") || "{}"))
      .then(function (json) {
        flash(button.getAttribute("data-done") || "Done.", "ok");
        var go = button.getAttribute("data-redirect");
        if (go === "job" && json.jobId) location.href = document.body.getAttribute("data-base") + "/jobs/" + json.jobId;
        else if (go) location.href = go; else refreshNow();
      })
      .catch(function (err) { flash(err.message, "bad"); button.disabled = false; });
  }

  function edited(el) {
    if (el.type === "radio" || el.type === "checkbox") return el.checked !== el.defaultChecked;
    return el.value !== el.defaultValue;
  }

  // A form[data-post] is sent as a JSON object of its named fields: empty ones left out, a data-json one parsed.
  function formBody(form) {
    var body = {};
    $all("input[name], textarea[name], select[name]", form).forEach(function (el) {
      if ((el.type === "radio" || el.type === "checkbox") && !el.checked) return;
      var v = el.value;
      if (v.trim() === "") return;
      if (!el.hasAttribute("data-json")) { body[el.name] = v.trim(); return; }
      try { body[el.name] = JSON.parse(v); }
      catch (e) { throw new Error((el.getAttribute("data-label") || el.name) + " is not valid JSON: " + e.message); }
    });
    return body;
  }

  function signalOutcome(res) {
    var name = "Signal \u201c" + res.name + "\u201d";
    if (res.status === "duplicate") return ["A signal with this key was sent before: nothing changed.", "warn"];
    if (res.deadLetter) return [name + " stored for the dead letter: its replay carries it.", "ok"];
    if (res.woke) return [name + " delivered: the job was waiting for it and is due now.", "ok"];
    return [name + " stored: the job does not wait for it yet; its next wait on that name takes it.", "ok"];
  }

  function onPostForm(form, event) {
    event.preventDefault();
    var body;
    try { body = formBody(form); } catch (err) { flash(err.message, "bad"); return; }
    var button = $("button[type=submit]", form);
    if (button) button.disabled = true;
    post(form.getAttribute("data-post"), body)
      .then(function (json) {
        var said = form.getAttribute("data-outcome") === "signal" ? signalOutcome(json) : [form.getAttribute("data-done") || "Done.", "ok"];
        flash(said[0], said[1]);
        var go = form.getAttribute("data-redirect");
        if (go === "job" && json.jobId) location.href = document.body.getAttribute("data-base") + "/jobs/" + json.jobId;
        else if (go) location.href = go;
        else { form.reset(); if (button) button.disabled = false; refreshNow(); }
      })
      .catch(function (err) { flash(err.message, "bad"); if (button) button.disabled = false; });
  }

  function bulkBody(form) {
    if ($("#select-all-matching", form) && $("#select-all-matching", form).checked) {
      return { filter: JSON.parse(form.getAttribute("data-filter") || "{}"), all: true };
    }
    var ids = $all("input[data-select]:checked", form).map(function (i) { return i.value; });
    return ids.length ? { ids: ids } : null;
  }

  function onBulk(button) {
    var form = button.closest("form"), action = button.getAttribute("data-bulk");
    var body = bulkBody(form);
    if (!body) { flash("Select dead letters first, or tick \"all matching\".", "warn"); return; }
    var base = document.body.getAttribute("data-base") + "/api/dead-letters/" + action + "-where";
    body.dryRun = true;
    post(base, body).then(function (dry) {
      var old = $(".confirm"); if (old) old.remove();
      var box = document.createElement("div");
      box.className = "confirm"; box.setAttribute("role", "alertdialog"); box.setAttribute("aria-live", "assertive");
      var p = document.createElement("p");
      p.textContent = "Would " + action + " " + dry.count + " dead-letter job(s).";
      var yes = document.createElement("button");
      yes.type = "button"; yes.className = action === "purge" ? "danger" : ""; yes.textContent = "Confirm " + action + " of " + dry.count;
      var no = document.createElement("button");
      no.type = "button"; no.className = "secondary"; no.textContent = "Cancel";
      box.appendChild(p); box.appendChild(yes); box.appendChild(document.createTextNode(" ")); box.appendChild(no);
      form.insertBefore(box, form.firstChild);
      yes.focus();
      no.addEventListener("click", function () { box.remove(); });
      yes.addEventListener("click", function () {
        yes.disabled = true; body.dryRun = false;
        post(base, body).then(function (res) {
          box.remove();
          var notes = [];
          if (res.refused) notes.push(res.refused + " refused by enqueue (left in place)");
          if (res.notFound) notes.push(res.notFound + " no longer dead letters");
          var note = notes.length ? "; " + notes.join(", ") : "";
          flash((action === "replay" ? "Replayed " : "Purged ") + res.count + " dead-letter job(s)" + note + ".", note ? "warn" : "ok");
          $all("input[data-select]:checked").forEach(function (i) { i.checked = false; });
          var all = $("#select-all-matching"); if (all) all.checked = false;
          refreshNow();
        }).catch(function (err) { box.remove(); flash(err.message, "bad"); });
      });
    }).catch(function (err) { flash(err.message, "bad"); });
  }

  function limit(v) {
    v = (v || "").trim();
    if (v === "") return undefined;
    if (v === "none") return null;
    return Number(v);
  }
  function onConfigure(form, event) {
    event.preventDefault();
    var f = form.elements, body = {};
    var c = limit(f.concurrency.value), g = limit(f.groupConcurrency.value), m = limit(f.rateMax.value);
    if (c !== undefined) body.concurrency = c;
    if (g !== undefined) body.groupConcurrency = g;
    if (m !== undefined) body.rateLimit = m === null ? null : { max: m, perMs: limit(f.ratePerMs.value) || 60000 };
    post(form.getAttribute("data-configure"), body)
      .then(function () { flash("Limits saved.", "ok"); refreshNow(); })
      .catch(function (err) { flash(err.message, "bad"); });
  }

  function bind(scope) {
    $all("form[data-configure]", scope).forEach(function (f) { f.addEventListener("submit", function (e) { onConfigure(f, e); }); });
    $all("form[data-post]", scope).forEach(function (f) { f.addEventListener("submit", function (e) { onPostForm(f, e); }); });
    $all("button[data-post]", scope).forEach(function (b) { b.addEventListener("click", function () { onPost(b); }); });
    $all("button[data-bulk]", scope).forEach(function (b) { b.addEventListener("click", function () { onBulk(b); }); });
    var page = $("#select-page", scope);
    if (page) page.addEventListener("change", function () {
      $all("input[data-select]").forEach(function (i) { i.checked = page.checked; });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var t = $("#theme-toggle");
    if (t) {
      var label = function () { t.textContent = "Theme: " + (root.getAttribute("data-theme") || "auto"); };
      label();
      t.addEventListener("click", function () {
        var cur = root.getAttribute("data-theme") || "auto";
        var next = cur === "auto" ? "dark" : cur === "dark" ? "light" : "auto";
        applyTheme(next); try { localStorage.setItem(THEME_KEY, next); } catch (e) {}
        label();
      });
    }
    var r = $("#refresh-toggle");
    if (r) r.addEventListener("click", function () { setPaused(!paused); });
    var stored = null; try { stored = localStorage.getItem("soniq-refresh-paused"); } catch (e) {}
    bind(document);
    setPaused(stored === "1");
  });
})();
`;
