// Freshness at view time: the stale banners, who is on call, how old a run's heartbeat is and
// which action items are overdue, recomputed with the reader's clock. A page is read hours or
// days after it was built; the build wrote its text for its own "now" (what a reader without
// JavaScript keeps seeing) and, beside it, the times that text came from
// (tooling/site/freshness.py). Every word it writes is the page's: the banners and on-call slots
// are worded by the build in the page's language, and durations use the English words below
// unless the page hands over its own (data-elapsed-words, the Korean edition). Record text is only
// ever set as textContent, never as HTML.
(function () {
  "use strict";

  var MINUTE = 60 * 1000;
  var HOUR = 60 * MINUTE;
  var CLOCK_SLACK = 5 * MINUTE;

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

  // The English words for a duration, as tooling/site/filters.py's ELAPSED has them; a page of
  // another edition carries its own in data-elapsed-words (the same keys, from its catalogue).
  var ELAPSED = {
    under: "under 1 min", min: "%(minutes)s min", h: "%(hours)s h", h_min: "%(hours)s h %(minutes)s min",
    days: "%(days)s days", days_h: "%(days)s days %(hours)s h"
  };

  // A duration to the minute, word for word as tooling/site/filters.py's `elapsed` writes it.
  function elapsed(ms, words) {
    var minutes = Math.max(Math.floor(ms / MINUTE), 0);
    var hours = Math.floor(minutes / 60);
    var days = Math.floor(minutes / 1440);
    var key;
    if (minutes < 1) key = "under";
    else if (minutes < 60) key = "min";
    else if (hours < 48) key = minutes % 60 ? "h_min" : "h";
    else key = hours % 24 ? "days_h" : "days";
    var values = { minutes: minutes % 60, hours: hours < 48 ? hours : hours % 24, days: days };
    return (words[key] || ELAPSED[key]).replace(/%\((\w+)\)s/g, function (all, name) {
      return String(values[name]);
    });
  }

  // The words an element's page gives for durations (on it or around it), or the English ones.
  function elapsedWords(element) {
    var holder = element.closest("[data-elapsed-words]");
    try {
      return JSON.parse((holder && holder.getAttribute("data-elapsed-words")) || "{}") || {};
    } catch (error) {
      return {};
    }
  }

  // [data-heartbeat-at]: a run's feed. Its [data-heartbeat-age] and [data-stalled-for] get the
  // heartbeat's age; with data-stall-after-minutes (a live run) it is marked "stalled" (red) and
  // its [data-stalled-alarm] shown once the heartbeat is that old or older: the stall rule of
  // tooling/records/runs.py (stalled), which the build applied with its own clock.
  // A heartbeat ahead of the reader's clock by more than the clocks' slack (CLOCK_SLACK of
  // tooling/records/clock.py) has no age by this clock: the build's words stay.
  function refreshFeed(element, now) {
    var beat = Date.parse(element.getAttribute("data-heartbeat-at"));
    if (isNaN(beat) || beat - now > CLOCK_SLACK) return;
    var age = Math.max(now - beat, 0);
    var words = elapsedWords(element);
    element.querySelectorAll("[data-heartbeat-age], [data-stalled-for]").forEach(function (text) {
      text.textContent = elapsed(age, words);
    });
    var limit = Number(element.getAttribute("data-stall-after-minutes")) * MINUTE;
    if (!element.hasAttribute("data-stall-after-minutes") || isNaN(limit)) return;
    var stalled = age >= limit;
    element.classList.toggle("stalled", stalled);
    element.querySelectorAll("[data-stalled-alarm]").forEach(function (alarm) {
      alarm.hidden = !stalled;
    });
  }

  // [data-run-base]: a line of the status strip (tooling/analysis/status.py). Its [data-run-state]
  // names the run's state: "stalled" while refreshFeed (run first) has the line marked stalled,
  // unless the run ended; else the state the build gave without the stall rule (data-run-base).
  // Words from data-run-words, the page's; the state is also the word's class, for its colour.
  function refreshState(element) {
    var words;
    try {
      words = JSON.parse(element.getAttribute("data-run-words") || "{}") || {};
    } catch (error) {
      return;
    }
    var base = element.getAttribute("data-run-base");
    var state = base !== "ended" && element.classList.contains("stalled") ? "stalled" : base;
    if (!words[state]) return;
    element.setAttribute("data-run-state-now", state);
    element.querySelectorAll("[data-run-state]").forEach(function (word) {
      word.textContent = words[state];
      word.setAttribute("data-run-state", state);
    });
  }

  // [data-age-since]: the time since a moment (a checkpoint's save), to the minute.
  function refreshSince(element, now) {
    var since = Date.parse(element.getAttribute("data-age-since"));
    if (isNaN(since) || since - now > CLOCK_SLACK) return;
    element.textContent = elapsed(Math.max(now - since, 0), elapsedWords(element));
  }

  // [data-count-of]: how many of the elements its selector names are shown (an action item's
  // "overdue" flag, which refreshStaleness shows once the reader's clock is past its due day); its
  // [data-count-holder] (the action board's alert) is shown while one of its counts is not 0.
  function refreshCounts() {
    document.querySelectorAll("[data-count-of]").forEach(function (count) {
      var shown = 0;
      document.querySelectorAll(count.getAttribute("data-count-of")).forEach(function (element) {
        if (!element.hidden) shown += 1;
      });
      count.textContent = String(shown);
    });
    document.querySelectorAll("[data-count-holder]").forEach(function (holder) {
      var counts = holder.querySelectorAll("[data-count-of]");
      holder.hidden = !Array.prototype.some.call(counts, function (count) { return count.textContent !== "0"; });
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
    document.querySelectorAll("[data-heartbeat-at]").forEach(function (element) {
      refreshFeed(element, now);
    });
    document.querySelectorAll("[data-run-base]").forEach(refreshState);
    document.querySelectorAll("[data-age-since]").forEach(function (element) {
      refreshSince(element, now);
    });
    refreshCounts();  // after refreshStaleness, which shows the overdue flags
  }

  // On a normal page load; and, should instant navigation be turned on, on every page
  // mkdocs-material swaps in (document$ is its observable of loaded documents).
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", refresh);
  } else {
    refresh();
  }
  if (typeof document$ !== "undefined") document$.subscribe(refresh);
  // A tab left open crosses shift boundaries, the 24-hour line and a stall without a reload.
  setInterval(refresh, 60 * 1000);
})();
