// Freshness at view time: the stale banners and who is on call, recomputed with the reader's
// clock. A page is read hours or days after it was built; the build wrote its text for its own
// "now" (what a reader without JavaScript keeps seeing) and, beside it, the times that text came
// from (tooling/site/freshness.py). Record text is only ever set as textContent, never as HTML.
(function () {
  "use strict";

  var HOUR = 60 * 60 * 1000;

  // [data-updated-at]: shown with the page's age in whole hours once it is older than
  // data-stale-after-hours; hidden (and its banner no longer marked stale) while it is not.
  function refreshStaleness(element, now) {
    var updated = Date.parse(element.getAttribute("data-updated-at"));
    var limit = Number(element.getAttribute("data-stale-after-hours")) * HOUR;
    if (isNaN(updated) || isNaN(limit)) return;
    var age = now - updated;
    var stale = age > limit;
    element.hidden = !stale;
    element.querySelectorAll(".admonition").forEach(function (banner) {
      banner.classList.toggle("stale", stale);
    });
    element.querySelectorAll("[data-stale-hours]").forEach(function (hours) {
      hours.textContent = String(Math.floor(age / HOUR));
    });
  }

  // The shift holding the pager at `now` and the one after it, as tooling/analysis/runs.py
  // chooses them; `shifts` come sorted by start.
  function onCall(shifts, now) {
    var current = null;
    shifts.forEach(function (shift) {
      if (!current && shift.start <= now && now < shift.end) current = shift;
    });
    var after = current ? current.end : now;
    var next = null;
    shifts.forEach(function (shift) {
      if (!next && shift !== current && shift.start >= after) next = shift;
    });
    return { now: current, next: next };
  }

  // [data-oncall]: the JSON list of shifts with the text of each slot, already worded by the
  // build; its [data-oncall-slot=now|next] children get the text of the shift that fills them.
  function refreshOnCall(element, now) {
    var shifts = JSON.parse(element.getAttribute("data-oncall")).map(function (shift) {
      return { start: Date.parse(shift.start), end: Date.parse(shift.end), now: shift.now, next: shift.next };
    });
    var nobody = element.getAttribute("data-oncall-nobody");
    var holders = onCall(shifts, now);
    element.querySelectorAll("[data-oncall-slot]").forEach(function (slot) {
      var which = slot.getAttribute("data-oncall-slot");
      var shift = holders[which];
      slot.textContent = shift ? shift[which] : nobody;
    });
  }

  function refresh() {
    var now = Date.now();
    document.querySelectorAll("[data-updated-at][data-stale-after-hours]").forEach(function (element) {
      refreshStaleness(element, now);
    });
    document.querySelectorAll("[data-oncall]").forEach(function (element) {
      refreshOnCall(element, now);
    });
  }

  // On a normal page load; and, should instant navigation be turned on, on every page
  // mkdocs-material swaps in (document$ is its observable of loaded documents).
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", refresh);
  } else {
    refresh();
  }
  if (typeof document$ !== "undefined") document$.subscribe(refresh);
  // A tab left open crosses shift boundaries and the 24-hour line without a reload.
  setInterval(refresh, 60 * 1000);
})();
