#!/usr/bin/env bash
# Checks deploy/grafana/agenteval-dashboard.json against docs/metrics.md.
#
#   deploy/check-dashboard.sh                       # static checks (needs node)
#   deploy/check-dashboard.sh --live                # also the live value check (below)
#   deploy/check-dashboard.sh --query http://localhost:9090
#                                                   # also runs every query on that Prometheus
#   deploy/check-dashboard.sh --self-test           # shows that broken dashboards are rejected
#   DASHBOARD=other.json METRICS_MD=docs/metrics.md deploy/check-dashboard.sh
#
# Static checks:
#   - the dashboard is JSON with schemaVersion >= 39, a `datasource` variable of type
#     datasource (query prometheus), an `agent` variable over
#     label_values(agent_eval_agent_score_count, agent), unique panel ids, and every panel and
#     query on the ${datasource} variable;
#   - every PromQL expression (panel targets and variable queries) names only series listed in
#     docs/metrics.md (histograms as _bucket/_sum/_count), only labels those series carry (`le`
#     on _bucket), only label values the document enumerates (plus `unknown` and `other`,
#     which the exporter's cleaning and cap produce), only known PromQL functions, and only
#     the dashboard's own variables or Grafana's built-in ones;
#   - every {{label}} of a legend is a label of the query's series; when its values are a
#     closed list in docs/metrics.md, a panel with colour overrides by name has one for each
#     value, and a description that names two or more of them names them all;
#   - a query plotting a per-second rate() (no ratio, no quantile) has a rate unit (cps...)
#     or "/s" in its panel title;
#   - when promtool is on PATH (Debian package `prometheus`), every expression, with the
#     Grafana variables replaced, must pass `promtool check rules` (the real PromQL parser).
#     Without promtool the script says so and skips that step.
# Live value check (--live; needs Go and the Debian package `prometheus`): runs
#   go test -count=1 -run TestDashboardMatchesStore ./e2e
# which replays the bundled sample sessions through an in-process collector, lets a real
# Prometheus scrape it every second, runs every panel query and compares each value with
# the same figure computed from the result store (e2e/dashboard_test.go states the
# tolerances). CI runs it as part of `make test`.
# Exit status: 0 when every check passed, 1 when one failed, 2 on a usage or setup error.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
dashboard="${DASHBOARD:-$here/grafana/agenteval-dashboard.json}"
metrics_md="${METRICS_MD:-$repo/docs/metrics.md}"
live=""
live_check=0
self_test=0

while [ $# -gt 0 ]; do
  case "$1" in
    --query) live="${2:?--query needs a Prometheus URL}"; shift 2 ;;
    --live) live_check=1; shift ;;
    --self-test) self_test=1; shift ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "check-dashboard: unknown argument $1" >&2; exit 2 ;;
  esac
done

