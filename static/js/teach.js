// The teaching queue by keyboard (templates/articles/teach.html): s / d / n answer,
// u takes the answer back, j asks the next pair. Each key presses the element that
// carries it in data-key, so the page works the same without this script.
(function () {
  "use strict";

  function press(key) {
    var element = document.querySelector('#teach [data-key="' + key + '"]');
    if (!element) return false;
    if (element.tagName === "FORM") {
      if (element.requestSubmit) element.requestSubmit(); else element.submit();
    } else {
      // a click, not requestSubmit(button): htmx sends the button's value (the answer)
      // from the click it sees
      element.click();
    }
    return true;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) {
      return;
    }
    if (["s", "d", "n", "u", "j"].indexOf(event.key) < 0) return;
    if (press(event.key)) event.preventDefault();
  });
})();
