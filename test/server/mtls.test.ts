// Real HTTPS and HTTP servers on 127.0.0.1 with the mTLS options and guard in front of
// dummy routes; clients are node:https/node:http requests with real certificates.
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTlsServerOptions,
  describeClientCertificate,
  MtlsConfigurationError,
  SHOPIFY_MTLS_PROTECTED_PATHS,
  shopifyMtlsGuard,
  type ShopifyMtlsGuardOptions,
} from "../../server/mtls";
import { createTestPki, type KeyPairFiles, type TestPki } from "./certificates";

interface Reply {
  status: number;
  body: string;
}

interface LogLine {
  message: string;
  fields: Record<string, unknown> | undefined;
}

interface RunningServer {
  port: number;
  logs: LogLine[];
  close(): Promise<void>;
}

function dummyApp(guard: Omit<ShopifyMtlsGuardOptions, "logger">, logs: LogLine[]): express.Express {
  const app = express();
  app.get("/whoami", (req, res) => {
    res.json({ certificate: describeClientCertificate(req) });
  });
  app.use(shopifyMtlsGuard({ ...guard, logger: { warn: (message, fields) => logs.push({ message, fields }) } }));
  app.post("/payments/session", (_req, res) => {
    res.status(200).json({ handled: "payment session" });
  });
  app.get("/app", (_req, res) => {
    res.status(200).json({ handled: "admin" });
  });
  // Anything else reached the app (past the guard) but has no route.
  app.use((_req, res) => {
    res.status(404).json({ handled: "no route" });
  });
  return app;
}

async function listen(server: http.Server | https.Server, logs: LogLine[]): Promise<RunningServer> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    logs,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

async function startHttps(
  pki: TestPki,
  guard: Omit<ShopifyMtlsGuardOptions, "logger">,
  withCa = true,
): Promise<RunningServer> {
  const logs: LogLine[] = [];
  const options = createTlsServerOptions({
    certFile: pki.server.certFile,
    keyFile: pki.server.keyFile,
    ...(withCa ? { caFile: pki.shopifyCa.certFile } : {}),
  });
  return listen(https.createServer(options, dummyApp(guard, logs)), logs);
}

async function startHttp(guard: Omit<ShopifyMtlsGuardOptions, "logger">): Promise<RunningServer> {
  const logs: LogLine[] = [];
  return listen(http.createServer(dummyApp(guard, logs)), logs);
}

function collect(request: http.ClientRequest): Promise<Reply> {
  return new Promise((resolve, reject) => {
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(request.method === "POST" ? "{}" : undefined);
  });
}

function httpsRequest(
  pki: TestPki,
  port: number,
  method: string,
  path: string,
  client?: KeyPairFiles,
): Promise<Reply> {
  return collect(
    https.request({
      host: "127.0.0.1",
      port,
      method,
      path,
      headers: { "content-type": "application/json" },
      ca: pki.read(pki.serverCa.certFile),
      ...(client ? { cert: pki.read(client.certFile), key: pki.read(client.keyFile) } : {}),
      // A fresh connection per request: no TLS session or socket carries over between cases.
      agent: false,
    }),
  );
}

function httpRequest(port: number, method: string, path: string, headers: http.OutgoingHttpHeaders = {}): Promise<Reply> {
  return collect(
    http.request({ host: "127.0.0.1", port, method, path, headers: { "content-type": "application/json", ...headers }, agent: false }),
  );
}

const guardDefaults = {
  proxyHeader: "x-client-cert-verified",
  proxyHeaderValue: "SUCCESS",
  protectedPaths: SHOPIFY_MTLS_PROTECTED_PATHS,
} as const;

let pki: TestPki;

beforeAll(() => {
  pki = createTestPki();
});

afterAll(() => {
  pki?.remove();
});