if ! command -v node >/dev/null 2>&1; then
  echo "check-dashboard: node is required (Debian: apt-get install nodejs)" >&2
  exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if [ "$self_test" = 1 ]; then
  # Each mutation breaks one rule; the checker must reject every one, and accept the original.
  failures=0
  mutate() { # name, node expression turning the dashboard object `d` into a broken one
    local name="$1" js="$2"
    node -e '
      const fs = require("fs");
      const d = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
      const targets = d.panels.flatMap((p) => p.targets || []);
      '"$js"'
      fs.writeFileSync(process.argv[2], JSON.stringify(d));
    ' "$dashboard" "$tmp/$name.json"
    if DASHBOARD="$tmp/$name.json" METRICS_MD="$metrics_md" PATH="$PATH" "$0" >"$tmp/$name.log" 2>&1; then
      echo "self-test: FAIL: mutation '$name' was accepted"; failures=$((failures + 1))
    else
      echo "self-test: ok: '$name' rejected: $(grep -m1 -E 'ERROR' "$tmp/$name.log" || true)"
    fi
  }
  mutate unknown_metric   'targets[0].expr = targets[0].expr.replace("agent_eval_sessions_total", "agent_eval_session_total");'
  mutate unknown_label    'targets[0].expr = "sum by (tenant) (increase(agent_eval_sessions_total[5m]))";'
  mutate foreign_label    'targets[0].expr = "sum(increase(agent_eval_sessions_total{agent=\"x\"}[5m]))";'
  mutate bad_value        'targets[0].expr = "sum(increase(agent_eval_session_score_count{metric=\"overal\"}[5m]))";'
  mutate bad_regex_value  'targets[0].expr = "sum(increase(agent_eval_turns_total{detection_type=~\"rdm|cmm\"}[5m]))";'
  mutate unknown_function 'targets[0].expr = "histogram_quantle(0.5, sum by (le) (increase(agent_eval_session_score_bucket[5m])))";'
  mutate le_on_counter    'targets[0].expr = "sum by (le) (increase(agent_eval_sessions_total[5m]))";'
  mutate legend_label     'const t = targets.find((x) => x.legendFormat); t.legendFormat = "{{tenant}}";'
  mutate unknown_variable 'targets[0].expr = "sum(increase(agent_eval_sessions_total[$nope]))";'
  mutate agent_variable   'd.templating.list = d.templating.list.filter((v) => v.name !== "agent");'
  mutate old_schema       'd.schemaVersion = 36;'
  mutate fixed_datasource 'd.panels.find((p) => p.targets).datasource = {type: "prometheus", uid: "abc"};'
  mutate missing_colour   'const p = d.panels.find((x) => x.id === 16); p.fieldConfig.overrides = p.fieldConfig.overrides.filter((o) => o.matcher.options !== "rdm");'
  mutate partial_list     'const p = d.panels.find((x) => x.id === 24); p.description = p.description.replace("cut_by_collector", "cut");'
  mutate rate_as_count    'const p = d.panels.find((x) => x.id === 19); p.fieldConfig.defaults.unit = "short";'
  mutate duplicate_id     'const ps = d.panels.filter((p) => p.type !== "row"); ps[1].id = ps[0].id;'
  if command -v promtool >/dev/null 2>&1; then
    mutate syntax_error 'targets[0].expr = "sum(increase(agent_eval_sessions_total[5m])";'
  fi
  if DASHBOARD="$dashboard" METRICS_MD="$metrics_md" "$0" >"$tmp/original.log" 2>&1; then
    echo "self-test: ok: the dashboard itself passes"
  else
    echo "self-test: FAIL: the dashboard itself is rejected:"; cat "$tmp/original.log"; failures=$((failures + 1))
  fi
  [ "$failures" = 0 ] || exit 1
  echo "self-test: passed"
  exit 0
fi

# The checker proper. It writes the expressions, variables replaced, to $tmp/rules.yml for
# promtool, and with --live runs them as instant queries.
node - "$dashboard" "$metrics_md" "$tmp/rules.yml" "$live" <<'JS'
const fs = require("fs");
const [dashboardPath, metricsPath, rulesPath, liveURL] = process.argv.slice(2);
const errors = [];
const err = (where, msg) => errors.push(`${where}: ${msg}`);

