// The incident log's filters, in place (tooling/site/templates/incident_log.md.j2): a click on a
// value ("layer: nccl (3)") keeps only the rows that carry its tag and says so in the status line;
// a second click, or the line's button, shows every row again. Each filter is a link to its tag's
// section of the tags page (the tag is the link's fragment, tag:layer-nccl), which is where a reader
// without JavaScript, or one who opens it in a new tab, goes. Rows list their tags in data-tags.
(function () {
  "use strict";

  function show(log, tag) {
    var rows = log.querySelectorAll("tbody tr[data-tags]");
    var count = 0;
    rows.forEach(function (row) {
      var keep = !tag || row.getAttribute("data-tags").split(" ").indexOf(tag) >= 0;
      row.hidden = !keep;
      if (keep) count += 1;
    });
    log.querySelectorAll(".log-filters a[href*='#tag:']").forEach(function (link) {
      var on = tag !== null && link.hash.slice(1) === tag;
      link.classList.toggle("active", on);
      if (on) link.setAttribute("aria-current", "true"); else link.removeAttribute("aria-current");
    });
    var status = log.querySelector("[data-filter-status]");
    if (!status) return;
    status.hidden = !tag;
    status.querySelectorAll("[data-filter-count]").forEach(function (text) { text.textContent = String(count); });
    var chosen = log.querySelector(".log-filters a.active");
    status.querySelectorAll("[data-filter-tag]").forEach(function (text) {
      text.textContent = chosen ? chosen.textContent.replace(/\s*\(\d+\)$/, "") : "";  // its count is said apart
    });
  }

  function wire() {
    document.querySelectorAll("[data-incident-log]").forEach(function (log) {
      if (log.hasAttribute("data-filters-wired")) return;
      log.setAttribute("data-filters-wired", "");
      log.addEventListener("click", function (event) {
        var link = event.target.closest(".log-filters a[href*='#tag:']");
        if (link && !event.ctrlKey && !event.metaKey && !event.shiftKey && event.button === 0) {
          event.preventDefault();
          var tag = decodeURIComponent(link.hash.slice(1));
          show(log, link.classList.contains("active") ? null : tag);
          return;
        }
        if (event.target.closest("[data-filter-clear]")) show(log, null);
      });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", wire);
  } else {
    wire();
  }
  if (typeof document$ !== "undefined") document$.subscribe(wire);
})();