describe("direct mode over HTTPS", () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startHttps(pki, { ...guardDefaults, mode: "direct" });
  });

  afterAll(async () => {
    await server?.close();
  });

  it("lets a protected POST with a certificate from the trusted CA through", async () => {
    const reply = await httpsRequest(pki, server.port, "POST", "/payments/session", pki.shopifyClient);
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ handled: "payment session" });
    expect(server.logs).toEqual([]);
  });

  it("answers 403 with a JSON reason when no certificate is presented, and logs the refusal", async () => {
    const before = server.logs.length;
    const reply = await httpsRequest(pki, server.port, "POST", "/payments/session");
    expect(reply.status).toBe(403);
    const body = JSON.parse(reply.body) as { error: string; message: string };
    expect(body.error).toBe("client_certificate_required");
    expect(body.message).toMatch(/none was presented/);
    const logged = server.logs.slice(before);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.fields).toMatchObject({ mode: "direct", reason: "no_certificate", method: "POST", path: "/payments/session", certificate: null });
  });

  it("refuses a certificate from another CA, logging only its names and fingerprint", async () => {
    const before = server.logs.length;
    const reply = await httpsRequest(pki, server.port, "POST", "/payments/session", pki.otherClient);
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "client_certificate_required", message: expect.stringMatching(/not issued by the trusted CA/) });

    const logged = server.logs.slice(before);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.fields).toMatchObject({
      reason: "certificate_not_trusted",
      certificate: {
        subjectCN: "payments.shopify.test",
        issuerCN: "Some Other CA",
        fingerprint256: pki.fingerprint256(pki.otherClient.certFile),
      },
    });
    const text = JSON.stringify(logged);
    const pemBody = pki.read(pki.otherClient.certFile).toString("utf8").split("\n")[1] ?? "";
    expect(pemBody.length).toBeGreaterThan(20);
    expect(text).not.toContain(pemBody);
    expect(text).not.toContain("BEGIN CERTIFICATE");
  });

  it("refuses a certificate from a CA that only copies the trusted CA's name", async () => {
    const reply = await httpsRequest(pki, server.port, "POST", "/payments/session", pki.impostorClient);
    expect(reply.status).toBe(403);
  });

  it("serves unprotected paths to clients without a certificate", async () => {
    const reply = await httpsRequest(pki, server.port, "GET", "/app");
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ handled: "admin" });
    const sibling = await httpsRequest(pki, server.port, "GET", "/payments/return");
    expect(sibling.status).toBe(404);
  });

  it("protects the four session URLs of the payments extension, and no gateway route", () => {
    expect(SHOPIFY_MTLS_PROTECTED_PATHS).toEqual(["/payments/session", "/payments/refund", "/payments/capture", "/payments/void"]);
  });

  it.each(SHOPIFY_MTLS_PROTECTED_PATHS.map((path) => [path]))("protects %s and what lies below it", async (path) => {
    expect((await httpsRequest(pki, server.port, "POST", path)).status).toBe(403);
    expect((await httpsRequest(pki, server.port, "POST", `${path}/abc?x=1`)).status).toBe(403);
    expect((await httpsRequest(pki, server.port, "POST", path, pki.shopifyClient)).status).not.toBe(403);
  });

  it.each([
    ["/Payments/SESSION"],
    ["/payments/%73ession"],
    ["/payments/%2573ession"],
    ["//payments//session"],
    ["/app/../payments/session"],
    ["/./payments/./session"],
    ["/payments\\session"],
    ["/payments/%C5%BFession"],
    ["/payments/session.data"],
    ["/payments/session?_data=routes%2Fpayments.session"],
    // Absolute-form targets: with a port WHATWG URL refuses and the router's parser takes, and a plain one.
    ["http://127.0.0.1:99999/payments/session"],
    ["http://x:65536/PAYMENTS/Session/"],
    ["http://x/payments/session"],
    ["http://x/app"],
  ])("refuses the spelling %s without a certificate (fail closed)", async (path) => {
    const refused = await httpsRequest(pki, server.port, "POST", path);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ error: "client_certificate_required" });
    const allowed = await httpsRequest(pki, server.port, "POST", path, pki.shopifyClient);
    expect(allowed.status).not.toBe(403);
  });

  it("describes the presented certificate by names and fingerprint", async () => {
    const reply = await httpsRequest(pki, server.port, "GET", "/whoami", pki.shopifyClient);
    expect(JSON.parse(reply.body)).toEqual({
      certificate: {
        subjectCN: "payments.shopify.test",
        issuerCN: "Test Payments Platform CA",
        fingerprint256: pki.fingerprint256(pki.shopifyClient.certFile),
      },
    });
    const anonymous = await httpsRequest(pki, server.port, "GET", "/whoami");
    expect(JSON.parse(anonymous.body)).toEqual({ certificate: null });
  });
});

