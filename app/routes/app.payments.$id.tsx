// One payment: where it stands at the gateway and in Shopify, what should happen next,
// its timeline and on-chain transactions, and "Check now" to read the gateway at once.
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Form, isRouteErrorResponse, useActionData, useLoaderData, useNavigation, useRouteError } from "@remix-run/react";
import { Badge, Banner, BlockStack, Box, Button, Card, DataTable, InlineGrid, InlineStack, Layout, Page, Text } from "@shopify/polaris";
import type { ReactNode } from "react";
import { z } from "zod";
import { revalidateAfterConflict } from "~/admin/revalidate";
import { adminShop } from "~/admin/admin-shop.server";
import { FLAG_SEEN, postedFields } from "~/admin/form-data";
import { listPageQuery } from "~/admin/payment-filters";
import { markAttentionHandled, markHandledAnswer, paymentDetail } from "~/admin/payments.server";
import { ResultBanner } from "~/admin/result-banner";
import { TitledCard } from "~/admin/titled-card";
import { checkPaymentNow, MERCHANT_CHECK_SPACING_MS, type CheckResult, type ShopifyDelivery } from "~/payments/check-payment";
import { adminPageTitle } from "~/lib/page-title";

const paramsSchema = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });

function notFound(): Response {
  return new Response("No such payment in this shop.", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
}

/** A payment this shop does not have (a stale or mistyped link): said inside the admin, with the way back to the list. */
export function ErrorBoundary() {
  const error = useRouteError();
  if (!isRouteErrorResponse(error) || error.status !== 404) throw error;
  return (
    <Page title="Payment not found" backAction={{ content: "Payments", url: "/app/payments" }}>
      <Card>
        <Text as="p">No such payment in this shop. It may be another shop's, or the link may be mistyped.</Text>
      </Card>
    </Page>
  );
}

export const meta: MetaFunction = ({ error }) => adminPageTitle(isRouteErrorResponse(error) && error.status === 404 ? "Payment not found" : "Payment");

export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const { shop } = await adminShop(request, context.services);
  const parsed = paramsSchema.safeParse(params);
  if (!parsed.success) throw notFound();
  const payment = await paymentDetail(context.services.db, shop.id, parsed.data.id);
  if (!payment) throw notFound();
  // Opened from a page of the list: its filters and cursor came along, and the way back keeps them.
  return { payment, backUrl: `/app/payments${listPageQuery(new URL(request.url).searchParams)}` };
}

// A "Mark as handled" refused because the flag changed since the page was shown (flagged again,
// or handled in another tab) reads the page's data again: the page then shows the flag as it is
// now, which the refusal tells the merchant to read.
export const shouldRevalidate = revalidateAfterConflict;

const actionSchema = z.discriminatedUnion("intent", [z.object({ intent: z.literal("check") }), z.object({ intent: z.literal("handled"), flag: FLAG_SEEN })]);

export async function action({ request, params, context }: ActionFunctionArgs) {
  const { services } = context;
  const { shop } = await adminShop(request, services);
  const id = paramsSchema.safeParse(params);
  const input = actionSchema.safeParse(await postedFields(request));
  if (!id.success || !input.success) return data({ ok: false, message: "Unknown action." }, { status: 400 });
  if (input.data.intent === "handled") {
    const { ok, message, status } = markHandledAnswer(await markAttentionHandled(services.db, shop.id, id.data.id, input.data.flag, services.clock.now()));
    return data({ ok, message }, { status });
  }
  const result = await checkPaymentNow(services, shop.id, id.data.id, { retryShopify: true, spacedMs: MERCHANT_CHECK_SPACING_MS });
  if (!result.ok) return data({ ok: false, message: result.message }, { status: result.reason === "not_found" ? 404 : result.reason === "gateway_error" ? 502 : 409 });
  return { ok: true, message: `${READ_AFTER_CHECK[result.read]}${SHOPIFY_AFTER_CHECK[result.shopify ?? "none"]}` };
}

/** What the check says of its read of the gateway's order. */
const READ_AFTER_CHECK: Record<Extract<CheckResult, { ok: true }>["read"], string> = {
  now: "Checked with the gateway just now.",
  spaced: `The gateway was read for this payment in the last ${MERCHANT_CHECK_SPACING_MS / 1_000} seconds, so it was not read again: the page shows that read.`,
};

/** What the check's attempt to send the payment's outcome to Shopify adds to its message. */
const SHOPIFY_AFTER_CHECK: Record<ShopifyDelivery | "none", string> = {
  none: "",
  done: " Shopify took the payment's outcome.",
  failed: " Shopify refused the payment's outcome: see why below.",
  retry: " Shopify could not take the payment's outcome yet; the app keeps trying (see why below).",
  skipped: "",
  in_flight: " The payment's outcome is being sent to Shopify.",
  held: " Shopify asked the app to wait before its next call: the payment's outcome is sent when that wait is over.",
};

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <BlockStack gap="050">
      <Text as="span" tone="subdued" variant="bodySm">
        {label}
      </Text>
      <Text as="span" variant="bodyMd" breakWord>
        {children}
      </Text>
    </BlockStack>
  );
}

