// A code block wider than the screen scrolls sideways, and a keyboard reaches it only when it can
// take focus. mkdocs-material makes such a block focusable only where the device can hover (a
// mouse), and removes the tabindex elsewhere, so on a phone the block is a scrollable region no
// keyboard (or switch access) can scroll: axe's scrollable-region-focusable. Here every block that
// overflows is focusable on every device, and stays so when material takes the tabindex away.
(() => {
  const mark = (code) => {
    const scrolls = code.scrollWidth > code.clientWidth;
    if (scrolls && code.getAttribute("tabindex") !== "0") code.setAttribute("tabindex", "0");
  };
  const resized = new ResizeObserver((entries) => entries.forEach((entry) => mark(entry.target)));
  const retabbed = new MutationObserver((records) => records.forEach((record) => mark(record.target)));
  for (const code of document.querySelectorAll(".md-typeset pre > code")) {
    mark(code);
    resized.observe(code);
    retabbed.observe(code, { attributes: true, attributeFilter: ["tabindex"] });
  }
})();