// ---- docs/metrics.md: series, their labels and enumerated label values -------------------
function readMetrics(md) {
  const series = new Map(); // name -> {labels:Set, values:Map(label->Set)}
  let kind = null;
  let histograms = 0, counters = 0;
  for (const line of md.split("\n")) {
    if (/^## Histograms/.test(line)) kind = "histogram";
    else if (/^## Counters/.test(line)) kind = "counter";
    else if (/^## /.test(line)) kind = null;
    if (!kind || !/^\|\s*`agent_eval_/.test(line)) continue;
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    const name = cells[0].replace(/`/g, "");
    const labelCell = cells[1] || "";
    const labels = new Set([...labelCell.replace(/\([^)]*\)/g, "").matchAll(/`([a-zA-Z_][a-zA-Z0-9_]*)`/g)].map((m) => m[1]));
    const values = new Map();
    // `label` (`a`, `b`, ...): a closed list, unless it says "or ..." / "such as".
    for (const m of labelCell.matchAll(/`([a-zA-Z_][a-zA-Z0-9_]*)`\s*\(([^)]*)\)/g)) {
      if (/\bor\b|such as/.test(m[2])) continue;
      values.set(m[1], new Set([...m[2].matchAll(/`([^`]*)`/g)].map((v) => v[1])));
    }
    // The `metric` label's values are given in the source column: metric="x" or `metric` ∈ `a`, `b`.
    if (labels.has("metric")) {
      const src = cells[3] || "";
      const vals = new Set([...src.matchAll(/metric="([a-z_]+)"|"([a-z_]+)"`?\s*←/g)].map((v) => v[1] || v[2]));
      const inList = src.match(/`metric`\s*∈\s*([^(]*)/);
      if (inList) for (const v of inList[1].matchAll(/`([^`]*)`/g)) vals.add(v[1]);
      if (vals.size) values.set("metric", vals);
    }
    const entry = (ls) => ({ labels: ls, values });
    if (kind === "histogram") {
      histograms++;
      series.set(name + "_bucket", entry(new Set([...labels, "le"])));
      series.set(name + "_sum", entry(labels));
      series.set(name + "_count", entry(labels));
    } else {
      counters++;
      series.set(name, entry(labels));
    }
  }
  if (!histograms || !counters) {
    throw new Error(`${metricsPath}: found ${histograms} histogram and ${counters} counter rows; has its format changed?`);
  }
  return series;
}

// ---- a small PromQL lexer/walker: enough to find series, labels, functions ----------------
const FUNCTIONS = new Set(("abs absent absent_over_time avg_over_time ceil changes clamp clamp_max clamp_min " +
  "count_over_time day_of_month day_of_week day_of_year days_in_month delta deriv exp floor " +
  "histogram_quantile histogram_count histogram_sum histogram_fraction histogram_avg histogram_stddev " +
  "histogram_stdvar holt_winters double_exponential_smoothing hour idelta increase irate label_join " +
  "label_replace last_over_time ln log10 log2 max_over_time min_over_time minute month " +
  "predict_linear present_over_time quantile_over_time rate resets round scalar sgn sort sort_desc " +
  "sort_by_label sort_by_label_desc sqrt stddev_over_time stdvar_over_time sum_over_time time " +
  "timestamp vector year").split(" "));
const AGGREGATIONS = new Set("sum min max avg group stddev stdvar count count_values bottomk topk quantile limitk limit_ratio".split(" "));
const GROUPING = new Set("by without on ignoring group_left group_right".split(" "));
const KEYWORDS = new Set("and or unless bool offset atan2 inf nan".split(" "));
const ALWAYS_VALUES = new Set(["unknown", "other"]); // exporter cleaning and label-value cap

function lex(src) {
  const toks = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { i++; continue; }
    if (c === "#") { while (i < src.length && src[i] !== "\n") i++; continue; }
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1, v = "";
      while (j < src.length && src[j] !== c) {
        if (src[j] === "\\" && c !== "`") { v += src[j + 1]; j += 2; continue; }
        v += src[j++];
      }
      if (j >= src.length) throw new Error("unterminated string");
      toks.push({ t: "str", v }); i = j + 1; continue;
    }
    let m = /^[0-9][0-9a-zA-Z.]*/.exec(src.slice(i));
    if (m) { toks.push({ t: "num", v: m[0] }); i += m[0].length; continue; }
    m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(src.slice(i));
    if (m) { toks.push({ t: "id", v: m[0] }); i += m[0].length; continue; }
    m = /^(=~|!~|!=|==|<=|>=|[(){}\[\],=<>+\-*/%^@$])/.exec(src.slice(i));
    if (m) { toks.push({ t: "op", v: m[0] }); i += m[0].length; continue; }
    throw new Error(`unexpected character ${JSON.stringify(c)}`);
  }
  return toks;
}

