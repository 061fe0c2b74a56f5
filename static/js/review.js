// Keyboard shortcuts of the review queue: j/k move (over items another editor holds), t
// takes the next item no other editor holds, n skips the held item (it comes back later),
// a asks a second editor to decide it, c confirms the cluster, s splits the article out
// (neither on an item another editor holds), u undoes the decision just made. The actions are ordinary forms (they work without this file); with htmx the
// queue fragment is swapped in place and the selection stays at the same position.
(function () {
  "use strict";

  function items() {
    return Array.prototype.slice.call(document.querySelectorAll(".review-item"));
  }

  function selectedIndex() {
    var list = items();
    for (var i = 0; i < list.length; i++) {
      if (list[i].classList.contains("selected")) return i;
    }
    return list.length ? 0 : -1;
  }

  // Another editor holds it, or (the poll says) a colleague decided or took it meanwhile.
  function claimedByOther(el) {
    return el.classList.contains("claimed-other") ||
      !!el.querySelector(".state-decided, .state-taken");
  }

  // The next item from `from` in `step` direction that no other editor holds (or `from`).
  function step(from, by) {
    var list = items();
    for (var i = from + by; i >= 0 && i < list.length; i += by) {
      if (!claimedByOther(list[i])) return i;
    }
    return from;
  }

  function select(index, loadDiff) {
    var list = items();
    if (!list.length) return;
    index = Math.max(0, Math.min(index, list.length - 1));
    list.forEach(function (el, n) {
      el.classList.toggle("selected", n === index);
      el.setAttribute("aria-selected", n === index ? "true" : "false");
    });
    var current = list[index];
    current.scrollIntoView({ block: "nearest" });
    if (loadDiff && window.htmx && current.dataset.diffUrl) {
      window.htmx.ajax("GET", current.dataset.diffUrl, { target: "#review-diff", swap: "innerHTML" });
    }
  }

  function submit(action) {
    var current = items()[selectedIndex()];
    if (!current || claimedByOther(current)) return;
    var form = current.querySelector('form[data-action="' + action + '"]');
    if (!form) return;
    if (form.requestSubmit) {
      form.requestSubmit();
    } else {
      form.submit();
    }
  }

  function undo() {
    var form = document.querySelector('.messages form[data-action="undo"]');
    if (!form) return;
    if (form.requestSubmit) {
      form.requestSubmit();
    } else {
      form.submit();
    }
  }

  function take(action) {
    var form = document.querySelector('form[data-action="' + (action || "take") + '"]');
    if (!form) return;
    if (form.requestSubmit) {
      form.requestSubmit();
    } else {
      form.submit();
    }
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    var target = event.target;
    // Keys go to text fields; on an item's checkbox (bulk.js) the shortcuts still work.
    if (target && (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName) ||
        (target.tagName === "INPUT" && target.type !== "checkbox"))) {
      return;
    }
    if (event.key === "u" && document.querySelector('.messages form[data-action="undo"]')) {
      undo();
      event.preventDefault();
      return;
    }
    if (!document.querySelector(".review-list")) return;
    switch (event.key) {
      case "j": select(step(selectedIndex(), 1), true); break;
      case "k": select(step(selectedIndex(), -1), true); break;
      case "c": submit("confirm"); break;
      case "s": submit("split"); break;
      case "t": take("take"); break;
      case "n": take("skip"); break;
      case "a": take("second"); break;
      default: return;
    }
    event.preventDefault();
  });

  // A click on an item's title selects it in place (the link still works without JS).
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest(".review-item .select-link") : null;
    if (!link || !window.htmx) return;
    event.preventDefault();
    select(Number(link.closest(".review-item").dataset.index), true);
  });
})();
