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
  // The Undo button beside a decision's message stays for a while (data-hide-after
  // seconds, settings.UNDO_TOAST_SECONDS; 0: until the page changes); the cluster's
  // history keeps an Undo after that.
  function scheduleUndoExpiry(root) {
    var forms = (root || document).querySelectorAll("form.undo-form[data-hide-after]");
    Array.prototype.forEach.call(forms, function (form) {
      var seconds = Number(form.dataset.hideAfter);
      if (form.dataset.hideScheduled || !(seconds > 0)) return;
      form.dataset.hideScheduled = "1";
      window.setTimeout(function () {
        var message = form.closest(".message");
        form.remove();
        if (message) message.classList.remove("toast");
      }, seconds * 1000);
    });
  }
  document.addEventListener("DOMContentLoaded", function () { scheduleUndoExpiry(document); });
  document.addEventListener("htmx:load", function (event) { scheduleUndoExpiry(event.target); });

  document.addEventListener("htmx:sendError", function () {
    flash(document.body.dataset.msgOffline || "The server cannot be reached.");
  });
})();
