import { existsSync, readFileSync } from "node:fs";
import { defineConfig } from "vitepress";

/** The API reference's sidebar, written by scripts/api.mjs (TypeDoc) before every dev or build run. */
const apiSidebarFile = new URL("../api/typedoc-sidebar.json", import.meta.url);
const apiSidebar = existsSync(apiSidebarFile) ? JSON.parse(readFileSync(apiSidebarFile, "utf8")) : [];

/** The guide, in reading order: what Soniq is and does, then each feature, then running it in production. */
const guide = [
  {
    text: "Introduction",
    items: [
      { text: "Getting started", link: "/guide/getting-started" },
      { text: "Jobs and retries", link: "/guide/jobs-and-retries" },
      { text: "Transactional enqueue", link: "/guide/transactional-enqueue" },
      { text: "Dead letters", link: "/guide/dead-letters" },
    ],
  },
  {
    text: "Features",
    items: [
      { text: "Durable steps", link: "/guide/durable-steps" },
      { text: "Argument versions", link: "/guide/argument-versions" },
      { text: "Workflows", link: "/guide/workflows" },
      { text: "Recurring jobs", link: "/guide/recurring-jobs" },
      { text: "Queue controls and explain", link: "/guide/queue-controls" },
      { text: "Observability", link: "/guide/observability" },
      { text: "Webhooks", link: "/guide/webhooks" },
    ],
  },
  {
    text: "Tools",
    items: [
      { text: "Dashboard", link: "/guide/dashboard" },
      { text: "CLI", link: "/guide/cli" },
      { text: "MCP server for agents", link: "/guide/mcp" },
    ],
  },
  {
    text: "Production",
    items: [
      { text: "Reliability", link: "/guide/reliability" },
      { text: "Past one machine", link: "/guide/past-one-machine" },
      { text: "Writing a backend", link: "/guide/writing-a-backend" },
      { text: "Troubleshooting", link: "/guide/troubleshooting" },
      { text: "Benchmark", link: "/guide/benchmark" },
    ],
  },
];

/** Each package in full (what its README held before the site), and the benchmark's method, results and log. */
const reference = [
  {
    text: "Reference",
    items: [
      { text: "Overview", link: "/reference/" },
      { text: "Options", link: "/reference/options" },
      { text: "@soniq/core", link: "/reference/core" },
      { text: "@soniq/cli", link: "/reference/cli" },
      { text: "@soniq/dashboard", link: "/reference/dashboard" },
      { text: "@soniq/mcp", link: "/reference/mcp" },
      { text: "@soniq/backend-postgres", link: "/reference/backend-postgres" },
      { text: "@soniq/backend-sqlite", link: "/reference/backend-sqlite" },
      { text: "@soniq/backend-memory", link: "/reference/backend-memory" },
      { text: "@soniq/testkit", link: "/reference/testkit" },
      { text: "Conformance cases", link: "/reference/testkit-cases" },
      { text: "@soniq/opentelemetry", link: "/reference/opentelemetry" },
      { text: "@soniq/prometheus", link: "/reference/prometheus" },
      { text: "What redact hides", link: "/reference/redaction" },
      { text: "Installing in detail", link: "/reference/installing" },
      { text: "The example app", link: "/reference/example-app" },
      { text: "Developing and packing", link: "/reference/contributing" },
    ],
  },
  {
    text: "Benchmark",
    items: [
      { text: "Method", link: "/benchmark/method" },
      { text: "Published results", link: "/benchmark/published" },
      { text: "Results", link: "/benchmark/results" },
      { text: "Optimisation log", link: "/benchmark/optimisation-log" },
    ],
  },
];

export default defineConfig({
  title: "Soniq",
  description: "Background jobs for Node.js and TypeScript in the database you already have.",
  cleanUrls: true,
  lastUpdated: false,
  // Everything the site needs is built into it: no web fonts, no CDN, no remote search.
  head: [["meta", { name: "theme-color", content: "#3c6e71" }]],
  srcExclude: ["snippets/**", "test/**", "screenshots/**", "README.md"],
  themeConfig: {
    nav: [
      { text: "Guide", link: "/guide/getting-started" },
      { text: "Reference", link: "/reference/" },
      { text: "API", link: "/api/" },
    ],
    sidebar: {
      "/guide/": [...guide, ...reference],
      "/reference/": [...reference, ...guide],
      "/benchmark/": [...reference, ...guide],
      "/api/": [{ text: "API reference", link: "/api/", items: apiSidebar }],
    },
    search: { provider: "local" },
    outline: { level: [2, 3] },
    footer: { message: "Released under the MIT License." },
  },
});
