/** The dashboard's stylesheet, served from /assets/app.css (no external fonts: the system stack). */
export const STYLES = `
:root{--bg:#f7f7f8;--panel:#fff;--text:#1d1f24;--muted:#5d6370;--border:#d9dce1;--accent:#2456c9;--accent-text:#fff;
--ok:#1f7a3a;--warn:#9a6200;--bad:#b3261e;--code:#f0f1f3;--focus:#ffb000;color-scheme:light}
:root[data-theme=dark]{--bg:#15171b;--panel:#1e2127;--text:#e6e8eb;--muted:#a2a8b3;--border:#363b44;--accent:#7aa2ff;
--accent-text:#0b1020;--ok:#5bd17f;--warn:#f0b44c;--bad:#ff8a80;--code:#272b33;color-scheme:dark}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){--bg:#15171b;--panel:#1e2127;--text:#e6e8eb;
--muted:#a2a8b3;--border:#363b44;--accent:#7aa2ff;--accent-text:#0b1020;--ok:#5bd17f;--warn:#f0b44c;--bad:#ff8a80;
--code:#272b33;color-scheme:dark}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:var(--panel);padding:6px;z-index:9}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:12px;padding:8px 20px;background:var(--panel);
border-bottom:1px solid var(--border)}
header.top .brand{font-weight:700;margin-right:8px;text-decoration:none;color:var(--text)}
nav.main{display:flex;flex-wrap:wrap;gap:4px}
nav.main a{padding:6px 10px;border-radius:6px;text-decoration:none;color:var(--text)}
nav.main a[aria-current=page]{background:var(--accent);color:var(--accent-text)}
.tools{margin-left:auto;display:flex;gap:8px;align-items:center;font-size:13px;color:var(--muted)}
main{padding:16px 20px;max-width:1400px}
h1{font-size:22px;margin:4px 0 14px}h2{font-size:17px;margin:22px 0 10px}
.banner{padding:8px 12px;border-radius:6px;border:1px solid var(--border);background:var(--panel);margin-bottom:12px}
.banner.warn{border-color:var(--warn)}.banner.bad{border-color:var(--bad)}.banner.ok{border-color:var(--ok)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(140px,1fr));gap:10px}
.card{background:var(--panel);border:1px solid var(--border);border-radius:8px;padding:10px 12px}
a.card{text-decoration:none;color:inherit}a.card:hover{border-color:var(--accent)}
.card .label{color:var(--muted);font-size:13px}.card .value{font-size:24px;font-weight:650}
.panel{background:var(--panel);border:1px solid var(--border);border-radius:8px;padding:12px;margin-bottom:12px}
table{border-collapse:collapse;width:100%;background:var(--panel);font-size:14px}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--border);vertical-align:top}
th{font-weight:600;color:var(--muted);white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.err{max-width:420px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:var(--bad)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
pre{background:var(--code);padding:10px;border-radius:6px;overflow:auto;max-height:420px;white-space:pre-wrap;word-break:break-word}
.status{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;border:1px solid var(--border)}
.status.done,.status.live,.status.delivered{color:var(--ok);border-color:var(--ok)}
.status.processing,.status.stopping{color:var(--accent);border-color:var(--accent)}
.status.queued,.status.pending,.status.inactive{color:var(--muted)}
.status.cancelled,.status.stale{color:var(--warn);border-color:var(--warn)}
.status.dead_letter,.status.stopped,.status.paused,.status.failed{color:var(--bad);border-color:var(--bad)}
form.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-end;margin-bottom:12px}
form.filters label{display:flex;flex-direction:column;font-size:12px;color:var(--muted);gap:2px}
input,select,button{font:inherit;color:var(--text);background:var(--panel);border:1px solid var(--border);border-radius:6px;padding:5px 8px}
button,.button{cursor:pointer;background:var(--accent);color:var(--accent-text);border-color:var(--accent);text-decoration:none;
padding:5px 10px;border-radius:6px;display:inline-block}
button.secondary{background:var(--panel);color:var(--text);border-color:var(--border)}
button.danger{background:#b3261e;border-color:#b3261e;color:#fff}
button:disabled{opacity:.5;cursor:not-allowed}
.pager{display:flex;gap:10px;margin:10px 0;align-items:center}
.estimate{text-decoration:underline dotted;cursor:help}
.muted{color:var(--muted)}.small{font-size:13px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}dl.kv dt{color:var(--muted)}dl.kv dd{margin:0}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:10px}
svg.chart{width:100%;height:140px;display:block}
svg.chart .bar{fill:var(--accent)}svg.chart .bar.bad{fill:var(--bad)}svg.chart .bar.warn{fill:var(--warn)}
svg.chart .axis{stroke:var(--border)}svg.chart text{fill:var(--muted);font-size:10px}
.actions{display:flex;gap:8px;flex-wrap:wrap;align-items:center}
#flash{margin:12px 20px 0}#flash:empty{display:none}
.confirm{border:1px solid var(--warn);padding:8px 12px;border-radius:6px;background:var(--panel)}
.flow-graph{overflow:auto;background:var(--panel);border:1px solid var(--border);border-radius:8px;padding:6px;max-height:640px}
.flow-graph svg{display:block}
.flow-graph .edge{fill:none;stroke:var(--muted);stroke-width:1.4}.flow-graph marker path{fill:var(--muted)}
.flow-graph .step rect{fill:var(--panel);stroke:var(--border);stroke-width:2}
.flow-graph .step text{text-anchor:middle;fill:var(--text);font-size:12px}.flow-graph .step text.state{fill:var(--muted);font-size:11px}
.flow-graph .step a:hover rect,.flow-graph .step a:focus rect{stroke-width:3}
.flow-graph .step.done rect{stroke:var(--ok);fill:color-mix(in srgb,var(--ok) 12%,var(--panel))}
.flow-graph .step.processing rect{stroke:var(--accent);fill:color-mix(in srgb,var(--accent) 12%,var(--panel))}
.flow-graph .step.queued rect{stroke:var(--accent);stroke-dasharray:5 3}
.flow-graph .step.waiting rect{stroke:var(--muted);stroke-dasharray:2 3}
.flow-graph .step.held rect{stroke:var(--warn);fill:color-mix(in srgb,var(--warn) 14%,var(--panel))}
.flow-graph .step.dead_lettered rect{stroke:var(--bad);fill:color-mix(in srgb,var(--bad) 14%,var(--panel))}
.flow-graph .step.cancelled rect{stroke:var(--muted);fill:var(--code)}
.legend .swatch{display:inline-block;width:12px;height:12px;border-radius:3px;border:2px solid var(--muted);margin:0 4px -2px 8px}
.swatch.done{border-color:var(--ok)}.swatch.processing,.swatch.queued{border-color:var(--accent)}.swatch.queued{border-style:dashed}
.swatch.waiting{border-style:dotted}.swatch.held{border-color:var(--warn)}.swatch.dead_lettered{border-color:var(--bad)}.swatch.cancelled{background:var(--code)}
.status.succeeded{color:var(--ok);border-color:var(--ok)}.status.running{color:var(--accent);border-color:var(--accent)}
.status.held{color:var(--warn);border-color:var(--warn)}.status.failed,.status.dead_lettered{color:var(--bad);border-color:var(--bad)}
h3{font-size:15px;margin:16px 0 8px}
textarea{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:var(--text);background:var(--panel);
border:1px solid var(--border);border-radius:6px;padding:5px 8px}
form.stack{display:flex;flex-direction:column;gap:8px;max-width:640px;margin:0 0 8px}
form.stack label{display:flex;flex-direction:column;font-size:13px;color:var(--muted);gap:2px}
form.stack fieldset{border:1px solid var(--border);border-radius:6px;padding:6px 10px;margin:0}
form.stack fieldset label{flex-direction:row;align-items:center;gap:6px;color:var(--text)}
form.stack legend{font-size:13px;color:var(--muted)}
.actions:has(form.stack fieldset){align-items:flex-start}
.status.waiting{color:var(--accent);border-color:var(--accent)}.status.timed_out{color:var(--warn);border-color:var(--warn)}
table.steps .kind{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
table.steps td{white-space:nowrap}table.steps td.value{white-space:normal;min-width:200px;max-width:420px}
table.steps td.value code{overflow-wrap:anywhere}
table.steps summary{cursor:pointer}
.login{max-width:380px;margin:60px auto}
.login form{display:flex;flex-direction:column;gap:10px}
`;
