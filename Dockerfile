# The app's production image: Node 22 (as package.json's engines), the Remix build,
# migrations applied at start, SIGTERM handled gracefully by server/main.ts.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci --no-audit --no-fund
COPY . .
# The build needs the development packages; the image keeps only what the server runs.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/generated ./generated
COPY --from=build /app/build ./build
COPY package.json tsconfig.json ./
COPY app ./app
COPY server ./server
COPY prisma ./prisma
# The production commands README.md documents, run in the image with npm run: key rotation
# (credentials:rotate) and the migrations alone (setup).
COPY scripts/rotate-credentials.ts scripts/setup.ts ./scripts/
# The gateway sandbox, for Shopify's test orders: the same image runs it as a service of its
# own (`node --import tsx sandbox/main.ts`), which GATEWAY_SANDBOX_URL points the app at.
COPY sandbox ./sandbox
# The app's own folder for SQLite (a trial without PostgreSQL): writable by the user it runs as.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# Liveness, /livez where the app listens: HOST (or loopback), over HTTPS when the app serves TLS
# itself. It asks only that the process answers, so a database outage does not have an
# orchestrator restart every instance at once; the load balancer asks /healthz (readiness). For
# the database in Docker's health too: --health-cmd "node server/healthcheck.mjs /healthz".
# The start applies migrations first: up to 5 minutes waiting for another instance's migrator,
# then up to about a minute for a table's locks. The start period covers both, so an orchestrator
# does not restart an instance that is only migrating.
HEALTHCHECK --interval=15s --timeout=3s --start-period=420s CMD ["node", "server/healthcheck.mjs"]
# One process: signals (SIGTERM for a graceful stop) reach the app itself. The stop takes up
# to 30 s (a 5 s grace with /healthz answering 503, then the drain): run with
# `--stop-timeout 35` (docker stop kills after 10 s by default).
CMD ["node", "--import", "tsx", "server/main.ts"]
