// Throwaway PKI for the mTLS tests, made with the openssl CLI in a temp dir: a CA that
// stands for Shopify's Payments Platform CA, a server certificate for 127.0.0.1/localhost,
// and client certificates from the trusted CA and from CAs the server must not trust.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const OPENSSL = "/usr/bin/openssl";

export interface KeyPairFiles {
  certFile: string;
  keyFile: string;
}

export interface TestPki {
  dir: string;
  /** Stands for Shopify's Payments Platform CA: the server's MTLS_CA_FILE. */
  shopifyCa: KeyPairFiles;
  /** Signs the server certificate; the test clients trust it. */
  serverCa: KeyPairFiles;
  server: KeyPairFiles;
  /** A client certificate from the trusted CA (what Shopify presents). */
  shopifyClient: KeyPairFiles;
  /** A client certificate from an unrelated CA. */
  otherClient: KeyPairFiles;
  /** A client certificate from a CA that copies the trusted CA's name but not its key. */
  impostorClient: KeyPairFiles;
  read(file: string): Buffer;
  /** The SHA-256 fingerprint openssl reports for a certificate, as "AB:CD:...". */
  fingerprint256(certFile: string): string;
  remove(): void;
}

function openssl(args: string[], cwd: string): string {
  return execFileSync(OPENSSL, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function makeCa(dir: string, name: string, subject: string): KeyPairFiles {
  const files = { certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
  openssl(
    [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", files.keyFile, "-out", files.certFile, "-days", "2", "-subj", subject,
      "-addext", "basicConstraints=critical,CA:TRUE",
      "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    ],
    dir,
  );
  return files;
}

function makeLeaf(dir: string, name: string, subject: string, ca: KeyPairFiles, extensions: string): KeyPairFiles {
  const files = { certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, extensions);
  openssl(
    ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", files.keyFile, "-out", csr, "-subj", subject],
    dir,
  );
  openssl(
    ["x509", "-req", "-in", csr, "-CA", ca.certFile, "-CAkey", ca.keyFile, "-CAcreateserial", "-out", files.certFile, "-days", "2", "-extfile", ext],
    dir,
  );
  return files;
}

const CLIENT_EXTENSIONS = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n";

export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "mtls-pki-"));
  const shopifyCaSubject = "/O=Test Shopify/CN=Test Payments Platform CA";
  const shopifyCa = makeCa(dir, "shopify-ca", shopifyCaSubject);
  const serverCa = makeCa(dir, "server-ca", "/CN=Test Server CA");
  const otherCa = makeCa(dir, "other-ca", "/CN=Some Other CA");
  const impostorCa = makeCa(dir, "impostor-ca", shopifyCaSubject);
  const server = makeLeaf(
    dir, "server", "/CN=localhost", serverCa,
    "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
  );
  const clientSubject = "/O=Test Shopify/CN=payments.shopify.test";
  return {
    dir,
    shopifyCa,
    serverCa,
    server,
    shopifyClient: makeLeaf(dir, "shopify-client", clientSubject, shopifyCa, CLIENT_EXTENSIONS),
    otherClient: makeLeaf(dir, "other-client", clientSubject, otherCa, CLIENT_EXTENSIONS),
    impostorClient: makeLeaf(dir, "impostor-client", clientSubject, impostorCa, CLIENT_EXTENSIONS),
    read: (file) => readFileSync(file),
    fingerprint256: (certFile) => {
      const out = openssl(["x509", "-in", certFile, "-noout", "-fingerprint", "-sha256"], dir);
      const match = /=([0-9A-F:]+)/.exec(out.trim());
      if (!match?.[1]) throw new Error(`unexpected openssl output: ${out}`);
      return match[1];
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
