/**
 * A flow's steps drawn as an SVG graph: dagre (`@dagrejs/dagre`) lays the steps out top to bottom, parents
 * above their dependents; each box is coloured by its state and links to the step's job or dead letter.
 * Flows above `MAX_DRAWN_STEPS` are not drawn (the layout is quadratic-ish and the picture unreadable);
 * the page lists their steps in the table instead.
 */
import dagre, { type Edge } from "@dagrejs/dagre";
import { type Html, html, raw } from "../html.js";

export const MAX_DRAWN_STEPS = 300;

const NODE_WIDTH = 168;
const NODE_HEIGHT = 46;
const MARGIN = 12;

export interface GraphStep {
  ref: string;
  jobName: string;
  state: string;
  dependsOn: readonly string[];
  /** Where the box links to (the step's job or dead letter), or null when there is nothing to show yet. */
  href: string | null;
}

interface Placed {
  step: GraphStep;
  x: number;
  y: number;
}

interface Layout {
  width: number;
  height: number;
  nodes: Placed[];
  edges: { from: string; to: string; points: { x: number; y: number }[] }[];
}

/** Positions for every step and a route for every edge (parent to dependent). */
export function layoutFlow(steps: readonly GraphStep[]): Layout {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 44, marginx: MARGIN, marginy: MARGIN });
  g.setDefaultEdgeLabel(() => ({}));
  const known = new Set(steps.map((s) => s.ref));
  for (const step of steps) g.setNode(step.ref, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const step of steps)
    for (const parent of step.dependsOn) if (known.has(parent)) g.setEdge(parent, step.ref);
  dagre.layout(g);
  const graph = g.graph();
  return {
    width: Math.ceil(graph.width ?? NODE_WIDTH + 2 * MARGIN),
    height: Math.ceil(graph.height ?? NODE_HEIGHT + 2 * MARGIN),
    nodes: steps.map((step) => {
      const n = g.node(step.ref);
      return { step, x: n.x, y: n.y };
    }),
    edges: g.edges().map((e: Edge) => ({ from: e.v, to: e.w, points: g.edge(e).points ?? [] })),
  };
}

const fixed = (n: number): string => n.toFixed(1);

/** The text of a box, cut so it fits its width. */
function fit(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function node(p: Placed): Html {
  const { step } = p;
  const left = p.x - NODE_WIDTH / 2;
  const top = p.y - NODE_HEIGHT / 2;
  const state = step.state.replace(/[^a-z_]/g, "");
  const body = html`<rect x="${fixed(left)}" y="${fixed(top)}" width="${NODE_WIDTH}" height="${NODE_HEIGHT}" rx="6"></rect>
<text x="${fixed(p.x)}" y="${fixed(top + 19)}" class="ref">${fit(step.ref, 22)}</text>
<text x="${fixed(p.x)}" y="${fixed(top + 36)}" class="state">${state}</text>
<title>${step.ref}: ${step.jobName}, ${step.state}</title>`;
  const inner = step.href
    ? html`<a href="${step.href}" aria-label="${step.ref} (${step.state})">${body}</a>`
    : body;
  return html`<g class="step ${state}" data-ref="${step.ref}" data-state="${state}">${inner}</g>`;
}

function edge(e: Layout["edges"][number]): Html {
  const d = e.points.map((pt, i) => `${i === 0 ? "M" : "L"}${fixed(pt.x)},${fixed(pt.y)}`).join(" ");
  return html`<path class="edge" d="${d}" marker-end="url(#flow-arrow)" data-from="${e.from}" data-to="${e.to}"></path>`;
}

/** The SVG of a flow's steps, or a note when there are too many to draw. */
export function flowGraph(steps: readonly GraphStep[]): Html {
  if (steps.length === 0) return html`<p class="muted">This flow has no steps.</p>`;
  if (steps.length > MAX_DRAWN_STEPS) {
    return html`<p class="muted" data-testid="flow-graph-skipped">${steps.length} steps: too many to draw (the graph is drawn up to ${MAX_DRAWN_STEPS}); the table below lists them.</p>`;
  }
  const layout = layoutFlow(steps);
  return html`<div class="flow-graph"><svg data-testid="flow-graph" role="img" aria-label="The flow's steps and their dependencies" viewBox="0 0 ${layout.width} ${layout.height}" width="${layout.width}" height="${layout.height}">
${raw('<defs><marker id="flow-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"></path></marker></defs>')}
${layout.edges.map(edge)}
${layout.nodes.map(node)}
</svg></div>`;
}