// Literal values a matcher can match: the value itself for = and !=, the alternatives of a
// plain alternation for =~ and !~; null when the regex is not a plain alternation.
function literalValues(op, value) {
  if (op === "=" || op === "!=") return [value];
  if (/^[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*$/.test(value)) return value.split("|");
  return null;
}

// Analyses one expression (Grafana variables already replaced); returns the series it uses
// and the union of their labels.
function analyse(where, expr, series) {
  let toks;
  try { toks = lex(expr); } catch (e) { err(where, `cannot lex ${JSON.stringify(expr)}: ${e.message}`); return null; }
  const used = new Set(), groupLabels = [];
  for (let i = 0; i < toks.length; i++) {
    const tk = toks[i], next = toks[i + 1];
    if (tk.t === "op" && tk.v === "$") { err(where, "a Grafana variable is left in the query"); continue; }
    if (tk.t === "op" && tk.v === "[") { while (i < toks.length && toks[i].v !== "]") i++; continue; }
    if (tk.t !== "id") continue;
    if (GROUPING.has(tk.v)) {
      if (next && next.v === "(") {
        for (i += 2; i < toks.length && toks[i].v !== ")"; i++) if (toks[i].t === "id") groupLabels.push(toks[i].v);
      }
      continue;
    }
    if (AGGREGATIONS.has(tk.v) || KEYWORDS.has(tk.v)) continue;
    if (next && next.v === "(") {
      if (!FUNCTIONS.has(tk.v)) err(where, `unknown PromQL function ${tk.v}`);
      continue;
    }
    // A series name.
    const s = series.get(tk.v);
    if (!s) err(where, `series ${tk.v} is not in docs/metrics.md`);
    else used.add(tk.v);
    if (next && next.v === "{") {
      for (i += 2; i < toks.length && toks[i].v !== "}"; i++) {
        if (toks[i].t !== "id") continue;
        const label = toks[i].v, op = toks[i + 1] && toks[i + 1].v, val = toks[i + 2];
        if (!s) continue;
        if (!s.labels.has(label)) { err(where, `series ${tk.v} has no label ${label}`); continue; }
        if (!val || val.t !== "str") continue;
        const allowed = s.values.get(label);
        const lits = literalValues(op, val.v);
        if (allowed && lits) {
          for (const v of lits) {
            if (!allowed.has(v) && !ALWAYS_VALUES.has(v)) err(where, `label ${label} of ${tk.v} has no value ${JSON.stringify(v)} in docs/metrics.md`);
          }
        }
        i += 2;
      }
    }
  }
  const labels = new Set();
  for (const name of used) for (const l of series.get(name).labels) labels.add(l);
  for (const l of groupLabels) if (!labels.has(l)) err(where, `label ${l} (by/on/ignoring) is not a label of ${[...used].join(", ") || "any series"}`);
  return { used, labels };
}

// ---- the dashboard ---------------------------------------------------------------------
const series = readMetrics(fs.readFileSync(metricsPath, "utf8"));
let d;
try { d = JSON.parse(fs.readFileSync(dashboardPath, "utf8")); } catch (e) { console.error(`ERROR ${dashboardPath}: ${e.message}`); process.exit(1); }

if (!(d.schemaVersion >= 39)) err("dashboard", `schemaVersion ${d.schemaVersion} < 39`);
const vars = (d.templating && d.templating.list) || [];
const varByName = new Map(vars.map((v) => [v.name, v]));
const dsVar = varByName.get("datasource");
if (!dsVar || dsVar.type !== "datasource" || dsVar.query !== "prometheus") err("templating", "needs a variable `datasource` of type datasource with query prometheus");
const agentVar = varByName.get("agent");
const agentQuery = agentVar && (typeof agentVar.query === "string" ? agentVar.query : agentVar.query && agentVar.query.query);
if (!agentVar || agentVar.type !== "query" || !/^label_values\(\s*agent_eval_agent_score_count\s*,\s*agent\s*\)$/.test(agentQuery || "")) {
  err("templating", "needs a query variable `agent` = label_values(agent_eval_agent_score_count, agent)");
}

// Grafana variables: duration ones become durations, the others the value of "All".
const BUILTIN_DURATIONS = new Set(["__rate_interval", "__range", "__interval", "__range_s", "__interval_ms"]);
const BUILTIN_OTHER = new Set(["__all", "__auto", "__dashboard", "__from", "__to", "__name", "__org", "__user", "__timeFilter"]);
function substitute(where, s) {
  return s.replace(/\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]/g, (all, a, b, c) => {
    const name = a || b || c;
    if (/^[0-9]+$/.test(name)) return all; // a regex group of label_replace ("$1"): Grafana leaves it
    if (BUILTIN_DURATIONS.has(name)) return name.endsWith("_s") || name.endsWith("_ms") ? "3600" : "1h";
    if (BUILTIN_OTHER.has(name)) return all;
    const v = varByName.get(name);
    if (!v) { err(where, `unknown variable $${name}`); return all; }
    if (v.type === "interval") return (v.current && v.current.value) || "1h";
    if (v.type === "query" || v.type === "custom") return v.allValue || ".*";
    return all;
  });
}

