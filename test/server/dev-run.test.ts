// `npm run dev` (scripts/dev.ts), as a developer runs it: the whole product starts, and its
// merchant admin, which the development login opens with no Shopify session for any shop named
// in ?shop=, answers on this machine's loopback only. On the network's address it would give a
// neighbour on the same Wi-Fi the payments, the customers' personal data and the gateway
// credentials. A second run on the same ports says which port is taken and how to move it.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { freePort } from "../support/free-port";

/** An address of this machine that other machines of its network reach it by (not loopback). */
const networkAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry !== undefined && entry.family === "IPv4" && !entry.internal)?.address;

let child: ChildProcess | undefined;
let dir: string | undefined;
let appPort = 0;
let output = "";
let runEnv: Record<string, string | undefined> = {};

/** `npm run dev`'s command ("tsx scripts/dev.ts", on the project's Node 22). */
function startDevRun(env: Record<string, string | undefined>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "scripts/dev.ts"], { cwd: process.cwd(), env: env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"] });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dev-run-"));
  appPort = await freePort();
  const env: Record<string, string | undefined> = { ...process.env };
  // A developer's shell: none of the test runner's or a stack's settings.
  for (const name of Object.keys(env)) if (name.startsWith("VITEST") || name === "NODE_ENV" || name === "HOST" || name === "SHOPIFY_APP_URL") delete env[name];
  Object.assign(env, {
    PORT: String(appPort),
    SANDBOX_PORT: String(await freePort()),
    STANDIN_PORT: String(await freePort()),
    DATABASE_URL: `file:${join(dir, "app.db")}`,
    SANDBOX_DB: join(dir, "sandbox.db"),
    LOG_LEVEL: "error",
  });
  runEnv = env;
  child = startDevRun(env);
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const until = Date.now() + 90_000;
  while (!output.includes("Crypto checkout is running locally")) {
    if (child.exitCode !== null) throw new Error(`npm run dev ended early:\n${output.slice(-2000)}`);
    if (Date.now() > until) throw new Error(`npm run dev did not start in time:\n${output.slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}, 120_000);

afterAll(async () => {
  const running = child;
  if (running && running.exitCode === null) {
    const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
    running.kill("SIGTERM");
    const forced = setTimeout(() => running.exitCode === null && running.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(forced);
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

it("starts the whole product, with the merchant admin on loopback", async () => {
  const local = await fetch(`http://127.0.0.1:${appPort}/app/settings?shop=demo-shop.myshopify.com`, { redirect: "manual" });
  expect(local.status).toBe(200);
  expect(output).toContain(`Merchant admin        http://localhost:${appPort}/app?shop=demo-shop.myshopify.com`);
});

it.skipIf(!networkAddress)(
  "does not open the merchant admin (the development login, no Shopify session) to another machine of the network",
  async () => {
    // The same request, as a neighbour on the network sends it to this machine's address.
    const fromNetwork = await fetch(`http://${networkAddress}:${appPort}/app/settings?shop=demo-shop.myshopify.com`, { redirect: "manual" }).then(
      (response) => `answered ${response.status}`,
      () => "refused",
    );
    expect(fromNetwork, "the unauthenticated development admin must listen on loopback only, like the sandbox and the stand-in").toBe("refused");
  },
  60_000,
);

/** How a run that must stop by itself ended: its exit code and all it wrote (killed if the test ends first). */
async function endOf(run: ReturnType<typeof startDevRun>): Promise<{ code: number | null; said: string }> {
  onTestFinished(() => void (run.exitCode === null && run.signalCode === null && run.kill("SIGKILL")));
  let said = "";
  run.stdout?.on("data", (chunk: Buffer) => (said += chunk.toString()));
  run.stderr?.on("data", (chunk: Buffer) => (said += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => run.once("exit", resolve));
  return { code, said };
}

it("a second run on the same ports ends at once, saying which port is taken and which variable moves it", async () => {
  const second = startDevRun(runEnv);
  const { code, said } = await endOf(second);
  expect(code).toBe(1);
  expect(said).toContain(`The gateway sandbox cannot listen on port ${runEnv.SANDBOX_PORT} (EADDRINUSE)`);
  expect(said).toContain("set SANDBOX_PORT to another port");
  expect(said).not.toMatch(/\n\s+at /);
  // The first run goes on serving.
  expect((await fetch(`http://127.0.0.1:${appPort}/app/settings?shop=demo-shop.myshopify.com`, { redirect: "manual" })).status).toBe(200);
}, 60_000);

it("a run asked to listen on every interface stops before anything listens, saying why (the development login is loopback only)", async () => {
  const exposed = startDevRun({ ...runEnv, HOST: "0.0.0.0", PORT: String(await freePort()), SANDBOX_PORT: String(await freePort()), STANDIN_PORT: String(await freePort()) });
  const { code, said } = await endOf(exposed);
  expect(code).toBe(1);
  expect(said).toContain("DEV_ADMIN_LOGIN: needs HOST on loopback");
  expect(said).not.toMatch(/\n\s+at /);
  expect(said).not.toContain("Crypto checkout is running locally.");
}, 60_000);
