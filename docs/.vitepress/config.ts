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
      { text: "API", link: "/api/" },
    ],
    sidebar: {
      "/guide/": guide,
      "/api/": [{ text: "API reference", link: "/api/", items: apiSidebar }],
    },
    search: { provider: "local" },
    outline: { level: [2, 3] },
    footer: { message: "Released under the MIT License." },
  },
});
