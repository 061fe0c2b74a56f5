// Bulk decisions on /clusters/ and /review/: checking clusters (x, A), the scope of the
// action (the checked clusters, or all that match the filter), C confirms and R marks for
// review, u undoes the bulk action just finished; the list reloads once its job is done.
// On /clusters/, j/k move a row cursor and o opens the row's cluster. Every part is an
// ordinary form that works without this file.
(function () {
  "use strict";

  var CURRENT = "current";

  function form() { return document.getElementById("bulk-form"); }

  function boxes() {
    return Array.prototype.slice.call(document.querySelectorAll('input[form="bulk-form"][name="doc"]'));
  }

  function updateCount() {
    var bulkForm = form();
    if (!bulkForm) return;
    var checked = boxes().filter(function (box) { return box.checked; }).length;
    var label = bulkForm.querySelector("[data-selected-count]");
    if (label) {
      label.textContent = (label.dataset.template || "{n}").replace("{n}", String(checked));
    }
    var pageBox = document.querySelector("[data-select-page]");
    if (pageBox) {
      var all = boxes();
      pageBox.checked = all.length > 0 && checked === all.length;
      pageBox.indeterminate = checked > 0 && checked < all.length;
    }
    if (checked > 0) {
      var selected = bulkForm.querySelector('input[name="scope"][value="selected"]');
      if (selected) selected.checked = true;
    }
  }

  function selectPage(on) {
    boxes().forEach(function (box) { box.checked = on; });
    updateCount();
  }

  function submit(action) {
    var bulkForm = form();
    if (!bulkForm) return;
    var button = bulkForm.querySelector('button[name="action"][value="' + action + '"]');
    // A click, not requestSubmit(button): htmx sends the clicked button's name and value.
    if (button) button.click();
  }

  // The row cursor: on /review/ the selected item (review.js moves it), on /clusters/ a
  // row of the table that j/k move.
  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("table.clusters tbody tr"));
  }

  function currentRow() {
    var item = document.querySelector(".review-item.selected");
    if (item) return item;
    return document.querySelector("table.clusters tbody tr." + CURRENT);
  }

  function moveCursor(step) {
    var list = rows();
    if (!list.length) return;
    var index = list.indexOf(document.querySelector("table.clusters tbody tr." + CURRENT));
    index = index < 0 ? 0 : Math.max(0, Math.min(index + step, list.length - 1));
    list.forEach(function (row, n) {
      row.classList.toggle(CURRENT, n === index);
      if (n === index) row.setAttribute("aria-current", "true"); else row.removeAttribute("aria-current");
    });
    list[index].scrollIntoView({ block: "nearest" });
  }

  function toggleCurrent() {
    var row = currentRow();
    var box = row ? row.querySelector('input[form="bulk-form"][name="doc"]') : null;
    if (!box) return;
    box.checked = !box.checked;
    updateCount();
  }

  function openCurrent() {
    var row = document.querySelector("table.clusters tbody tr." + CURRENT);
    var link = row ? row.querySelector("a.doc-id") : null;
    if (link) window.location.assign(link.href);
  }

  function undoBulk() {
    var undo = document.querySelector('#bulk-status form[data-action="bulk-undo"]');
    if (!undo) return false;
    if (undo.requestSubmit) undo.requestSubmit(); else undo.submit();
    return true;
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.matches && target.matches("[data-select-page]")) {
      selectPage(target.checked);
    } else if (target.matches && target.matches('input[form="bulk-form"][name="doc"]')) {
      updateCount();
    }
  });

  // Keys go to text fields; on a checkbox, radio or button the shortcuts still work.
  function typing(target) {
    if (!target) return false;
    if (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName)) return true;
    return target.tagName === "INPUT" && !/^(checkbox|radio|submit|button)$/.test(target.type);
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (typing(event.target)) return;
    var onClusters = rows().length > 0;
    switch (event.key) {
      case "x": if (!form()) return; toggleCurrent(); break;
      case "A": if (!form()) return; selectPage(!boxes().every(function (b) { return b.checked; })); break;
      case "C": if (!form()) return; submit("confirm"); break;
      case "R": if (!form()) return; submit("flag_for_review"); break;
      case "u": if (!undoBulk()) return; break;
      case "j": if (!onClusters) return; moveCursor(1); break;
      case "k": if (!onClusters) return; moveCursor(-1); break;
      case "o": if (!onClusters) return; openCurrent(); break;
      default: return;
    }
    event.preventDefault();
  });

  // The job is done (the progress fragment's HX-Trigger): show the list as it is now.
  document.body.addEventListener("bulkDone", function () {
    if (!window.htmx) return;
    if (document.getElementById("cluster-rows")) {
      window.htmx.ajax("GET", window.location.pathname + window.location.search,
                       { target: "#cluster-rows", swap: "innerHTML" });
    } else if (document.getElementById("review-queue")) {
      window.htmx.ajax("GET", window.location.pathname, { target: "#review-queue", swap: "innerHTML" });
    }
  });

  document.addEventListener("DOMContentLoaded", updateCount);
  document.addEventListener("htmx:load", updateCount);
})();