const exprs = []; // {where, expr} with variables replaced
for (const v of vars) {
  if (v.type !== "query") continue;
  const where = `variable ${v.name}`;
  const q = typeof v.query === "string" ? v.query : v.query && v.query.query;
  if (v.datasource && v.datasource.uid !== "${datasource}") err(where, "datasource must be ${datasource}");
  const m = /^label_values\((.*),\s*([a-zA-Z_]\w*)\s*\)$/.exec(q || "");
  if (!m) { err(where, `unsupported variable query ${q}`); continue; }
  const res = analyse(where, substitute(where, m[1]), series);
  if (res && !res.labels.has(m[2])) err(where, `label ${m[2]} is not a label of ${m[1]}`);
  exprs.push({ where, expr: substitute(where, m[1]) });
}

const RATE_UNITS = new Set(["cps", "ops", "reqps", "rps", "wps", "iops", "cpm", "opm", "reqpm", "rpm", "wpm"]);
const unit = (p) => ((p.fieldConfig || {}).defaults || {}).unit || "";

// The values a legend label of expr can take, from docs/metrics.md, less those the
// query excludes (label!="v") or does not select (label="v", label=~"a|b").
function legendValues(expr, res, label) {
  let values = null;
  for (const name of res.used) {
    const v = series.get(name).values.get(label);
    if (v) values = new Set([...(values || []), ...v]);
  }
  if (!values) return null;
  for (const m of expr.matchAll(new RegExp(`\\b${label}\\s*(!=|=~|=)\\s*"([^"]*)"`, "g"))) {
    const lits = literalValues(m[1] === "=~" ? "=~" : "=", m[2]);
    if (!lits) continue;
    if (m[1] === "!=") lits.forEach((v) => values.delete(v));
    else values = new Set(lits.filter((v) => values.has(v)));
  }
  return values;
}

// A panel that colours its series by name colours every value its legend label can take
// (else Grafana picks a palette colour that may look like another's), and a description
// that lists values of that label lists them all.
function checkLegendValues(where, p, expr, res, label) {
  const values = legendValues(expr, res, label);
  if (!values) return;
  const named = ((p.fieldConfig || {}).overrides || [])
    .filter((o) => o.matcher && o.matcher.id === "byName").map((o) => o.matcher.options);
  if (named.length) {
    for (const v of values) if (!named.includes(v)) err(where, `no colour override for ${label}="${v}"`);
  }
  const words = (p.description || "").split(/[^A-Za-z0-9_]+/);
  const listed = [...values].filter((v) => words.includes(v));
  if (listed.length >= 2) {
    for (const v of values) if (!listed.includes(v)) err(where, `the description lists ${label} values but not "${v}"`);
  }
}

