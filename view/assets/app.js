// gfn view: checking a run overlays it; the page polls /api/version and,
// when a file changed, replaces <main> with the server's new rendering.
(function () {
  "use strict";
  var main = document.getElementById("main");
  var status = document.getElementById("status");
  var version = main.dataset.version;
  document.addEventListener("change", function (e) {
    if (e.target.name === "run") {
      e.target.form.submit();
    }
  });
  function stamp(text) {
    status.textContent = text + " " + new Date().toLocaleTimeString();
  }
  function poll() {
    fetch("/api/version", { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (v) {
        if (v.version === version) {
          stamp("live, checked");
          return;
        }
        var u = new URL(location.href);
        u.searchParams.set("partial", "1");
        return fetch(u, { cache: "no-store" })
          .then(function (r) { return r.text(); })
          .then(function (html) {
            main.innerHTML = html;
            version = v.version;
            main.dataset.version = version;
            stamp("live, updated");
          });
      })
      .catch(function () { stamp("server unreachable at"); })
      .then(function () { setTimeout(poll, 2000); });
  }
  setTimeout(poll, 2000);
})();
