import { postgresBackend } from "@soniq/backend-postgres";
import { Soniq } from "@soniq/core";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const soniq = new Soniq({ backend: postgresBackend({ pool }) }); // uses your pool, never ends it
const sendInvoice = soniq.job("orders.send_invoice", async ({ orderId }: { orderId: number }) => {
  return { invoiced: orderId };
});
await soniq.setup();
await pool.query("CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, total_cents integer NOT NULL)");

const client = await pool.connect();
try {
  await client.query("BEGIN");
  const { rows } = await client.query("INSERT INTO orders (total_cents) VALUES ($1) RETURNING id", [4250]);
  await sendInvoice.enqueue({ orderId: rows[0].id }, { tx: client }); // same connection, same transaction
  await client.query("COMMIT"); // the order and its job appear together
} catch (err) {
  await client.query("ROLLBACK"); // neither exists
  throw err;
} finally {
  client.release();
}

const [job] = await soniq.jobs.list({ jobName: "orders.send_invoice" });
console.log(job?.status, job?.args);
// -> queued { orderId: 1 }
await soniq.close();
await pool.end();
