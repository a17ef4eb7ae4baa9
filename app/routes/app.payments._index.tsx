// The shop's payments, newest first: Shopify's session id, the amount, the coin, the
// gateway status in words and how much was paid; filtered by state, gateway status, a date
// range and one payment's reference (payment-filters), 25 to a page. The Previous and Next links start from the first or last
// payment shown (a cursor), so payments arriving meanwhile do not shift the pages.
import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { BlockStack, Button, Card, DataTable, InlineStack, Layout, Page, Pagination, Select, Text, TextField } from "@shopify/polaris";
import { useState } from "react";
import { adminShop } from "~/admin/admin-shop.server";
import { filtersQuery, listPageQuery, parsePageCursor, parsePaymentFilters, type PaymentFilters } from "~/admin/payment-filters";
import { PaymentBadges } from "~/admin/payment-badges";
import { listPayments } from "~/admin/payments.server";
import { saveAsFile } from "~/admin/save-file";
import { gatewayStatusWords, PAYMENT_STATE_OPTIONS } from "~/admin/status-words";
import { GATEWAY_STATUSES } from "~/gateway/statuses";
import { adminPageTitle } from "~/lib/page-title";

export const meta: MetaFunction = () => adminPageTitle("Payments");

export async function loader({ request, context }: LoaderFunctionArgs) {
  const { shop } = await adminShop(request, context.services);
  const search = new URL(request.url).searchParams;
  const filters = parsePaymentFilters(search);
  const list = await listPayments(context.services.db, shop.id, filters, parsePageCursor(search));
  return {
    filters,
    list,
    // Carried by each payment's link, so the payment's page leads back to this page of the list.
    listQuery: listPageQuery(search),
    // The CSV file of every payment the filters select, not only this page's.
    exportQuery: filtersQuery(filters),
    previousQuery: list.newerCursor !== null ? filtersQuery(filters, { before: list.newerCursor }) : null,
    nextQuery: list.olderCursor !== null ? filtersQuery(filters, { after: list.olderCursor }) : null,
  };
}

const STATUS_OPTIONS = [{ label: "Any gateway status", value: "" }, ...GATEWAY_STATUSES.map((code) => ({ label: gatewayStatusWords(code).label, value: code }))];
const STATE_OPTIONS = [{ label: "Any state", value: "" }, ...PAYMENT_STATE_OPTIONS];

/**
 * The filter fields, starting from the filters the list shows. The page stays mounted when
 * only its query changes (Clear, Back, a link), so the parent remounts this form for each new
 * set of filters: the fields never show filters the list no longer applies.
 */
function FiltersForm({ filters }: { filters: PaymentFilters }) {
  const [state, setState] = useState(filters.state ?? "");
  const [status, setStatus] = useState(filters.status ?? "");
  const [from, setFrom] = useState(filters.from ?? "");
  const [to, setTo] = useState(filters.to ?? "");
  const [q, setQ] = useState(filters.q ?? "");
  return (
    <Form method="get">
      <InlineStack gap="300" blockAlign="end" wrap>
        <TextField
          label="Find a payment"
          name="q"
          value={q}
          onChange={setQ}
          autoComplete="off"
          placeholder="Payment ID, gateway order or transaction hash"
          helpText="The whole reference, as Shopify, the gateway or a block explorer shows it."
        />
        <Select label="State" name="state" options={STATE_OPTIONS} value={state} onChange={setState} />
        <Select label="Gateway status" name="status" options={STATUS_OPTIONS} value={status} onChange={setStatus} />
        <TextField label="From (UTC)" name="from" type="date" value={from} onChange={setFrom} autoComplete="off" />
        <TextField label="To (UTC)" name="to" type="date" value={to} onChange={setTo} autoComplete="off" />
        <Button submit>Filter</Button>
        <Button url="/app/payments" variant="plain">
          Clear
        </Button>
      </InlineStack>
    </Form>
  );
}

/**
 * Downloads the payments the filters select as a CSV file. Fetched rather than linked: in the
 * embedded admin, App Bridge adds the session token to the page's own fetches, which a plain
 * link would not carry. The answer is saved under the name the app gives it.
 */
function DownloadCsv({ query }: { query: string }) {
  const [state, setState] = useState<"idle" | "working" | "failed">("idle");
  async function download() {
    setState("working");
    try {
      const response = await fetch(`/app/payments/export.csv${query}`);
      if (!response.ok) throw new Error(`answered ${response.status}`);
      const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1] ?? "payments.csv";
      saveAsFile(await response.blob(), name);
      setState("idle");
    } catch {
      setState("failed");
    }
  }
  return (
    <InlineStack gap="200" blockAlign="center">
      <Button onClick={() => void download()} loading={state === "working"}>
        Download CSV
      </Button>
      {state === "failed" ? (
        <Text as="span" tone="critical">
          The file could not be made. Try again.
        </Text>
      ) : null}
    </InlineStack>
  );
}

/**
 * The gateway status of the order's last read and, under it, the status a signed notification
 * reported since (read within the hour, or at once from the payment's Check now).
 */
function GatewayStatusCell({ label, notified }: { label: string; notified: string | null }) {
  if (notified === null) return <>{label}</>;
  return (
    <BlockStack gap="050">
      <Text as="span">{label}</Text>
      <Text as="span" variant="bodySm" tone="subdued">
        Notified since: {notified}
      </Text>
    </BlockStack>
  );
}

export default function Payments() {
  const { filters, list, listQuery, exportQuery, previousQuery, nextQuery } = useLoaderData<typeof loader>();

  const rows = list.rows.map((p) => [
    <Link key="id" to={`/app/payments/${p.id}${listQuery}`}>
      {p.shopifyPaymentId}
    </Link>,
    <Text key="amount" as="span" numeric>
      {p.amount}
    </Text>,
    p.coin,
    <PaymentBadges key="state" payment={p} />,
    <GatewayStatusCell key="status" label={p.gatewayStatusLabel} notified={p.notifiedStatus} />,
    p.percentage,
    p.createdAt,
    p.updatedAt,
  ]);

  return (
    <Page fullWidth title="Payments" subtitle={`${list.total} payment${list.total === 1 ? "" : "s"}`}>
      <Layout>
        <Layout.Section>
          <Card>
            <BlockStack gap="300">
              <FiltersForm key={JSON.stringify(filters)} filters={filters} />
              <DownloadCsv query={exportQuery} />
            </BlockStack>
          </Card>
        </Layout.Section>
        <Layout.Section>
          <Card padding="0">
            {rows.length === 0 ? (
              <BlockStack gap="200">
                <div style={{ padding: 16 }}>
                  <Text as="p" tone="subdued">
                    No payments match these filters.
                  </Text>
                </div>
              </BlockStack>
            ) : (
              <DataTable
                columnContentTypes={["text", "numeric", "text", "text", "text", "numeric", "text", "text"]}
                headings={["Shopify payment", "Amount", "Coin", "State", "Gateway status", "Paid", "Created", "Updated"]}
                rows={rows}
                verticalAlign="middle"
              />
            )}
          </Card>
        </Layout.Section>
        <Layout.Section>
          <InlineStack align="center" gap="300" blockAlign="center">
            <Pagination
              hasPrevious={previousQuery !== null}
              previousURL={previousQuery !== null ? `/app/payments${previousQuery}` : undefined}
              hasNext={nextQuery !== null}
              nextURL={nextQuery !== null ? `/app/payments${nextQuery}` : undefined}
              label={list.shown}
            />
          </InlineStack>
        </Layout.Section>
      </Layout>
    </Page>
  );
}
