// Customer data requests Shopify forwarded (customers/data_request): the merchant downloads
// what the app held about the customer when the request came, sends it on, and deletes it.
// The download goes through the action (an authenticated fetch in the embedded admin), not
// a plain link, and is saved by the browser from the answer.
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { useActionData, useFetcher, useLoaderData, useNavigation } from "@remix-run/react";
import { Badge, BlockStack, Button, Card, InlineStack, Layout, Page, Text } from "@shopify/polaris";
import { useEffect } from "react";
import { z } from "zod";
import { adminShop } from "~/admin/admin-shop.server";
import { ConfirmQuestion, ConfirmTrigger, useConfirmation } from "~/admin/confirm-question";
import { formatDateTime } from "~/admin/format";
import { postedFields } from "~/admin/form-data";
import { ResultBanner } from "~/admin/result-banner";
import { saveAsFile } from "~/admin/save-file";
import { deleteCustomerDataRequest, listCustomerDataRequests, takeCustomerDataReport } from "~/shops/customer-data-requests.server";
import { adminPageTitle } from "~/lib/page-title";

export const meta: MetaFunction = () => adminPageTitle("Customer data requests");

export async function loader({ request, context }: LoaderFunctionArgs) {
  const { shop } = await adminShop(request, context.services);
  const requests = await listCustomerDataRequests(context.services.db, shop.id);
  const keptMs = context.services.env.CUSTOMER_DATA_RETENTION_DAYS * 86_400_000;
  return {
    requests: requests.map((r) => ({
      id: r.id,
      dataRequestId: r.dataRequestId,
      customer: [r.customerEmail, r.customerPhone].filter(Boolean).join(" · ") || "No e-mail or phone given",
      paymentCount: r.paymentCount,
      receivedAt: formatDateTime(r.receivedAt),
      downloadedAt: r.downloadedAt ? formatDateTime(r.downloadedAt) : null,
      // The retention pass deletes it then (app/payments/retention.ts).
      deletedOn: formatDateTime(new Date(r.receivedAt.getTime() + keptMs)),
    })),
  };
}

const requestId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);
// A deletion is sent only from its confirmation: a stray post of the form deletes nothing.
const actionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("download"), id: requestId }),
  z.object({ intent: z.literal("delete"), id: requestId, confirm: z.literal("yes") }),
]);

type ActionResult = { ok: boolean; message: string; download?: { fileName: string; report: string } };

export async function action({ request, context }: ActionFunctionArgs) {
  const { services } = context;
  const { shop } = await adminShop(request, services);
  const input = actionSchema.safeParse(await postedFields(request));
  if (!input.success) return data<ActionResult>({ ok: false, message: "Unknown action." }, { status: 400 });
  if (input.data.intent === "download") {
    const report = await takeCustomerDataReport(services.db, shop.id, input.data.id, services.clock.now());
    if (!report) return data<ActionResult>({ ok: false, message: "That request no longer exists." }, { status: 404 });
    return data<ActionResult>({ ok: true, message: "Report downloaded.", download: report });
  }
  const deleted = await deleteCustomerDataRequest(services.db, shop.id, input.data.id);
  return data<ActionResult>({ ok: deleted, message: deleted ? "Request deleted." : "That request no longer exists." }, { status: deleted ? 200 : 404 });
}

type DownloadFetcher = ReturnType<typeof useFetcher<typeof action>>;

/** A request's download button, submitting through the page's download fetcher. */
function DownloadButton({ id, fetcher }: { id: string; fetcher: DownloadFetcher }) {
  return (
    <fetcher.Form method="post">
      <input type="hidden" name="intent" value="download" />
      <input type="hidden" name="id" value={id} />
      <Button submit variant="primary" loading={fetcher.state !== "idle" && fetcher.formData?.get("id") === id}>
        Download report (JSON)
      </Button>
    </fetcher.Form>
  );
}

/** Has the browser save a downloaded report as its file. */
function useSavedReport(download: { fileName: string; report: string } | undefined): void {
  useEffect(() => {
    if (!download) return;
    saveAsFile(new Blob([download.report], { type: "application/json" }), download.fileName);
  }, [download]);
}

type ListedRequest = ReturnType<typeof useLoaderData<typeof loader>>["requests"][number];

/**
 * A request's card. Its report is the only copy of what the app held when the customer asked,
 * and Shopify does not send the request again, so "Delete" first asks, saying so plainly when
 * the report was never downloaded.
 */
function RequestCard({ request, download, deleting }: { request: ListedRequest; download: DownloadFetcher; deleting: boolean }) {
  const confirmation = useConfirmation(request.id);
  return (
    <Card>
      <article aria-label={`Data request of ${request.customer}`}>
        <BlockStack gap="200">
          <InlineStack gap="200" blockAlign="center">
            {request.downloadedAt ? <Badge tone="success">Downloaded</Badge> : <Badge tone="attention">To answer</Badge>}
            <Text as="span" variant="headingSm">
              {request.customer}
            </Text>
          </InlineStack>
          <Text as="p" tone="subdued">
            Received {request.receivedAt}
            {request.dataRequestId ? ` · Shopify request ${request.dataRequestId}` : ""}
            {request.downloadedAt ? ` · downloaded ${request.downloadedAt}` : ""}
          </Text>
          <Text as="p">{request.paymentCount === 1 ? "1 payment" : `${request.paymentCount} payments`} with this customer's details.</Text>
          <Text as="p" tone="subdued">
            This report is deleted on {request.deletedOn}, downloaded or not.
          </Text>
          <InlineStack gap="200">
            <DownloadButton id={request.id} fetcher={download} />
            {confirmation.open ? null : <ConfirmTrigger confirmation={confirmation}>Delete</ConfirmTrigger>}
          </InlineStack>
          {confirmation.open ? (
            <ConfirmQuestion confirmation={confirmation} title="Delete this request?" fields={{ intent: "delete", id: request.id }} confirmLabel="Yes, delete it" busy={deleting}>
              <p>
                {request.downloadedAt
                  ? "Delete it once the customer has their report: the report is deleted with it, and Shopify does not send the request again."
                  : "Its report was never downloaded: once deleted it is lost, and Shopify does not send the request again. Download it first unless the customer no longer needs it."}
              </p>
            </ConfirmQuestion>
          ) : null}
        </BlockStack>
      </article>
    </Card>
  );
}

export default function DataRequests() {
  const { requests } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const navigation = useNavigation();
  const deleting = navigation.state !== "idle" ? navigation.formData?.get("id") : null;
  // Downloads answer to the page, not to their card: a refused one (the request deleted
  // meanwhile) is said in a banner that stays when the list read again has lost the card.
  const download = useFetcher<typeof action>();
  useSavedReport(download.data?.download);
  const downloadFailure = download.state === "idle" && download.data && !download.data.ok ? download.data : undefined;
  return (
    <Page
      title="Customer data requests"
      subtitle="When a customer asks your shop for their data, Shopify forwards the request here. Download the report of what this app holds about them, send it to the customer, then delete it."
    >
      <Layout>
        <ResultBanner result={result} />
        <ResultBanner result={downloadFailure} />
        {requests.length === 0 ? (
          <Layout.Section>
            <Card>
              <Text as="p">No customer has asked for their data.</Text>
            </Card>
          </Layout.Section>
        ) : (
          requests.map((request) => (
            <Layout.Section key={request.id}>
              <RequestCard request={request} download={download} deleting={deleting === request.id} />
            </Layout.Section>
          ))
        )}
      </Layout>
    </Page>
  );
}
