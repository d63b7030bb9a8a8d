// kiln dashboard: live campaign progress over Server-Sent Events and
// confirmation of destructive actions. No framework, no build step.
(function () {
  "use strict";
  function text(id, v) { var e = document.getElementById(id); if (e) e.textContent = String(v); }

  document.querySelectorAll("form.confirm").forEach(function (f) {
    f.addEventListener("submit", function (ev) {
      if (!window.confirm(f.dataset.confirm || "Are you sure?")) ev.preventDefault();
    });
  });

  var live = document.getElementById("live");
  if (!live || !live.dataset.events || !window.EventSource) return;
  var statsURL = live.dataset.stats, lastStats = 0, timer = null, lastDone = -1;
  function refreshStats() {
    timer = null; lastStats = Date.now();
    fetch(statsURL, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error("stats: HTTP " + r.status);
      return r.text();
    }).then(function (html) {
      var box = document.getElementById("stats"); if (box) box.innerHTML = html;
    }).catch(function (err) { text("live-status", "figures not refreshed: " + err.message); });
  }
  function scheduleStats() {
    if (timer) return;
    var wait = Math.max(0, 3000 - (Date.now() - lastStats));
    timer = setTimeout(refreshStats, wait);
  }
  var es = new EventSource(live.dataset.events);
  es.addEventListener("progress", function (ev) {
    var p = JSON.parse(ev.data);
    text("live-done", p.done); text("live-total", p.total); text("live-pass", p.pass);
    text("live-fail", p.fail); text("live-pending", p.pending); text("live-task-faults", p.task_faults); text("live-tokens", p.tokens);
    text("live-round", p.round); text("state", p.state); text("live-status", "live · " + new Date(p.time).toLocaleTimeString());
    var st = document.getElementById("state"); if (st) st.className = "state state-" + p.state;
    if (p.message !== undefined) text("note", p.message);
    var bar = document.getElementById("live-progress"); if (bar) { bar.max = p.total || 1; bar.value = p.done; }
    if (p.done !== lastDone) { lastDone = p.done; scheduleStats(); }
  });
  es.addEventListener("end", function () {
    es.close(); text("live-status", "finished");
    var c = document.getElementById("cancel"); if (c && c.form) c.form.hidden = true;
    refreshStats();
  });
  es.onerror = function () { text("live-status", "reconnecting…"); };
})();