describe("direct mode without a configured CA", () => {
  it("refuses even a good certificate, since the server never asked for one", async () => {
    const server = await startHttps(pki, { ...guardDefaults, mode: "direct" }, false);
    try {
      const reply = await httpsRequest(pki, server.port, "POST", "/payments/session", pki.shopifyClient);
      expect(reply.status).toBe(403);
      expect((await httpsRequest(pki, server.port, "GET", "/app")).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("direct mode over plain HTTP", () => {
  it("refuses protected paths, since there is no TLS to verify", async () => {
    const server = await startHttp({ ...guardDefaults, mode: "direct" });
    try {
      const reply = await httpRequest(server.port, "POST", "/payments/session");
      expect(reply.status).toBe(403);
      expect(server.logs[0]?.fields).toMatchObject({ reason: "not_tls" });
      expect((await httpRequest(server.port, "GET", "/app")).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("proxy mode over plain HTTP", () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startHttp({ ...guardDefaults, mode: "proxy" });
  });

  afterAll(async () => {
    await server?.close();
  });

  it("lets a protected request through when the proxy reports a verified certificate", async () => {
    const reply = await httpRequest(server.port, "POST", "/payments/session", { "X-Client-Cert-Verified": "SUCCESS" });
    expect(reply.status).toBe(200);
  });

  it.each<[string, http.OutgoingHttpHeaders, string]>([
    ["a missing header", {}, "proxy_header_missing"],
    ["a failed verification", { "x-client-cert-verified": "FAILED:unable to verify the first certificate" }, "proxy_header_not_verified"],
    ["no certificate at the proxy", { "x-client-cert-verified": "NONE" }, "proxy_header_not_verified"],
    ["a value in another case", { "x-client-cert-verified": "success" }, "proxy_header_not_verified"],
    ["a repeated header", { "x-client-cert-verified": ["SUCCESS", "SUCCESS"] }, "proxy_header_not_verified"],
  ])("refuses %s with 403", async (_label, headers, reason) => {
    const before = server.logs.length;
    const reply = await httpRequest(server.port, "POST", "/payments/refund", headers);
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body)).toMatchObject({ error: "client_certificate_required" });
    expect(server.logs.slice(before)[0]?.fields).toMatchObject({ mode: "proxy", reason });
  });

  it("serves unprotected paths without the header", async () => {
    expect((await httpRequest(server.port, "GET", "/app")).status).toBe(200);
  });

  it("uses the configured header name and value", async () => {
    const custom = await startHttp({ ...guardDefaults, mode: "proxy", proxyHeader: "X-SSL-Client-Verify", proxyHeaderValue: "ok" });
    try {
      expect((await httpRequest(custom.port, "POST", "/payments/session", { "x-ssl-client-verify": "ok" })).status).toBe(200);
      expect((await httpRequest(custom.port, "POST", "/payments/session", { "x-client-cert-verified": "SUCCESS" })).status).toBe(403);
    } finally {
      await custom.close();
    }
  });
});

describe("off mode", () => {
  it("lets protected requests through without any certificate", async () => {
    const server = await startHttp({ ...guardDefaults, mode: "off" });
    try {
      expect((await httpRequest(server.port, "POST", "/payments/session")).status).toBe(200);
      expect(server.logs).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe("createTlsServerOptions", () => {
  it("asks for client certificates from the CA without failing the handshake, from TLS 1.2 up", () => {
    const options = createTlsServerOptions({ certFile: pki.server.certFile, keyFile: pki.server.keyFile, caFile: pki.shopifyCa.certFile });
    expect(options).toMatchObject({ requestCert: true, rejectUnauthorized: false, minVersion: "TLSv1.2" });
    expect(options.ca).toEqual(pki.read(pki.shopifyCa.certFile));
  });

  it("does not ask for client certificates without a CA", () => {
    const options = createTlsServerOptions({ certFile: pki.server.certFile, keyFile: pki.server.keyFile });
    expect(options.requestCert).toBeUndefined();
    expect(options.ca).toBeUndefined();
  });

  it("names the setting and file that cannot be read", () => {
    const missing = `${pki.dir}/missing.key`;
    expect(() => createTlsServerOptions({ certFile: pki.server.certFile, keyFile: missing })).toThrow(MtlsConfigurationError);
    expect(() => createTlsServerOptions({ certFile: pki.server.certFile, keyFile: missing })).toThrow(/TLS_KEY_FILE .*missing\.key.*ENOENT/);
  });
});

describe("shopifyMtlsGuard options", () => {
  it.each([
    ["an unknown mode", { ...guardDefaults, mode: "sometimes" }],
    ["no protected path", { ...guardDefaults, mode: "direct", protectedPaths: [] }],
    ["a relative protected path", { ...guardDefaults, mode: "direct", protectedPaths: ["payments/session"] }],
    ["a header name with a space", { ...guardDefaults, mode: "proxy", proxyHeader: "x client" }],
    ["an empty header value", { ...guardDefaults, mode: "proxy", proxyHeaderValue: "" }],
  ])("refuses %s", (_label, options) => {
    expect(() => shopifyMtlsGuard(options as ShopifyMtlsGuardOptions)).toThrow(MtlsConfigurationError);
  });
});
