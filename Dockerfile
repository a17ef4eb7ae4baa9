# The app's production image: Node 22 (as package.json's engines), the Remix build,
# migrations applied at start, SIGTERM handled gracefully by server/main.ts.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

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
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# One process: signals (SIGTERM for a graceful stop) reach the app itself.
CMD ["node", "--import", "tsx", "server/main.ts"]
