import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";
import Database from "better-sqlite3";

const db = new Database("./app.db");
const soniq = new Soniq({ backend: sqliteBackend({ database: db }) }); // shares your connection, never closes it
const sendInvoice = soniq.job("orders.send_invoice", async ({ orderId }: { orderId: number }) => {
  return { invoiced: orderId };
});
await soniq.setup();
db.exec("CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, total_cents INTEGER NOT NULL)");

const placeOrder = db.transaction((totalCents: number) => {
  const order = db.prepare("INSERT INTO orders (total_cents) VALUES (?)").run(totalCents);
  const orderId = Number(order.lastInsertRowid);
  const invoice = sendInvoice.enqueue({ orderId }, { tx: db }); // no await in here: the row is written now
  return { orderId, invoice }; // (better-sqlite3 refuses a transaction function that returns a promise)
});
const { orderId, invoice } = placeOrder(4250); // committed: the order and its job
console.log(`order ${orderId} placed, invoice job ${(await invoice).id}`);
// -> order 1 placed, invoice job <id>

await soniq.close();
db.close();
