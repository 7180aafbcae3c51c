// piko session export: branch navigation from the tree, toggles, local times. Reads only the DOM.
(function () {
  "use strict";
  var root = document.documentElement;
  root.classList.remove("no-js");
  root.classList.add("js");

  var body = document.body;
  var tree = document.getElementById("tree");
  var nodes = {};
  var children = {};
  var order = [];
  if (tree) {
    var items = tree.querySelectorAll("li[data-id]");
    for (var i = 0; i < items.length; i++) {
      var li = items[i];
      var id = li.getAttribute("data-id");
      var parent = li.getAttribute("data-parent") || "";
      nodes[id] = { li: li, parent: parent };
      order.push(id);
      if (!children[parent]) children[parent] = [];
      children[parent].push(id);
    }
  }

  // the branch through an entry: its ancestors, then the newest child at each step below it
  function branchThrough(id) {
    var path = {};
    var seen = 0;
    var cur = id;
    while (cur && nodes[cur] && !path[cur] && seen <= order.length) {
      path[cur] = true;
      cur = nodes[cur].parent;
      seen++;
    }
    var leaf = id;
    var down = children[leaf];
    while (down && down.length && seen <= 2 * order.length) {
      leaf = down[down.length - 1];
      if (path[leaf]) break;
      path[leaf] = true;
      down = children[leaf];
      seen++;
    }
    return { ids: path, leaf: leaf };
  }

  function show(id, scroll) {
    if (!nodes[id]) return;
    var branch = branchThrough(id);
    var entries = document.querySelectorAll("#conversation .entry");
    for (var i = 0; i < entries.length; i++) {
      var el = entries[i];
      el.classList.toggle("off", !branch.ids[el.getAttribute("data-id")]);
    }
    for (var j = 0; j < order.length; j++) {
      var n = nodes[order[j]];
      n.li.classList.toggle("on-branch", !!branch.ids[order[j]]);
      n.li.classList.toggle("selected", order[j] === id);
      n.li.classList.toggle("is-leaf", order[j] === branch.leaf);
    }
    var status = document.getElementById("tree-status");
    var count = 0;
    for (var k in branch.ids) if (Object.prototype.hasOwnProperty.call(branch.ids, k)) count++;
    if (status) status.textContent = count + " of " + order.length + " entries on the shown branch";
    if (scroll) {
      var target = document.getElementById("e-" + id);
      if (target) {
        target.scrollIntoView({ block: "center" });
        if (!target.classList.contains("marker")) {
          target.classList.add("highlight");
          setTimeout(function () { target.classList.remove("highlight"); }, 1500);
        }
      }
    }
  }

  if (tree) {
    tree.addEventListener("click", function (event) {
      var link = event.target.closest ? event.target.closest("a[data-target]") : null;
      if (!link) return;
      event.preventDefault();
      var id = link.getAttribute("data-target");
      show(id, true);
      if (history.replaceState) history.replaceState(null, "", "#e-" + encodeURIComponent(id));
    });
  }

  // times in the reader's time zone
  var times = document.querySelectorAll("time[datetime]");
  for (var t = 0; t < times.length; t++) {
    var date = new Date(times[t].getAttribute("datetime"));
    if (!isNaN(date.getTime())) {
      times[t].title = date.toString();
      times[t].textContent = times[t].classList.contains("full") ? date.toLocaleString() : date.toLocaleTimeString();
    }
  }

  function toggleAll(selector) {
    var all = document.querySelectorAll(selector);
    var anyClosed = false;
    for (var i = 0; i < all.length; i++) if (!all[i].open) anyClosed = true;
    for (var j = 0; j < all.length; j++) all[j].open = anyClosed;
  }
  var themes = ["auto", "light", "dark"];
  function cycleTheme(button) {
    var current = root.getAttribute("data-theme") || "auto";
    var next = themes[(themes.indexOf(current) + 1) % themes.length];
    if (next === "auto") root.removeAttribute("data-theme");
    else root.setAttribute("data-theme", next);
    if (button) button.textContent = "Theme: " + next;
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-action]") : null;
    if (!button) return;
    var action = button.getAttribute("data-action");
    if (action === "thinking") toggleAll("details.thinking");
    else if (action === "output") toggleAll("details.more");
    else if (action === "theme") cycleTheme(button);
  });
  document.addEventListener("keydown", function (event) {
    var tag = (event.target && event.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "t" || event.key === "T") toggleAll("details.thinking");
    else if (event.key === "o" || event.key === "O") toggleAll("details.more");
  });

  var showAll = document.getElementById("tree-all");
  if (showAll && tree) {
    showAll.addEventListener("change", function () { tree.classList.toggle("show-all", showAll.checked); });
  }
  var search = document.getElementById("tree-search");
  if (search) {
    search.addEventListener("input", function () {
      var q = search.value.toLowerCase();
      for (var i = 0; i < order.length; i++) {
        var li = nodes[order[i]].li;
        li.classList.toggle("search-miss", q !== "" && li.textContent.toLowerCase().indexOf(q) < 0);
      }
    });
  }

  var start = body.getAttribute("data-leaf") || "";
  var hash = decodeURIComponent((location.hash || "").replace(/^#e-/, ""));
  if (hash && nodes[hash]) show(hash, true);
  else if (start) show(start, false);
  body.setAttribute("data-ready", "1");
})();
