// Is the integration healthy: notifications arriving and accepted, no work piling up,
// Shopify accepting the app's calls, and gateway request quota left for today.
import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { Badge, Banner, BlockStack, DataTable, InlineGrid, Layout, Link, Page, Text } from "@shopify/polaris";
import { adminShop } from "~/admin/admin-shop.server";
import { shopHealth } from "~/admin/health.server";
import { TitledCard } from "~/admin/titled-card";
import { UnreadableCredentials } from "~/admin/unreadable-credentials";
import { adminPageTitle } from "~/lib/page-title";

export const meta: MetaFunction = () => adminPageTitle("Health");

export async function loader({ request, context }: LoaderFunctionArgs) {
  const { shop } = await adminShop(request, context.services);
  return { health: await shopHealth(context.services, shop) };
}

function Figure({ label, value, tone }: { label: string; value: string | number; tone?: "critical" | "success" | "subdued" }) {
  return (
    <BlockStack gap="050">
      <Text as="span" tone="subdued">
        {label}
      </Text>
      <Text as="span" variant="headingLg" {...(tone ? { tone } : {})}>
        {value}
      </Text>
    </BlockStack>
  );
}

/** Says that work due a while ago was not taken up, when it was not (`since`: "12 minutes ago"). */
function Overdue({ since, what }: { since: string | null; what: string }) {
  if (!since) return null;
  return (
    <Text as="p" tone="critical">
      The oldest {what} was due {since} and has not been taken up: the app&apos;s background work has stopped or fallen far behind. Check that the app is running, and its
      log.
    </Text>
  );
}

const DEVICE_WORDS = { live: "live", sandbox: "gateway sandbox" } as const;

/** Whether the gateway's notifications reached the payments that finished lately, on one device. */
function NotifiedPayments({ env, finished, unnotified }: { env: "live" | "sandbox"; finished: number; unnotified: number }) {
  const one = finished === 1;
  const payments = `${DEVICE_WORDS[env]} payment${one ? "" : "s"} that finished in the last 7 days`;
  if (unnotified === 0) {
    return (
      <Text as="p" tone="success">
        {one ? `A notification came for the ${payments}.` : `A notification came for each of the ${finished} ${payments}.`}
      </Text>
    );
  }
  const none = unnotified === finished;
  const which = none ? (one ? `The ${payments} had no notification` : `None of the ${finished} ${payments} had a notification`) : `${unnotified} of the ${finished} ${payments} had no notification`;
  return (
    <Text as="p" tone={none ? "critical" : "caution"}>
      {which} from the gateway: the app settled {unnotified === 1 ? "it" : "them"} with its own checks, later than a notification would have.{" "}
      {none ? "Check that the device's notification URL in the gateway dashboard is this shop's, shown on " : "A few can be lost on the way; if most are, check the device's notification URL on "}
      <Link url="/app/onboarding">Connection</Link>.
    </Text>
  );
}