const ids = new Set();
const allPanels = (d.panels || []).flatMap((p) => [p, ...(p.panels || [])]);
let nTargets = 0;
for (const p of allPanels) {
  const where = `panel ${p.id} "${p.title}"`;
  if (p.id === undefined || ids.has(p.id)) err(where, "panel id missing or duplicate");
  ids.add(p.id);
  if (!p.gridPos) err(where, "no gridPos");
  substitute(where, p.title || "");
  if (p.type === "row") continue;
  if (!p.datasource || p.datasource.uid !== "${datasource}") err(where, "panel datasource must be ${datasource}");
  if (!p.targets || !p.targets.length) err(where, "no queries");
  for (const t of p.targets || []) {
    const tw = `${where} query ${t.refId}`;
    nTargets++;
    if (!t.datasource || t.datasource.uid !== "${datasource}") err(tw, "query datasource must be ${datasource}");
    if (!t.expr) { err(tw, "no expr"); continue; }
    const expr = substitute(tw, t.expr);
    const res = analyse(tw, expr, series);
    if (res && t.legendFormat) {
      for (const m of t.legendFormat.matchAll(/\{\{\s*([a-zA-Z_]\w*)\s*\}\}/g)) {
        if (!res.labels.has(m[1])) err(tw, `legend label ${m[1]} is not a label of the query's series`);
        else checkLegendValues(where, p, expr, res, m[1]);
      }
    }
    // A per-second rate (not a ratio, not a quantile) shown as a bare number reads as a count.
    if (/\brate\(/.test(expr) && !/\/|histogram_quantile/.test(expr) &&
        !RATE_UNITS.has(unit(p)) && !/\/s\b|per second/.test(p.title || "")) {
      err(tw, `plots a per-second rate with unit ${JSON.stringify(unit(p))}: use a rate unit (${[...RATE_UNITS].join(", ")}) or say "/s" in the title`);
    }
    exprs.push({ where: tw, expr });
  }
}

const usedSeries = new Set();
for (const e of exprs) for (const m of e.expr.matchAll(/\bagent_eval_\w+/g)) usedSeries.add(m[0]);
fs.writeFileSync(rulesPath, "groups:\n  - name: dashboard\n    rules:\n" +
  exprs.map((e, i) => `      - record: dashboard:expr_${i}\n        expr: ${JSON.stringify(e.expr)}\n`).join(""));
fs.writeFileSync(rulesPath + ".where", exprs.map((e) => e.where).join("\n") + "\n");

(async () => {
  if (liveURL) {
    for (const e of exprs) {
      const url = `${liveURL.replace(/\/$/, "")}/api/v1/query?query=${encodeURIComponent(e.expr)}`;
      try {
        const r = await fetch(url);
        const body = await r.json();
        if (body.status !== "success") err(e.where, `Prometheus: ${body.errorType}: ${body.error}`);
        else console.log(`live: ${String(body.data.result.length).padStart(3)} series  ${e.where}`);
      } catch (x) { err(e.where, `Prometheus at ${liveURL}: ${x.message}`); }
    }
  }
  for (const e of errors) console.error(`ERROR ${e}`);
  console.log(`check-dashboard: ${allPanels.filter((p) => p.type !== "row").length} panels, ${nTargets} queries, ` +
    `${exprs.length} expressions, ${usedSeries.size} of ${series.size} series used, ${errors.length} errors`);
  process.exit(errors.length ? 1 : 0);
})();
JS

if command -v promtool >/dev/null 2>&1; then
  if ! out="$(promtool check rules "$tmp/rules.yml" 2>&1)"; then
    echo "ERROR promtool check rules rejects an expression (rules numbered as listed below):"
    echo "$out"
    nl -v0 "$tmp/rules.yml.where"
    exit 1
  fi
  echo "check-dashboard: promtool parsed every expression"
else
  echo "check-dashboard: promtool not found, PromQL syntax not checked (Debian: apt-get install prometheus)"
fi

if [ "$live_check" = 1 ]; then
  echo "check-dashboard: live value check (go test -run TestDashboardMatchesStore ./e2e)"
  (cd "$repo" && go test -count=1 -run '^TestDashboardMatchesStore$' ./e2e)
fi
