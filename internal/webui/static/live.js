// agenteval live view: reads GET /api/v1/events (server-sent events) and prepends one
// row per evaluated turn or stored session. No framework, no build step.
(function () {
  "use strict";
  var body = document.getElementById("live-events");
  var status = document.getElementById("live-status");
  if (!body || !window.EventSource) {
    if (status) status.textContent = "This browser cannot open the event stream.";
    return;
  }
  var maxRows = 500;

  function cell(row, text, className) {
    var td = document.createElement("td");
    if (className) td.className = className;
    if (text instanceof Node) td.appendChild(text); else td.textContent = text;
    row.appendChild(td);
    return td;
  }
  function sessionLink(id, suffix) {
    var a = document.createElement("a");
    a.href = "/sessions/" + encodeURIComponent(id) + (suffix || "");
    a.className = "session-link";
    a.textContent = id;
    return a;
  }
  // The band of the printed number (two decimals), as the Go templates (funcs.go band).
  function band(v) {
    if (v === null || v === undefined) return "n/a";
    var r = parseFloat(v.toFixed(2));
    return r >= 0.9 ? "good" : r >= 0.7 ? "fair" : "poor";
  }
  function badge(v) {
    var b = band(v);
    var span = document.createElement("span");
    span.className = "badge " + b;
    span.textContent = (v === null || v === undefined ? "n/a" : v.toFixed(2)) + " ";
    var word = document.createElement("span");
    word.className = "word";
    word.textContent = b;
    span.appendChild(word);
    return span;
  }
  function add(row) {
    row.className = "new";
    body.insertBefore(row, body.firstChild);
    while (body.childNodes.length > maxRows) body.removeChild(body.lastChild);
  }
  function now() {
    return new Date().toISOString().slice(11, 19) + " UTC";
  }

  // The detection type, with its meaning from the page's legend as a title.
  function detection(type) {
    var known = document.querySelectorAll("#detection-legend abbr[data-type]");
    for (var i = 0; i < known.length; i++) {
      if (known[i].dataset.type !== type) continue;
      var abbr = document.createElement("abbr");
      abbr.title = known[i].title;
      abbr.textContent = type;
      return abbr;
    }
    return document.createTextNode(type);
  }
  // A turn's verdict. Before its final verdict (final false: the next user message is
  // not known yet) a turn is only checked for no_answer and hallucination, so a turn
  // without those is "provisional", not good.
  function verdict(t) {
    var span = document.createElement("span");
    if (!t.is_bad) {
      span.textContent = t.final ? "✓ good, confidence " + t.confidence.toFixed(2) : "provisional: final verdict at the next user message";
      return span;
    }
    span.appendChild(document.createTextNode("✗ bad: "));
    span.appendChild(detection(t.detection_type));
    span.appendChild(document.createTextNode((t.final ? "" : " (provisional)") + ", confidence " + t.confidence.toFixed(2)));
    return span;
  }
  function onTurn(e) {
    var t = JSON.parse(e.data);
    var row = document.createElement("tr");
    row.dataset.kind = "turn";
    row.dataset.session = t.session_id;
    cell(row, now(), "when");
    cell(row, "turn " + (t.turn_index + 1) + (t.final ? " (final verdict)" : " (closed)"));
    cell(row, sessionLink(t.session_id, "#turn-" + t.turn_index));
    cell(row, verdict(t), "verdict");
    cell(row, (t.user_message ? "“" + t.user_message + "” · " : "") + (t.reason || ""));
    add(row);
  }
  // The server dropped events for this page (its queue was full): say how many, since
  // the rows no longer show everything.
  var missed = 0;
  function onGap(e) {
    missed += JSON.parse(e.data).missed;
    status.textContent = missed + (missed === 1 ? " event" : " events") + " missed (this page fell behind); reload the page or the ";
    var a = document.createElement("a");
    a.href = "/";
    a.textContent = "sessions list";
    status.appendChild(a);
    status.appendChild(document.createTextNode("."));
  }
  function onSession(e) {
    var s = JSON.parse(e.data);
    var row = document.createElement("tr");
    row.dataset.kind = "session";
    row.dataset.session = s.session_id;
    cell(row, now(), "when");
    cell(row, "session stored");
    cell(row, sessionLink(s.session_id));
    cell(row, badge(s.overall_score));
    var task = s.task_completion === null ? "task unknown" : s.task_completion ? "✓ task completed" : "✗ task not completed";
    cell(row, s.turns + (s.turns === 1 ? " turn · " : " turns · ") + (s.agents || []).join(", ") + " · " + task + (s.partial ? " · ◐ partial" : ""));
    add(row);
  }

  // EventSource reconnects by itself after a dropped connection (readyState CONNECTING),
  // but not after an answer other than 200, such as the 503 past ui.max_event_clients
  // (readyState CLOSED): the page then opens a new stream after retryMs, the server's
  // Retry-After (EventSource cannot read the header).
  var retryMs = 10000;
  function connect() {
    var es = new EventSource("/api/v1/events");
    es.onopen = function () { status.textContent = "Connected; waiting for evaluations."; };
    es.onerror = function () {
      if (es.readyState === EventSource.CLOSED) {
        es.close();
        status.textContent = "Disconnected: the server refused the event stream (it may have too many viewers); retrying in " + retryMs / 1000 + " s.";
        setTimeout(connect, retryMs);
        return;
      }
      status.textContent = "Disconnected; reconnecting…";
    };
    es.addEventListener("turn", onTurn);
    es.addEventListener("gap", onGap);
    es.addEventListener("session", onSession);
  }
  connect();
})();