export default function Health() {
  const { health } = useLoaderData<typeof loader>();
  const rejectedTotal = health.rejected.reduce((sum, r) => sum + r.count, 0);
  return (
    <Page title="Health">
      <Layout>
        <UnreadableCredentials environments={health.connections} connectUrl="/app/onboarding" />
        {health.refusedKeys.map((env) => (
          <Layout.Section key={`refused-${env}`}>
            <Banner tone="critical" title={`The gateway refuses the ${DEVICE_WORDS[env]} device's key`}>
              <p>
                No payment can start on it, and the app cannot read its orders. Check in the gateway dashboard that the device is enabled, then connect it again, or connect
                another device, on <Link url="/app/onboarding">Connection</Link>.
              </p>
            </Banner>
          </Layout.Section>
        ))}
        {health.needingAttention > 0 ? (
          <Layout.Section>
            <Banner tone="warning" title={health.needingAttention === 1 ? "1 payment needs your attention" : `${health.needingAttention} payments need your attention`}>
              <p>
                Something about {health.needingAttention === 1 ? "it" : "them"} needs a person: see what to do on <Link url="/app/attention">Needs attention</Link>.
              </p>
            </Banner>
          </Layout.Section>
        ) : null}
        <Layout.Section>
          <InlineGrid columns={{ xs: 1, md: 3 }} gap="400">
            <TitledCard title="Gateway notifications">
              <Figure label="Last one received" value={health.lastWebhookAgo ?? "never"} />
              {health.lastWebhookAt ? (
                <Text as="p" tone="subdued">
                  {health.lastWebhookAt}
                </Text>
              ) : null}
              {health.unnotified.map((figures) => (
                <NotifiedPayments key={figures.env} {...figures} />
              ))}
              {health.sharedDevices.map((env) => (
                <Text as="p" tone="caution" key={env}>
                  {env === "live" ? "The live device" : "The gateway sandbox device"} is connected in another shop too: its notifications reach only the shop whose
                  notification URL is set on it. See <Link url="/app/onboarding">Connection</Link>.
                </Text>
              ))}
            </TitledCard>
            <TitledCard title="Backlogs">
              <Figure label="Notifications waiting to be processed" value={health.inboxBacklog} tone={health.inboxFailing > 0 || health.inboxOverdueSince ? "critical" : undefined} />
              <Overdue since={health.inboxOverdueSince} what="notification" />
              <Figure label="Updates waiting to be sent to Shopify" value={health.outboxBacklog} tone={health.outboxOverdueSince ? "critical" : undefined} />
              <Overdue since={health.outboxOverdueSince} what="update" />
            </TitledCard>
            <TitledCard title="Shopify calls that failed">
              <Figure label="Refused by Shopify, not yet handled" value={health.outboxFailedCount} tone={health.outboxFailedCount > 0 ? "critical" : "success"} />
              {health.outboxFailedHandledCount > 0 ? (
                <Text as="p" tone="subdued">
                  {health.outboxFailedHandledCount} more handled since: their payments were marked as handled, or a later readiness call went through.
                </Text>
              ) : null}
            </TitledCard>
          </InlineGrid>
        </Layout.Section>
        <Layout.Section>
          <TitledCard title="Notifications rejected in the last 7 days">
            {rejectedTotal === 0 ? (
              <Text as="p" tone="success">
                None.
              </Text>
            ) : (
              <DataTable columnContentTypes={["text", "numeric"]} headings={["Reason", "Count"]} rows={health.rejected.map((r) => [r.description, r.count])} />
            )}
          </TitledCard>
        </Layout.Section>
        {health.outboxFailed.length > 0 ? (
          <Layout.Section>
            <TitledCard title="Latest refused Shopify calls">
              <DataTable
                columnContentTypes={["text", "text", "text", "text"]}
                headings={["Call", "Shopify said", "When", "Handled"]}
                rows={health.outboxFailed.map((m) => [m.kind, m.lastError, m.at, m.handled ? "Yes" : "Not yet"])}
              />
            </TitledCard>
          </Layout.Section>
        ) : null}
        {health.outboxRetrying.length > 0 ? (
          <Layout.Section>
            <TitledCard title="Shopify calls that keep failing (still being retried)">
              <DataTable
                columnContentTypes={["text", "text", "numeric", "text"]}
                headings={["Call", "Last failure", "Attempts", "Next attempt"]}
                rows={health.outboxRetrying.map((m) => [m.kind, m.lastError, m.attempts, m.nextAttemptAt])}
              />
            </TitledCard>
          </Layout.Section>
        ) : null}
        <Layout.Section>
          <TitledCard title="Gateway request quota left">
            {health.quotas.length === 0 ? (
              <Text as="p" tone="subdued">
                No gateway device is connected.
              </Text>
            ) : (
              <DataTable
                columnContentTypes={["text", "numeric", "numeric", "numeric", "numeric"]}
                headings={["Device", "Today", "This minute", "Order creation today", "Order creation this minute"]}
                rows={health.quotas.map((q) => [
                  <BlockStack key="env" gap="050">
                    <Text as="span">{q.label}</Text>
                    {q.generalDay < 100 ? <Badge tone="warning">Running low</Badge> : null}
                  </BlockStack>,
                  q.generalDay,
                  q.generalMinute,
                  q.criticalDay,
                  q.criticalMinute,
                ])}
              />
            )}
          </TitledCard>
        </Layout.Section>
      </Layout>
    </Page>
  );
}
