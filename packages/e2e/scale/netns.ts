/**
 * Worker hosts for the scale suite: each a network namespace of its own (`ip netns`) with a veth pair to
 * the machine, addresses 10.<net>.<i>.1 (machine side) and .2 (host side) on a /30, and its own hostname
 * (a UTS namespace per process, `unshare --uts`). Processes in a host reach only the machine-side address
 * of their veth, where the test's PgBouncer listens. `remove()` deletes the namespace (its veth goes with
 * it). Where the machine forbids namespaces, `createHosts` fails with the reason: nothing is skipped.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomInt } from "node:crypto";

export interface Host {
  name: string;
  hostname: string;
  /** The machine-side address of this host's veth (where its processes connect to). */
  gateway: string;
  /** Start `argv` inside the host (its namespace and hostname), with an IPC channel like `fork`. */
  spawn(argv: string[], env: Record<string, string>): ChildProcess;
  remove(): void;
}

function ip(args: string[]): void {
  try {
    execFileSync("ip", args, { stdio: "pipe" });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(
      `worker hosts need network namespaces (root, iproute2, CAP_NET_ADMIN); \`ip ${args.join(" ")}\` failed: ${stderr ?? String(err)}`,
    );
  }
}

export function createHosts(count: number): Host[] {
  const net = randomInt(100, 250);
  const tag = randomInt(1000, 9999);
  const hosts: Host[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const name = `soniq-h${i}-${tag}`;
      const outside = `sq${tag}h${i}a`;
      const inside = `sq${tag}h${i}b`;
      const gateway = `10.${net}.${i}.1`;
      ip(["netns", "add", name]);
      let created = true;
      const host: Host = {
        name,
        hostname: `soniq-host-${i}`,
        gateway,
        spawn(argv, env) {
          const script = 'hostname "$SONIQ_HOSTNAME" && exec "$@"';
          return spawn(
            "ip",
            ["netns", "exec", name, "unshare", "--uts", "--", "sh", "-c", script, "sh", ...argv],
            {
              stdio: ["ignore", "inherit", "inherit", "ipc"],
              env: { ...process.env, ...env, SONIQ_HOSTNAME: `soniq-host-${i}` },
            },
          );
        },
        remove() {
          if (!created) return;
          created = false;
          execFileSync("ip", ["netns", "del", name], { stdio: "pipe" });
        },
      };
      hosts.push(host);
      ip(["link", "add", outside, "type", "veth", "peer", "name", inside]);
      ip(["link", "set", inside, "netns", name]);
      ip(["addr", "add", `${gateway}/30`, "dev", outside]);
      ip(["link", "set", outside, "up"]);
      ip(["-n", name, "addr", "add", `10.${net}.${i}.2/30`, "dev", inside]);
      ip(["-n", name, "link", "set", inside, "up"]);
      ip(["-n", name, "link", "set", "lo", "up"]);
    }
    return hosts;
  } catch (err) {
    for (const h of hosts) h.remove();
    throw err;
  }
}
