import { defineConfig } from "drizzle-kit";

// Only `drizzle-kit generate` uses this file; it needs no database.
export default defineConfig({
  dialect: "postgresql",
  schema: "../core/src/schema/pg.ts",
  out: "./drizzle",
});