export default function PaymentDetailPage() {
  const { payment, backUrl } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const navigation = useNavigation();
  const busy = navigation.state !== "idle" ? navigation.formData?.get("intent") : null;
  const { gateway, shopify, attention } = payment;

  return (
    <Page
      backAction={{ content: "Payments", url: backUrl }}
      title={`Payment ${payment.amount}`}
      subtitle={`Shopify payment ${payment.shopifyPaymentId}`}
      titleMetadata={
        <InlineStack gap="100">
          <Badge tone={payment.state.tone}>{payment.state.label}</Badge>
          {payment.test ? <Badge>Test</Badge> : null}
        </InlineStack>
      }
    >
      <Layout>
        <ResultBanner result={result} takeFocus />
        {attention && !attention.resolvedAt ? (
          <Layout.Section>
            <Banner tone="critical" title={`Needs attention: ${attention.title}`}>
              <BlockStack gap="200">
                {attention.detail ? <p>{attention.detail}</p> : null}
                <p>{attention.whatToDo}</p>
                <Form method="post">
                  <input type="hidden" name="intent" value="handled" />
                  <input type="hidden" name="flag" value={attention.flag} />
                  <Button submit loading={busy === "handled"}>
                    Mark as handled
                  </Button>
                </Form>
              </BlockStack>
            </Banner>
          </Layout.Section>
        ) : null}
        <Layout.Section>
          <InlineGrid columns={{ xs: 1, md: 2 }} gap="400">
            <Card>
              <BlockStack gap="300">
                <InlineStack align="space-between" blockAlign="center">
                  <Text as="h2" variant="headingMd">
                    Gateway
                  </Text>
                  <Form method="post">
                    <input type="hidden" name="intent" value="check" />
                    <Button submit disabled={!payment.canCheck} loading={busy === "check"}>
                      Check now
                    </Button>
                  </Form>
                </InlineStack>
                <InlineStack gap="200" blockAlign="center">
                  <Badge tone={gateway.statusTone}>{gateway.statusLabel}</Badge>
                  <Text as="span" tone="subdued">
                    {gateway.statusMeaning}
                  </Text>
                </InlineStack>
                <InlineGrid columns={2} gap="300">
                  <Field label="Coin and amount due">{gateway.coin}</Field>
                  <Field label="Received">{gateway.received}</Field>
                  <Field label="Paid">{gateway.percentage}</Field>
                  <Field label="Expires">{gateway.expiresAt}</Field>
                  <Field label="Environment">{payment.environment}</Field>
                  <Field label="Last read from the gateway">{gateway.lastCheckedAt}</Field>
                </InlineGrid>
                {gateway.notified ? (
                  <Text as="p" tone="caution">
                    {gateway.notified}
                  </Text>
                ) : null}
                <Field label="Gateway order">{gateway.orderId ?? "none yet"}</Field>
                {gateway.address ? <Field label="Address">{gateway.address}</Field> : null}
                {gateway.tagMemo ? <Field label="Tag / memo">{gateway.tagMemo}</Field> : null}
              </BlockStack>
            </Card>
            <TitledCard title="Shopify" gap="300">
              <Text as="p" variant="headingSm">
                {shopify.outcome}
              </Text>
              <Field label="Next action">{shopify.nextAction}</Field>
              <InlineGrid columns={2} gap="300">
                <Field label="Amount">{payment.amount}</Field>
                <Field label="Shopify state">{shopify.state ?? "—"}</Field>
                <Field label="Outcome sent">{shopify.finalizedAt}</Field>
                <Field label="Started">{payment.createdAt}</Field>
              </InlineGrid>
              {payment.customer.name || payment.customer.email ? (
                <Field label="Customer">{[payment.customer.name, payment.customer.email].filter(Boolean).join(" · ")}</Field>
              ) : null}
              <Text as="p" tone="subdued">
                {payment.state.meaning}
              </Text>
            </TitledCard>
          </InlineGrid>
        </Layout.Section>
        <Layout.Section>
          <TitledCard title="Timeline" gap="300">
            <ol style={{ listStyle: "none", margin: 0, padding: 0 }} aria-label="Timeline">
              {payment.timeline.map((entry) => (
                <li key={entry.id}>
                  <Box paddingBlock="200" borderBlockEndWidth="025" borderColor="border-secondary">
                    <InlineStack gap="300" wrap={false} blockAlign="start">
                      <Box minWidth="190px">
                        <Text as="span" tone="subdued" variant="bodySm">
                          {entry.at}
                        </Text>
                      </Box>
                      <BlockStack gap="050">
                        <Text as="span" fontWeight="semibold">
                          {entry.title}
                        </Text>
                        {entry.description ? (
                          <Text as="span" tone="subdued">
                            {entry.description}
                          </Text>
                        ) : null}
                      </BlockStack>
                    </InlineStack>
                  </Box>
                </li>
              ))}
            </ol>
          </TitledCard>
        </Layout.Section>
        <Layout.Section>
          <Card padding="0">
            <Box padding="400">
              <Text as="h2" variant="headingMd">
                Transactions
              </Text>
            </Box>
            {payment.transactions.length === 0 ? (
              <Box padding="400" paddingBlockStart="0">
                <Text as="p" tone="subdued">
                  No transactions seen on-chain yet.
                </Text>
              </Box>
            ) : (
              <DataTable
                columnContentTypes={["text", "numeric", "text", "numeric", "text"]}
                headings={["Transaction hash", "Amount", "Confirmed", "Block", "Seen"]}
                rows={payment.transactions.map((t) => [
                  <Text key="hash" as="span" breakWord>
                    {t.txHash}
                  </Text>,
                  t.amount,
                  t.confirmed ? "Yes" : "Not yet",
                  t.block === null ? "—" : String(t.block),
                  t.seenAt,
                ])}
              />
            )}
          </Card>
        </Layout.Section>
      </Layout>
    </Page>
  );
}
