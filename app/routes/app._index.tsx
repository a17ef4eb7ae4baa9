// The admin's home. A shop that has not connected any gateway device is sent to the
// connection page; otherwise it sees where things stand: the connection, the payments
// of the last seven days and what needs attention.
import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { Badge, BlockStack, Button, Card, InlineGrid, InlineStack, Layout, Page, Text } from "@shopify/polaris";
import { adminShop } from "~/admin/admin-shop.server";
import { connectionView } from "~/admin/connection.server";
import { PaymentBadges } from "~/admin/payment-badges";
import { countNeedingAttention, isNotPaidInShopify, listPayments } from "~/admin/payments.server";
import { paymentStateWords } from "~/admin/status-words";
import { TitledCard } from "~/admin/titled-card";
import { UnreadableCredentials } from "~/admin/unreadable-credentials";
import { adminPageTitle, APP_NAME } from "~/lib/page-title";

export const meta: MetaFunction = () => adminPageTitle(APP_NAME);

export async function loader({ request, context }: LoaderFunctionArgs) {
  const { services } = context;
  const { shop } = await adminShop(request, services);
  const connection = connectionView(shop, services.appUrl, services.gateways);
  if (!connection.anyConnected) {
    throw redirect(`/app/onboarding${new URL(request.url).search}`);
  }
  const since = new Date(services.clock.now().getTime() - 7 * 86_400_000);
  const byState = await services.db.payment.groupBy({ by: ["state", "test", "shopifyOutcome"], where: { shopId: shop.id, createdAt: { gte: since } }, _count: { _all: true } });
  const recent = await listPayments(services.db, shop.id, {});
  return {
    connection,
    attention: await countNeedingAttention(services.db, shop.id),
    lastWeek: weekCounts(byState),
    recent: recent.rows.slice(0, 5),
  };
}

/**
 * The week's payments by state, live and test counted apart: a test payment (gateway sandbox)
 * moves no real money, so its counts are labelled as test and come after the live ones. A
 * payment paid at the gateway that Shopify was told is not paid is counted apart too.
 */
function weekCounts(groups: { state: string; test: boolean; shopifyOutcome: string | null; _count: { _all: number } }[]): { label: string; count: number }[] {
  const counts = new Map<string, { label: string; test: boolean; count: number }>();
  for (const g of groups) {
    const label = `${paymentStateWords(g.state).label}${isNotPaidInShopify(g) ? ", not paid in Shopify" : ""}${g.test ? " (test)" : ""}`;
    const entry = counts.get(label) ?? { label, test: g.test, count: 0 };
    entry.count += g._count._all;
    counts.set(label, entry);
  }
  return [...counts.values()].sort((a, b) => Number(a.test) - Number(b.test) || b.count - a.count).map(({ label, count }) => ({ label, count }));
}

export default function Home() {
  const { connection, attention, lastWeek, recent } = useLoaderData<typeof loader>();
  return (
    <Page title="Crypto checkout">
      <Layout>
        <UnreadableCredentials environments={[connection.live, connection.sandbox]} connectUrl="/app/onboarding" />
        <Layout.Section>
          <InlineGrid columns={{ xs: 1, md: 3 }} gap="400">
            <TitledCard title="Gateway">
              <InlineStack gap="200">
                {connection.testMode ? <Badge tone="attention">Test mode</Badge> : null}
                {connection.ready ? (
                  <Badge tone="success">{connection.testMode ? "Ready for test payments" : "Ready for payments"}</Badge>
                ) : (
                  <Badge tone="warning">{connection.testMode ? "Not ready" : "Not ready for live payments"}</Badge>
                )}
                {/* Shopify offers the method only when the shop is ready: with no live device, test orders need test mode too. */}
                {!connection.testMode && connection.sandbox.connected && !connection.sandbox.unreadable ? (
                  <Badge tone="info">{connection.ready ? "Test payments ready" : "Test payments need test mode"}</Badge>
                ) : null}
              </InlineStack>
              <Text as="p" tone="subdued">
                {connection.live.connected ? `Live device ${connection.live.maskedKey}${connection.live.unreadable ? " (cannot be read)" : ""}` : "No live device"}
                {" · "}
                {connection.sandbox.unreadable ? "sandbox credentials cannot be read" : connection.sandbox.connected ? "sandbox connected" : "sandbox not connected"}
              </Text>
              <InlineStack>
                <Button url="/app/onboarding">Connection</Button>
              </InlineStack>
            </TitledCard>
            <TitledCard title="Last 7 days">
              {lastWeek.length === 0 ? (
                <Text as="p" tone="subdued">
                  No payments yet.
                </Text>
              ) : (
                lastWeek.map((s) => (
                  <Text as="p" key={s.label}>
                    {s.label}: {s.count}
                  </Text>
                ))
              )}
            </TitledCard>
            <TitledCard title="Needs attention">
              <Text as="p" variant="headingLg" tone={attention > 0 ? "critical" : "success"}>
                {attention}
              </Text>
              <InlineStack>
                <Button url="/app/attention" disabled={attention === 0}>
                  Review
                </Button>
              </InlineStack>
            </TitledCard>
          </InlineGrid>
        </Layout.Section>
        <Layout.Section>
          <Card>
            <BlockStack gap="200">
              <InlineStack align="space-between">
                <Text as="h2" variant="headingMd">
                  Latest payments
                </Text>
                <Button variant="plain" url="/app/payments">
                  All payments
                </Button>
              </InlineStack>
              {recent.length === 0 ? (
                <Text as="p" tone="subdued">
                  Payments appear here as soon as a shopper chooses crypto at checkout.
                </Text>
              ) : (
                recent.map((p) => (
                  <InlineStack key={p.id} gap="300" blockAlign="center">
                    <Button variant="plain" url={`/app/payments/${p.id}`}>
                      {p.amount}
                    </Button>
                    <PaymentBadges payment={p} />
                    <Text as="span" tone="subdued">
                      {p.gatewayStatusLabel} · {p.createdAt}
                    </Text>
                  </InlineStack>
                ))
              )}
            </BlockStack>
          </Card>
        </Layout.Section>
      </Layout>
    </Page>
  );
}
