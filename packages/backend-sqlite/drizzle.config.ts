import { defineConfig } from "drizzle-kit";

// Only `drizzle-kit generate` uses this file; it needs no database.
export default defineConfig({
  dialect: "sqlite",
  schema: "../core/src/schema/sqlite.ts",
  out: "./drizzle",
});
