// wirebench's live page and HTML report: one script for both. The data
// is the command's result lines (`--format=json`'s objects) in the page's
// JSON; a live page then gets each new line from /events (server-sent
// events) and draws again. Charts are uPlot's (vendored, inline).
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("wirebench-data").textContent);
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"];
  const charts = new Map();
  let events = data.events_from || 0;
  let ended = !data.live;
  let drawPending = false;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const child of children) node.append(child instanceof Node ? child : String(child));
    return node;
  }

  function num(x, digits) {
    if (x === null || x === undefined || !isFinite(x)) return "-";
    return Number(x).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  }

  // A latency in ms to 3 significant digits (0.0123, 1.23, 123).
  function ms(x) {
    if (x === null || x === undefined || !isFinite(x)) return "-";
    if (x === 0) return "0";
    return Math.abs(x) >= 100 ? num(x, 0) : Number(x).toPrecision(3);
  }

  function whole(x) {
    return x === null || x === undefined ? "-" : Number(x).toLocaleString("en-US");
  }

  function figure(label, value, detail) {
    const box = el("div", { class: "figure" }, el("div", { class: "label" }, label), el("div", { class: "value" }, value));
    if (detail) box.append(el("div", { class: "detail" }, detail));
    return box;
  }

  function table(headers, rows) {
    const t = el("table", {}, el("tr", {}, ...headers.map((h) => el("th", {}, h))));
    for (const row of rows) {
      const tr = el("tr");
      for (const cell of row) tr.append(cell instanceof Node ? el("td", {}, cell) : el("td", {}, cell));
      t.append(tr);
    }
    return t;
  }

  // Each source's lines, by kind.
  function sorted(source) {
    const kinds = { interval: [], final: [], sweep: [], search_step: [], search: [], fuzz: [], replay: [], record: [] };
    for (const line of source.lines) if (kinds[line.type]) kinds[line.type].push(line);
    return kinds;
  }

  function percentileText(latency) {
    return latency.percentiles.map((p) => "p" + p.percentile + " " + ms(p.ms)).join(", ");
  }

  function runTotals(result) {
    const c = result.counters, r = result.rates, l = result.latency_ms;
    const boxes = el("div", { class: "figures", "data-totals": "run" });
    boxes.append(
      figure("Transactions", whole(c.transactions), num(r.tps, 2) + " per second"),
      figure("Queries", whole(c.queries), num(r.qps, 2) + " per second (read " + whole(c.reads) + ", write " + whole(c.writes) + ", other " + whole(c.others) + ")"),
      figure("Latency (ms)", "avg " + ms(l.avg), "min " + ms(l.min) + ", max " + ms(l.max)),
    );
    for (const p of l.percentiles) boxes.append(figure("Latency p" + p.percentile + " (ms)", ms(p.ms), "of " + whole(l.count) + " events"));
    boxes.append(
      figure("Errors ignored", whole(c.ignored_errors), "reconnects " + whole(c.reconnects)),
      figure("Time", num(result.time_s, 2) + " s", result.threads + " connections, ended: " + result.end.replace("_", " ")),
    );
    if (result.rate) {
      const rate = result.rate;
      boxes.append(figure("Target rate", num(rate.target_tps, 0) + "/s", "achieved " + num(rate.achieved_tps, 2) + "/s, " + (rate.target_met ? "met" : "not met") + ", late starts " + whole(rate.late_starts)));
    }
    const s = result.server && result.server.figures;
    if (s) boxes.append(figure("Server CPU per query", s.cpu_us_per_query === null ? "-" : num(s.cpu_us_per_query, 1) + " µs", "cores busy " + num(s.cpu_cores, 2) + ", buffer pool hits " + (s.buffer_pool_hit_ratio === null ? "-" : num(100 * s.buffer_pool_hit_ratio, 2) + " %")));
    if (result.idle_connections) boxes.append(figure("Idle connections", whole(result.idle_connections.open), "lost " + whole(result.idle_connections.lost) + ", reconnected " + whole(result.idle_connections.reconnected)));
    return boxes;
  }

  // Only when the run kept each statement's latencies (--per-statement,
  // --format=json): otherwise they are counts alone.
  function statementsTable(result) {
    if (!result.statements || !result.statements.some((s) => s.latency_ms.count > 0)) return null;
    const ps = result.statements[0].latency_ms.percentiles.map((p) => "p" + p.percentile + " ms");
    return table(["statement", "count", "errors", "avg ms", ...ps, "max ms"], result.statements.map((s) =>
      [s.kind, whole(s.count), whole(s.errors), ms(s.latency_ms.avg), ...s.latency_ms.percentiles.map((p) => ms(p.ms)), ms(s.latency_ms.max)]));
  }

  // A replay's own totals, in place of a run's: what was replayed of the
  // capture, how fast, how its answers compare with the captured ones.
  function replayTotals(replay) {
    const c = replay.counters, r = replay.rates, l = replay.latency_ms, cap = replay.capture, conns = replay.connections;
    const notReplayed = Object.entries(replay.not_replayed || {});
    const skipped = notReplayed.reduce((n, [, k]) => n + k, 0);
    const boxes = el("div", { class: "figures", "data-totals": "replay" });
    boxes.append(
      figure("Commands replayed", whole(replay.commands), num(r.qps, 2) + " per second, of " + whole(cap.commands) + " read from the capture"),
      figure("Differences", whole(replay.differences), "errors " + whole(replay.errors) + ", answers the capture lacks " + whole(replay.unknown_answers)),
      figure("Speed", replay.speed === null ? "max" : num(replay.speed, 2) + "×", "held " + num(replay.achieved_speed, 2) + "×, " + num(replay.reached_s, 1) + " s of the capture in " + num(replay.time_s, 1) + " s"),
      figure("Latency from when due (ms)", "avg " + ms(l.avg), l.percentiles.map((p) => "p" + p.percentile + " " + ms(p.ms)).join(", ") + ", max " + ms(l.max)),
      figure("Not replayed", whole(skipped), notReplayed.length ? notReplayed.map(([why, n]) => why + " " + whole(n)).join(", ") : "every command due was sent"),
      figure("Connections", whole(conns.replayed), "opened " + whole(conns.opened) + ", lost " + whole(conns.lost) + ", logins refused " + whole(conns.refused.reduce((n, x) => n + x.connections, 0))),
      figure("Late starts", whole(replay.late_starts), "commands sent over a second after their time; reconnects " + whole(c.reconnects)),
      figure("Capture", cap.source + ", answers " + cap.answers, cap.file + (cap.complete ? "" : " (" + (cap.problem || "incomplete") + ")")),
    );
    return boxes;
  }

  function brief(b, k) {
    return b ? ms(b[k]) : "-";
  }

  function replayStatements(replay) {
    const rows = replay.statements.map((s) => [
      el("code", {}, s.statement), whole(s.count), whole(s.captured_count),
      brief(s.latency_ms, "p50"), brief(s.captured_latency_ms, "p50"), brief(s.latency_ms, "p99"), brief(s.captured_latency_ms, "p99"),
      whole(s.rows), whole(s.captured_rows),
      Object.entries(s.errors).map(([code, n]) => code + ": " + whole(n)).join(", ") || "-",
      Object.entries(s.differences).map(([kind, n]) => kind.replace("_", " ") + ": " + whole(n)).join(", ") || "-",
    ]);
    const t = table(["statement", "replayed", "captured", "p50 ms", "captured p50", "p99 ms", "captured p99", "rows", "captured rows", "errors", "differences"], rows);
    t.setAttribute("data-table", "replay-statements");
    return t;
  }

  function replayExamples(replay) {
    const rows = [];
    for (const s of replay.statements) for (const e of s.examples) rows.push([e.kind.replace("_", " "), el("code", {}, e.text), "connection " + e.connection + ", command " + e.command + ", at " + num(e.at_s, 3) + " s", e.captured, e.replayed]);
    if (!rows.length) return null;
    const t = table(["difference", "command", "where", "captured", "replayed"], rows);
    t.setAttribute("data-table", "replay-differences");
    return t;
  }

  function replaySection(replay, out) {
    out.append(el("h2", {}, "Replay"), replayTotals(replay));
    out.append(el("h3", {}, "Per statement: replayed against captured"), replayStatements(replay));
    const examples = replayExamples(replay);
    out.append(el("h3", {}, "Differences from the capture"), examples || el("p", { class: "note" }, "No answer differed from the captured one."));
  }

  function stepFigures(kinds) {
    if (kinds.sweep.length) return kinds.sweep[kinds.sweep.length - 1].steps;
    return kinds.final.map((f) => {
      const p = (q) => { const v = f.latency_ms.percentiles.find((x) => x.percentile === q); return v ? v.ms : null; };
      return { threads: f.threads, tps: f.rates.tps, qps: f.rates.qps, p95_ms: p(95), p99_ms: p(99), ignored_errors: f.counters.ignored_errors, end: f.end };
    });
  }

  function verdictCell(step) {
    const cls = step.verdict === "pass" ? "pass" : "fail";
    const text = step.verdict.replace("_", " ") + (step.reasons.length ? ": " + step.reasons.join(", ") : "");
    return el("span", { class: cls }, text);
  }

  function searchSection(kinds, out) {
    const steps = kinds.search.length ? kinds.search[kinds.search.length - 1].steps : kinds.search_step;
    if (!steps.length) return;
    out.append(el("h2", {}, "Capacity search"));
    // A replay's search steps are speeds of the capture, not rates.
    const speeds = steps.some((s) => s.achieved_speed !== undefined && s.achieved_speed !== null);
    const summary = kinds.search[kinds.search.length - 1];
    if (summary) {
      const bounds = summary.slo.map((b) => "p" + b.percentile + " <= " + b.max_ms + " ms").join(", ");
      const found = speeds ? (summary.max_speed === null || summary.max_speed === undefined ? "none" : num(summary.max_speed, 2) + "×") : summary.max_rate === null ? "none" : whole(summary.max_rate) + "/s";
      out.append(el("div", { class: "figures", "data-totals": "search" },
        figure((speeds ? "Highest speed holding " : "Highest rate holding ") + bounds, found, summary.end.replace("_", " ") + " after " + steps.length + " steps")));
    }
    const ps = steps[0].latency_ms.map((p) => "p" + p.percentile + " ms");
    const target = (s) => speeds ? (s.target_speed === null || s.target_speed === undefined ? "max" : num(s.target_speed, 2) + "×") : (s.target_tps === null ? "unthrottled" : whole(s.target_tps));
    const achieved = (s) => speeds ? num(s.achieved_speed, 2) + "× (" + num(s.achieved_tps, 1) + "/s)" : num(s.achieved_tps, 1);
    const heads = speeds ? ["target speed", "achieved speed"] : ["target/s", "achieved/s"];
    out.append(table(["step", "phase", ...heads, ...ps, "errors", "late starts", "client busy", "verdict"], steps.map((s) =>
      [s.index, s.phase, target(s), achieved(s), ...s.latency_ms.map((p) => ms(p.ms)),
        whole(s.errors), whole(s.late_starts), s.client ? num(100 * s.client.busy_share, 0) + " %" : "-", verdictCell(s)])));
    const x = steps.map((s) => s.index);
    const series = speeds
      ? [{ label: "target speed", values: steps.map((s) => s.target_speed === undefined ? null : s.target_speed) }, { label: "achieved speed", values: steps.map((s) => s.achieved_speed) }]
      : [{ label: "target/s", values: steps.map((s) => s.target_tps) }, { label: "achieved/s", values: steps.map((s) => s.achieved_tps) }];
    steps[0].latency_ms.forEach((p, i) => series.push({ label: "p" + p.percentile + " ms", values: steps.map((s) => (s.latency_ms[i] || {}).ms), scale: "ms" }));
    chart(out, "search", speeds ? "Each step: target and achieved speed, latency" : "Each step: target and achieved rate, latency", x, series, { time: false, xLabel: "step", points: true });
  }

  function fuzzSection(kinds, out) {
    if (!kinds.fuzz.length) return;
    const last = kinds.fuzz[kinds.fuzz.length - 1];
    out.append(el("h2", {}, "Fuzzing"));
    out.append(el("div", { class: "figures", "data-totals": "fuzz" },
      figure("Sessions (execs)", whole(last.sessions), num(last.sessions / Math.max(last.elapsed_s, 1e-9), 1) + " per second"),
      figure("Distinct states", whole(last.states), "corpus " + whole(last.corpus) + " sessions"),
      figure("Findings", whole(last.findings), "checks " + whole(last.checks) + ", packets " + whole(last.packets))));
    const x = kinds.fuzz.map((f) => f.unix_s);
    const rate = kinds.fuzz.map((f, i) => i === 0 ? null : (f.sessions - kinds.fuzz[i - 1].sessions) / Math.max(f.elapsed_s - kinds.fuzz[i - 1].elapsed_s, 1e-9));
    chart(out, "fuzz", "Execs per second and distinct states", x, [
      { label: "execs/s", values: rate }, { label: "states", values: kinds.fuzz.map((f) => f.states), scale: "n" }], {});
  }

  // `wirebench record`: what passed through the proxy, each second.
  function recordSection(kinds, out) {
    const points = kinds.record;
    if (!points.length) return;
    const last = points[points.length - 1];
    const a = last.answer_ms;
    out.append(el("h2", {}, "Recording"));
    out.append(el("div", { class: "figures", "data-totals": "record" },
      figure("Commands recorded", whole(last.commands), num(last.commands / Math.max(last.elapsed_s, 1e-9), 1) + " per second over " + num(last.elapsed_s, 1) + " s"),
      figure("Statements answered", whole(last.reads + last.writes + last.others), "read " + whole(last.reads) + ", write " + whole(last.writes) + ", other " + whole(last.others) + ", errors " + whole(last.errors)),
      figure("Server's answer time (ms)", a ? "p50 " + ms(a.p50) : "-", a ? "p99 " + ms(a.p99) + ", max " + ms(a.max) + ", avg " + ms(a.avg) : "no answer yet"),
      figure("Connections open", whole(last.connections_open), "recorded " + whole(last.connections_opened) + ", server unreachable " + whole(last.upstream_failures)),
      figure("Capture written", num(last.bytes / 1048576, 2) + " MiB", whole(last.bytes) + " bytes")));
    const x = points.map((p) => p.unix_s);
    const per = (k) => points.map((p, i) => i === 0 ? null : (p[k] - points[i - 1][k]) / Math.max(p.elapsed_s - points[i - 1].elapsed_s, 1e-9));
    chart(out, "record", "Commands and errors per second", x, [{ label: "commands/s", values: per("commands") }, { label: "errors/s", values: per("errors"), scale: "errors" }], {});
    chart(out, "record-answer", "The server's answer time since the start (ms)", x, [
      { label: "p50", values: points.map((p) => p.answer_ms ? p.answer_ms.p50 : null) },
      { label: "p99", values: points.map((p) => p.answer_ms ? p.answer_ms.p99 : null) }], {});
    chart(out, "record-connections", "Connections open and the capture's size", x, [
      { label: "connections", values: points.map((p) => p.connections_open) },
      { label: "MiB written", values: points.map((p) => p.bytes / 1048576), scale: "MiB" }], {});
  }

  function intervalCharts(intervals, out, replayed) {
    if (!intervals.length) return;
    out.append(el("h2", {}, "Over time"));
    const x = intervals.map((i) => i.start_unix_s + i.interval_s);
    const throughput = [{ label: "qps", values: intervals.map((i) => i.rates.qps) }, { label: "tps", values: intervals.map((i) => i.rates.tps), scale: "tps" }];
    if (intervals.some((i) => i.target_rate !== null && i.target_rate !== undefined)) {
      throughput.push({ label: "target tps", values: intervals.map((i) => i.target_rate), scale: "tps", dash: [6, 4] });
    }
    chart(out, "throughput", "Throughput: queries and transactions per second", x, throughput, {});
    const latency = [{ label: "avg", values: intervals.map((i) => i.latency_ms.avg) }];
    const listed = intervals[intervals.length - 1].latency_ms.percentiles.map((p) => p.percentile);
    for (const q of listed) latency.push({ label: "p" + q, values: intervals.map((i) => { const v = i.latency_ms.percentiles.find((p) => p.percentile === q); return v ? v.ms : null; }) });
    latency.push({ label: "max", values: intervals.map((i) => i.latency_ms.max) });
    chart(out, "latency", "Latency (ms) of each interval", x, latency, {});
    const errors = [
      { label: "errors/s", values: intervals.map((i) => i.rates.ignored_errors_per_s) },
      { label: "reconnects/s", values: intervals.map((i) => i.rates.reconnects_per_s) },
    ];
    if (intervals.some((i) => i.late_starts !== null && i.late_starts !== undefined)) errors.push({ label: "late starts/s", values: intervals.map((i) => i.late_starts === null ? null : i.late_starts / i.interval_s) });
    if (intervals.some((i) => i.dropped !== null && i.dropped !== undefined)) errors.push({ label: "dropped/s", values: intervals.map((i) => i.dropped === null ? null : i.dropped / i.interval_s) });
    chart(out, "errors", "Errors, reconnects and late starts per second", x, errors, {});
    // A replay's connections are the capture's, which its intervals do not count.
    const conns = replayed ? [] : [{ label: "connections", values: intervals.map((i) => i.threads) }];
    if (intervals.some((i) => i.idle_connections !== undefined)) conns.push({ label: "idle connections", values: intervals.map((i) => i.idle_connections === undefined ? null : i.idle_connections) });
    if (intervals.some((i) => i.client_busy !== undefined)) conns.push({ label: "client busy %", values: intervals.map((i) => i.client_busy === undefined ? null : 100 * i.client_busy), scale: "%" });
    if (conns.length) chart(out, "connections", replayed ? "The client's load" : "Connections and the client's load", x, conns, {});
    if (intervals.some((i) => i.server)) {
      const f = (k, scale) => intervals.map((i) => (i.server && i.server.figures[k] !== null ? i.server.figures[k] : null));
      chart(out, "server", "The server (--server-stats)", x, [
        { label: "CPU µs per query", values: f("cpu_us_per_query") },
        { label: "cores busy", values: f("cpu_cores"), scale: "cores" },
        { label: "rows read per query", values: f("rows_read_per_query"), scale: "rows" }], {});
    }
  }

  function connectionCharts(sources, out) {
    const runs = sources.map((s) => ({ label: s.label, kinds: sorted(s) })).filter((s) => !s.kinds.search_step.length && !s.kinds.search.length);
    const bySource = runs.map((s) => ({ label: s.label, steps: stepFigures(s.kinds) })).filter((s) => s.steps.length > 0);
    const threads = [...new Set(bySource.flatMap((s) => s.steps.map((x) => x.threads)))].sort((a, b) => a - b);
    if (threads.length < 2 && bySource.length < 2) return;
    out.append(el("h2", {}, "By connections"));
    const at = (s, k) => threads.map((t) => { const step = s.steps.find((x) => x.threads === t); return step && step[k] !== null ? step[k] : null; });
    chart(out, "by-connections-qps", "Queries per second by connections", threads, bySource.map((s) => ({ label: s.label, values: at(s, "qps") })), { time: false, xLabel: "connections", points: true });
    chart(out, "by-connections-p95", "95th percentile latency (ms) by connections", threads, bySource.map((s) => ({ label: s.label, values: at(s, "p95_ms") })), { time: false, xLabel: "connections", points: true });
    const rows = [];
    for (const s of bySource) for (const step of s.steps) rows.push([s.label, step.threads, num(step.tps, 2), num(step.qps, 2), ms(step.p95_ms), ms(step.p99_ms), whole(step.ignored_errors)]);
    out.append(table(["result", "connections", "tps", "qps", "p95 ms", "p99 ms", "errors"], rows));
  }

  // One uPlot chart, made once and then given new data.
  function chart(out, id, title, x, series, opts) {
    const box = el("div", { class: "chart", "data-chart": id, "data-points": String(x.length) }, el("h3", {}, title));
    out.append(box);
    const scales = [...new Set(series.map((s) => s.scale || "y"))];
    // On paper the charts take the page's width (A4 or Letter, portrait).
    const width = printing() ? 680 : Math.max(320, Math.min(out.clientWidth || 1100, 1130));
    const axes = [opts.time === false ? { label: opts.xLabel || "", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] } : {}];
    scales.forEach((scale, i) => axes.push({ scale, side: i === 0 ? 3 : 1, grid: { show: i === 0 }, size: 80 }));
    const config = {
      width, height: 240,
      scales: { x: { time: opts.time !== false } },
      axes,
      series: [{}].concat(series.map((s, i) => ({
        label: s.label, scale: s.scale || "y", stroke: palette[i % palette.length], width: 1.5, dash: s.dash,
        spanGaps: false, points: { show: opts.points || x.length < 60 },
      }))),
    };
    const values = [x].concat(series.map((s) => s.values.map((v) => (v === undefined ? null : v))));
    let made;
    try {
      made = new uPlot(config, values, box);
    } catch (e) {
      box.append(el("p", { class: "note" }, "chart not drawn: " + e));
      return;
    }
    charts.set(id, made);
  }

  function draw() {
    drawPending = false;
    for (const c of charts.values()) c.destroy();
    charts.clear();
    const main = document.getElementById("main");
    main.replaceChildren();
    const sources = data.sources;
    const status = document.getElementById("status");
    status.className = data.live ? (ended ? "ended" : "live") : "";
    status.textContent = data.live ? (ended ? "The command has ended." : "Live: updates each interval.") : "";
    document.body.dataset.events = String(events);
    document.body.dataset.embedded = String(data.events_from || 0);
    document.body.dataset.ended = String(ended);
    for (const source of sources) {
      const kinds = sorted(source);
      const section = el("section", { "data-source": source.label });
      main.append(section);
      if (sources.length > 1) section.append(el("h2", {}, source.label));
      const searched = kinds.search_step.length > 0 || kinds.search.length > 0;
      if (sources.length === 1 && searched) searchSection(kinds, section);
      // Side by side (compare), the table by connections below has each
      // file's figures.
      const last = searched || sources.length > 1 ? null : kinds.final[kinds.final.length - 1];
      const replay = searched || sources.length > 1 ? null : kinds.replay[kinds.replay.length - 1];
      if (replay) {
        replaySection(replay, section);
      } else if (last) {
        section.append(el("h2", {}, kinds.final.length > 1 ? "Last step's totals" : "Totals"), runTotals(last));
        const statements = statementsTable(last);
        if (statements && sources.length === 1) section.append(el("h3", {}, "Per statement kind (ms)"), statements);
      } else if (!searched && sources.length === 1 && kinds.interval.length) {
        section.append(el("p", { class: "note" }, "No final result yet: the figures so far, interval by interval."));
      }
      if (sources.length === 1) {
        fuzzSection(kinds, section);
        recordSection(kinds, section);
        intervalCharts(kinds.interval, section, kinds.replay.length > 0);
      }
    }
    connectionCharts(sources, main);
    if (sources.length > 1) {
      const searched = sources.map((s) => ({ label: s.label, kinds: sorted(s) })).filter((s) => s.kinds.search.length);
      for (const s of searched) {
        const sub = el("section", { "data-source": s.label + " search" }, el("h2", {}, s.label));
        main.append(sub);
        searchSection(s.kinds, sub);
      }
    }
  }

  function printing() {
    return window.matchMedia !== undefined && window.matchMedia("print").matches;
  }

  function scheduleDraw() {
    if (!drawPending) {
      drawPending = true;
      setTimeout(draw, 200);
    }
  }

  function listen() {
    const stream = new EventSource(data.events_url + "?from=" + events);
    stream.onmessage = (message) => {
      events += 1;
      data.sources[0].lines.push(JSON.parse(message.data));
      scheduleDraw();
    };
    stream.addEventListener("end", () => {
      ended = true;
      stream.close();
      scheduleDraw();
    });
    stream.onerror = () => {
      if (stream.readyState === EventSource.CLOSED && !ended) {
        ended = true;
        scheduleDraw();
      }
    };
  }

  document.getElementById("title").textContent = data.title;
  document.getElementById("subtitle").textContent = data.subtitle || "";
  draw();
  if (data.live) listen();
  window.addEventListener("beforeprint", draw);
  window.addEventListener("afterprint", draw);
  if (window.matchMedia !== undefined) window.matchMedia("print").addEventListener("change", draw);
  let width = window.innerWidth;
  window.addEventListener("resize", () => { if (window.innerWidth !== width) { width = window.innerWidth; scheduleDraw(); } });
})();
