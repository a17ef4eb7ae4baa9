// Payments that need a person: money received that does not match the order, a late
// payment, a status the app does not know, Shopify refusing an update, a pending window
// that closed. Each says what the merchant should do, and can be marked as handled.
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { Badge, Banner, BlockStack, Button, Card, InlineStack, Layout, Page, Text } from "@shopify/polaris";
import { z } from "zod";
import { revalidateAfterConflict } from "~/admin/revalidate";
import { adminShop } from "~/admin/admin-shop.server";
import { postedFields } from "~/admin/form-data";
import { FLAG_SEEN } from "~/admin/form-data";
import { markAttentionHandled, markHandledAnswer, paymentsNeedingAttention } from "~/admin/payments.server";
import { ResultBanner } from "~/admin/result-banner";
import { adminPageTitle } from "~/lib/page-title";

export const meta: MetaFunction = () => adminPageTitle("Needs attention");

export async function loader({ request, context }: LoaderFunctionArgs) {
  const { shop } = await adminShop(request, context.services);
  return paymentsNeedingAttention(context.services.db, shop.id);
}

// A "Mark as handled" refused because the flag changed since the page was shown (flagged again,
// or handled in another tab) reads the page's data again: the page then shows the flag as it is
// now, which the refusal tells the merchant to read.
export const shouldRevalidate = revalidateAfterConflict;

const actionSchema = z.object({ intent: z.literal("handled"), paymentId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), flag: FLAG_SEEN });

export async function action({ request, context }: ActionFunctionArgs) {
  const { services } = context;
  const { shop } = await adminShop(request, services);
  const input = actionSchema.safeParse(await postedFields(request));
  if (!input.success) return data({ ok: false, message: "Unknown action." }, { status: 400 });
  const { ok, message, status } = markHandledAnswer(await markAttentionHandled(services.db, shop.id, input.data.paymentId, input.data.flag, services.clock.now()));
  return data({ ok, message }, { status });
}

export default function Attention() {
  const { items, total } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const navigation = useNavigation();
  const busyId = navigation.state !== "idle" ? navigation.formData?.get("paymentId") : null;
  return (
    <Page title="Needs attention" subtitle="Payments a person should look at: each says what happened and what to do about it, at the gateway or in Shopify.">
      <Layout>
        <ResultBanner result={result} takeFocus failureTone="warning" />
        {total > items.length ? (
          <Layout.Section>
            <Banner tone="info" title={`Showing the ${items.length} latest of ${total} payments that need attention. Those handled make room for the next.`} />
          </Layout.Section>
        ) : null}
        {items.length === 0 ? (
          <Layout.Section>
            <Card>
              <Text as="p">Nothing needs attention right now.</Text>
            </Card>
          </Layout.Section>
        ) : (
          items.map((item) => (
            <Layout.Section key={item.id}>
              <Card>
                <article aria-label={`${item.title}: ${item.amount}`}>
                  <BlockStack gap="200">
                    <InlineStack gap="200" blockAlign="center">
                      <Badge tone="critical">{item.title}</Badge>
                      <Text as="span" variant="headingSm">
                        {item.amount}
                      </Text>
                      <Text as="span" tone="subdued">
                        Gateway: {item.gatewayStatusLabel} · {item.updatedAt}
                      </Text>
                    </InlineStack>
                    {item.detail ? <Text as="p">{item.detail}</Text> : null}
                    <Text as="p" fontWeight="semibold">
                      What to do
                    </Text>
                    <Text as="p">{item.whatToDo}</Text>
                    <InlineStack gap="200">
                      <Button url={`/app/payments/${item.id}`}>Open payment</Button>
                      <Form method="post">
                        <input type="hidden" name="intent" value="handled" />
                        <input type="hidden" name="paymentId" value={item.id} />
                        <input type="hidden" name="flag" value={item.flag} />
                        <Button submit variant="primary" loading={busyId === item.id}>
                          Mark as handled
                        </Button>
                      </Form>
                    </InlineStack>
                  </BlockStack>
                </article>
              </Card>
            </Layout.Section>
          ))
        )}
      </Layout>
    </Page>
  );
}
