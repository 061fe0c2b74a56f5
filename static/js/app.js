// Site-wide behaviour. Loaded as a static file: the pages allow scripts from 'self' only.
(function () {
  "use strict";

  function flash(text) {
    var box = document.getElementById("flash");
    if (!box) return;
    box.textContent = text;
    box.hidden = false;
    window.clearTimeout(flash.timer);
    flash.timer = window.setTimeout(function () { box.hidden = true; }, 6000);
  }

  // htmx does not swap 4xx/5xx answers: say what happened instead of doing nothing.
  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    var messages = document.body.dataset;
    if (status === 403) {
      flash(messages.msgForbidden || "You may not do that.");
    } else {
      flash((messages.msgFailed || "The request failed") + " (" + status + ")");
    }
  });
  document.addEventListener("htmx:sendError", function () {
    flash(document.body.dataset.msgOffline || "The server cannot be reached.");
  });
})();
