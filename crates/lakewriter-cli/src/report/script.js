// The hover of the calendars: each cell's <title> becomes its tooltip, shown at once beside the
// pointer (the browser's own would wait, and could not be styled). Nothing is fetched.
(function () {
  "use strict";
  var tip = document.getElementById("tip");
  document.querySelectorAll("rect.cell").forEach(function (cell) {
    var title = cell.querySelector("title");
    if (title) {
      cell.setAttribute("data-tip", title.textContent);
      title.remove();
    }
  });
  function place(event) {
    var x = event.clientX + 14, y = event.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth - 8) { x = event.clientX - tip.offsetWidth - 14; }
    if (y + tip.offsetHeight > window.innerHeight - 8) { y = event.clientY - tip.offsetHeight - 14; }
    tip.style.left = Math.max(4, x) + "px";
    tip.style.top = Math.max(4, y) + "px";
  }
  document.addEventListener("mouseover", function (event) {
    var cell = event.target.closest ? event.target.closest("[data-tip]") : null;
    if (!cell) { tip.hidden = true; return; }
    tip.textContent = cell.getAttribute("data-tip");
    tip.hidden = false;
    place(event);
  });
  document.addEventListener("mousemove", function (event) { if (!tip.hidden) { place(event); } });
  document.addEventListener("mouseleave", function () { tip.hidden = true; });
})();
