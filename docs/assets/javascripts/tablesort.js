// Make every plain table in page content sortable by clicking its headings (mkdocs-material
// re-renders pages on instant navigation, so hook its document$ observable).
document$.subscribe(function () {
  document.querySelectorAll("article table:not([class])").forEach(function (table) {
    new Tablesort(table);
  });
});
