// The home page's lookup: from an error line, or its words, to the failure mode, its ladder step and
// its past incidents. The build embeds the catalogue's recognisers as JSON (tooling/site/lookup.py)
// and writes one answer per failure mode, hidden, in the page's language; this script names the
// modes a line shows, as tooling.catalogue.recognise does, and shows their answers. The codes a line
// quotes (Xid, errno, exit status), the recognisers, and the codes it writes by number (read as their
// names) decide, the first specific mode in catalogue order winning; where none does, the modes whose
// keywords the words use are suggested.
// tests/test_lookup_data.py runs the same steps in Python. Nothing typed is ever set as HTML.
(function () {
  "use strict";

  var SHOWN = 3; // answers at most: the first is the likeliest

  function compile(matchers) {
    var out = [];
    matchers.regex.forEach(function (source) { out.push(new RegExp(source, "im")); });
    matchers.words.forEach(function (words) {
      out.push({ test: function (text) {
        var lower = text.toLowerCase();
        return words.every(function (word) { return lower.indexOf(word) >= 0; });
      } });
    });
    return out;
  }

  function prepare(data) {
    data.modes.forEach(function (mode, rank) {
      mode.rank = rank;
      mode.lines = compile(mode.recognisers);
      mode.words = compile(mode.keywords);
    });
    data.byId = {};
    data.modes.forEach(function (mode) { data.byId[mode.id] = mode; });
    return data;
  }

  // Calls found(match) for each match of an expression ({source, flags}) in the text, in order.
  function each(expression, text, found) {
    var pattern = new RegExp(expression.source, expression.flags);
    var match;
    while ((match = pattern.exec(text)) !== null) {
      found(match);
      if (match[0] === "") pattern.lastIndex++;
    }
  }

  function all(source, flags, text) { // the number of each match: its first group that took part
    var found = [];
    each({ source: source, flags: flags }, text, function (match) {
      for (var i = 1; i < match.length; i++) {
        if (match[i] !== undefined) { found.push(parseInt(match[i], 10)); break; }
      }
    });
    return found;
  }

  function own(table, key) { // a table's entry, never an Object's inherited one ("constructor")
    return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
  }

  // The codes a line writes by number, as [what to show, the name the recognisers know]
  // (tooling.catalogue.recognise.Recogniser.line): a CUDA runtime error by its number, a glog CHECK
  // of a call against its library's success code, a signal by its number and description; then the
  // error NCCL's return trace passes up, which the scan reads from NCCL's INFO lines.
  function numbered(data, text) {
    var tables = data.numbered;
    var named = [];
    each(tables.cuda.expression, text, function (match) {
      var number = parseInt(match[1] || match[2], 10);
      var name = own(tables.cuda.names, String(number));
      if (name) named.push(["CUDA error " + number + " (" + name + ")", name]);
    });
    each(tables.checked.expression, text, function (match) {
      // the value on the other side of ==: the one the call got instead
      [[match[2], match[3]], [match[1], match[4]]].forEach(function (side) {
        var success = side[0].trim();
        var value = parseInt(side[1], 10);
        var name = own(own(tables.checked.names, success) || {}, String(value));
        if (name) named.push([success + " check: " + value + " is " + name, name]);
      });
    });
    var groups = tables.signal.expression.groups;
    each(tables.signal.expression, text, function (match) {
      var number = parseInt(match[groups.number] || match[groups.last], 10);
      var description = (match[groups.after] || match[groups.before] || "").trim().toLowerCase();
      var signal = own(tables.signal.names, String(number)); // [name, the C library's description]
      if (signal && description.indexOf(signal[1]) === 0) named.push(["signal " + number + " (" + signal[0] + ")", signal[0]]);
    });
    each(tables.returned.expression, text, function (match) {
      var name = own(tables.returned.names, match[1]);
      if (name) named.push(["NCCL returned " + match[1] + " (" + name + ")", name]);
    });
    return named;
  }

  // The codes of a line that name a mode by themselves (tooling.catalogue.codes.identifying).
  function identifying(data, text) {
    var lower = text.toLowerCase();
    var errnos = all(data.errno, "gi", text);
    (text.match(/\bE[A-Z]{2,12}\b/g) || []).forEach(function (name) {
      if (Object.prototype.hasOwnProperty.call(data.errnoNames, name)) errnos.push(data.errnoNames[name]);
    });
    Object.keys(data.errnoMessages).forEach(function (message) {
      if (lower.indexOf(message) >= 0) errnos.push(data.errnoMessages[message]);
    });
    var exits = all(data.exit, "gi", text).map(function (value) { return value < 0 ? 128 - value : value; });
    return { xid: all(data.xid, "gi", text), errno: errnos, exit: exits };
  }

  // The mode a line is (null: none), and what decided it: "Xid 79", "signal 6 (SIGABRT)", or "" for
  // a recogniser.
  function recognised(data, text) {
    text = asserted(data, text);
    var found = identifying(data, text);
    var fits = [];
    var seen = {};
    function fit(mode, via) {
      if (!mode || seen[mode.id]) return;
      seen[mode.id] = true;
      fits.push({ mode: mode, via: via });
    }
    [["xid", "Xid "], ["errno", "errno "], ["exit", "exit "]].forEach(function (kind) {
      found[kind[0]].forEach(function (code) { fit(data.byId[data.owned[kind[0]][String(code)]], kind[1] + code); });
    });
    data.modes.forEach(function (mode) {
      if (mode.lines.some(function (p) { return p.test(text); })) fit(mode, "");
    });
    numbered(data, text).forEach(function (code) { // as by its name
      data.modes.forEach(function (mode) {
        if (mode.lines.some(function (p) { return p.test(code[1]); })) fit(mode, code[0]);
      });
    });
    fits.sort(function (a, b) { return (a.mode.generic - b.mode.generic) || (a.mode.rank - b.mode.rank); });
    return fits.length ? fits[0] : null;
  }

  // A line up to a clause that lists the causes it might have (recognise.asserted): Ray's "There are
  // some potential root causes. (1) ... killed by SIGKILL by OOM killer" names none of them.
  function asserted(data, text) {
    var found = new RegExp(data.candidates, "i").exec(text);
    return found ? text.slice(0, found.index) : text;
  }

  // The words without the clauses that clear something of blame (recognise.affirmed).
  function affirmed(data, text) {
    var cleared = new RegExp(data.cleared, "i");
    if (!cleared.test(text)) return text;
    return text.replace(new RegExp(data.clause, "g"), function (clause) { return cleared.test(clause) ? "" : clause; });
  }

  // The modes whose keywords a description uses, specific ones first (recognise.suggest).
  function suggested(data, text) {
    var words = affirmed(data, text.normalize("NFC"));
    return data.modes.filter(function (mode) { return mode.words.some(function (p) { return p.test(words); }); })
      .sort(function (a, b) { return (a.generic - b.generic) || (a.rank - b.rank); });
  }

  // What the lookup shows for a text: [{mode, how}] with how "code", "line" or "words".
  function lookup(data, text) {
    var shown = [];
    var line = text.trim() ? recognised(data, text) : null;
    if (line) shown.push({ mode: line.mode, how: line.via ? "code" : "line", via: line.via });
    if (text.trim()) {
      suggested(data, text).forEach(function (mode) {
        if (!shown.some(function (s) { return s.mode === mode; })) shown.push({ mode: mode, how: "words", via: "" });
      });
    }
    return shown.slice(0, SHOWN);
  }

  function show(form, data) {
    var root = form.closest(".lookup");
    var results = root.querySelector(".lookup-results");
    var status = root.querySelector(".lookup-status");
    var text = form.querySelector("input").value;
    var found = lookup(data, text);
    results.textContent = "";
    found.forEach(function (item) {
      var answer = root.querySelector('.lookup-answers [data-mode="' + item.mode.id + '"]');
      if (!answer) return;
      var copy = answer.cloneNode(true);
      var how = copy.querySelector(".lookup-how");
      if (how) how.textContent = form.getAttribute("data-" + item.how).replace("{code}", item.via);
      results.appendChild(copy);
    });
    if (!text.trim()) status.textContent = "";
    else status.textContent = form.getAttribute(found.length ? "data-found" : "data-none").replace("{count}", found.length);
  }

  function start() {
    document.querySelectorAll("form.lookup-form").forEach(function (form) {
      var source = form.closest(".lookup").querySelector("script.lookup-data");
      if (!source) return;
      var data = null;
      function run(event) {
        if (event) event.preventDefault();
        data = data || prepare(JSON.parse(source.textContent));
        show(form, data);
      }
      form.addEventListener("submit", run);
      form.querySelector("input").addEventListener("input", function () { run(null); });
      if (form.querySelector("input").value) run(null);
    });
  }

  window.playbookLookup = function (text) { // for tests: the mode ids a text gets, in their order
    var source = document.querySelector(".lookup script.lookup-data");
    var data = prepare(JSON.parse(source.textContent));
    return lookup(data, text).map(function (item) { return item.mode.id; });
  };

  window.playbookRecognised = function (text) { // for tests: [mode id, what decided it], or null
    var source = document.querySelector(".lookup script.lookup-data");
    var found = recognised(prepare(JSON.parse(source.textContent)), text);
    return found ? [found.mode.id, found.via] : null;
  };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
