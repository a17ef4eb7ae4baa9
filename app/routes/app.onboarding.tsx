// Connecting the shop to the gateway: the device API key and the webhook Secret Key
// (checked at once, stored encrypted, never shown again), the notification URL to paste
// in the gateway dashboard, a warning when another shop uses the same device, a dedicated
// device, the gateway sandbox for test mode, and removing credentials.
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { Badge, Banner, BlockStack, Box, Button, Card, InlineStack, Layout, List, Page, Select, Text, TextField } from "@shopify/polaris";
import { useState } from "react";
import { z } from "zod";
import { revalidateAfterConflict } from "~/admin/revalidate";
import { adminShop } from "~/admin/admin-shop.server";
import { connectionView, devicesUsedByAnotherShop, paymentsFollowed, type EnvironmentConnection, type FollowedPayments } from "~/admin/connection.server";
import { ConfirmQuestion, ConfirmTrigger, useConfirmation } from "~/admin/confirm-question";
import { CopyButton } from "~/admin/copy-button";
import { postedFields } from "~/admin/form-data";
import { TitledCard } from "~/admin/titled-card";
import { UnreadableCredentials } from "~/admin/unreadable-credentials";
import {
  connectGateway,
  connectSandbox,
  createDedicatedDevice,
  credentialsVersion,
  paymentsOnEarlierCredentialsFollowed,
  removeGatewayCredentials,
  type OnboardingFailure,
} from "~/shops/onboarding.server";
import { adminPageTitle } from "~/lib/page-title";

export const meta: MetaFunction = () => adminPageTitle("Gateway connection");

export async function loader({ request, context }: LoaderFunctionArgs) {
  const { shop } = await adminShop(request, context.services);
  const [followed, earlierLive, earlierSandbox, usedByAnotherShop] = await Promise.all([
    paymentsFollowed(context.services.db, shop, context.services.clock.now()),
    paymentsOnEarlierCredentialsFollowed(context.services, shop, "live"),
    paymentsOnEarlierCredentialsFollowed(context.services, shop, "sandbox"),
    devicesUsedByAnotherShop(context.services.db, context.services.gateways, shop),
  ]);
  return {
    connection: connectionView(shop, context.services.appUrl, context.services.gateways),
    // Whether each environment's device is connected in another shop too: yes or no, nothing of that shop.
    usedByAnotherShop,
    followed,
    // Payments on the credentials kept from the device before, which a removal keeping the current ones would delete.
    earlierFollowed: { live: earlierLive, sandbox: earlierSandbox },
    credentials: { live: credentialsVersion(shop, "live"), sandbox: credentialsVersion(shop, "sandbox") },
  };
}

const envSchema = z.enum(["live", "sandbox"]);
const actionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("connect"), env: envSchema, deviceKey: z.string().max(300), secretKeyHex: z.string().max(300) }),
  z.object({ intent: z.literal("create_device"), env: envSchema, name: z.string().max(300) }),
  z.object({ intent: z.literal("connect_sandbox") }),
  // `credentials`: the credentialsVersion the question was asked about; credentials connected since are not removed.
  z.object({ intent: z.literal("remove"), env: envSchema, confirm: z.literal("yes"), credentials: z.string().min(1).max(64) }),
]);

type ActionResult =
  | { intent: "connect" | "connect_sandbox" | "remove"; ok: true; message: string; detail?: string }
  | { intent: "connect" | "connect_sandbox" | "create_device" | "remove" | "invalid"; ok: false; message: string; field?: "deviceKey" | "secretKeyHex" }
  | { intent: "create_device"; ok: true; device: { name: string; identifier: string; env: "live" | "sandbox" } };

// A removal refused because the credentials changed since the page was loaded reads the page's
// data again, so that it shows the device connected now (and the question asked about the
// earlier one closes); other refusals change nothing stored.
export const shouldRevalidate = revalidateAfterConflict;

/**
 * A failed connection's status: the keys are not keys (400), the gateway refused them (422), the
 * app was uninstalled meanwhile (409), the gateway could not be reached (503) or failed to
 * answer as it should (502): the last two are not the merchant's doing, and trying again may work.
 */
const connectFailureStatus: Record<OnboardingFailure["kind"], number> = { invalid_input: 400, uninstalled: 409, unauthorized: 422, unreachable: 503, gateway_error: 502 };

export async function action({ request, context }: ActionFunctionArgs) {
  const { services } = context;
  const { shop } = await adminShop(request, services);
  const parsed = actionSchema.safeParse(await postedFields(request));
  if (!parsed.success) return data<ActionResult>({ intent: "invalid", ok: false, message: "The form was incomplete; reload the page and try again." }, { status: 400 });
  const input = parsed.data;
  switch (input.intent) {
    case "connect": {
      const result = await connectGateway(services, shop.shopDomain, { env: input.env, deviceKey: input.deviceKey, secretKeyHex: input.secretKeyHex });
      if (!result.ok) {
        return data<ActionResult>({ intent: "connect", ok: false, message: result.message, ...(result.field ? { field: result.field } : {}) }, { status: connectFailureStatus[result.kind] });
      }
      const message = input.env === "live" ? "The live gateway device is connected." : "The gateway sandbox device is connected.";
      return data<ActionResult>({ intent: "connect", ok: true, message, ...(result.notice ? { detail: result.notice } : {}) });
    }
    case "create_device": {
      const result = await createDedicatedDevice(services, shop.shopDomain, input.env, input.name);
      if (!result.ok) return data<ActionResult>({ intent: "create_device", ok: false, message: result.message }, { status: 422 });
      return data<ActionResult>({ intent: "create_device", ok: true, device: { name: result.device.name, identifier: result.device.identifier, env: input.env } });
    }
    case "connect_sandbox": {
      const result = await connectSandbox(services, shop.shopDomain);
      if (!result.ok) return data<ActionResult>({ intent: "connect_sandbox", ok: false, message: result.message }, { status: connectFailureStatus[result.kind] });
      const message = "Test mode is ready: the gateway sandbox is connected and sends its notifications to this shop.";
      return data<ActionResult>({ intent: "connect_sandbox", ok: true, message, ...(result.notice ? { detail: result.notice } : {}) });
    }
    case "remove": {
      const removed = await removeGatewayCredentials(services, shop.shopDomain, input.env, input.credentials);
      if (!removed.ok) return data<ActionResult>({ intent: "remove", ok: false, message: removed.message }, { status: 409 });
      const message = input.env === "live" ? "The live device's credentials were removed." : "The sandbox device's credentials were removed.";
      return data<ActionResult>({ intent: "remove", ok: true, message, ...(removed.notice ? { detail: removed.notice } : {}) });
    }
  }
}

function ConnectionState({ connection }: { connection: EnvironmentConnection }) {
  return (
    <InlineStack gap="200" blockAlign="center">
      <Text as="span" variant="bodyMd" fontWeight="semibold">
        {connection.label}
      </Text>
      {connection.unreadable ? (
        <Badge tone="critical">Cannot be read</Badge>
      ) : connection.connected ? (
        <Badge tone="success">Connected</Badge>
      ) : (
        <Badge>Not connected</Badge>
      )}
      {connection.maskedKey ? (
        <Text as="span" tone="subdued">
          Device key {connection.maskedKey}
        </Text>
      ) : null}
      {connection.retired ? (
        <Text as="span" tone="subdued">
          Credentials removed or replaced while payments were in progress on them are kept, out of use, to finish those payments and watch rejected ones for crypto sent late,
          and deleted once those no longer need them.
        </Text>
      ) : null}
    </InlineStack>
  );
}

/**
 * The device of an environment is connected in another shop of this app too. The gateway sends
 * a device's notifications to the one URL set on it, so the merchant is told what that means for
 * this shop's payments and how to give the shop a device of its own. The other shop is never
 * named: shops learn nothing of each other.
 */
function SharedDeviceWarning({ env }: { env: EnvironmentConnection["env"] }) {
  const device = env === "live" ? "live device" : "gateway sandbox device";
  const fix =
    env === "live"
      ? "To have this shop's notifications come to it, connect a device of its own here: create one below (or in the gateway dashboard), set its notification URL to this shop's address above, and connect it with its Secret Key."
      : "To have this shop's notifications come to it, reconnect the gateway sandbox below: it makes a device of this shop's own, with this shop's notification URL.";
  return (
    <Banner tone="warning" title={`Another shop uses this ${device}`}>
      <BlockStack gap="200">
        <p>
          The same device is connected in another shop that uses this app. The gateway sends a device&apos;s notifications to the one notification URL set on it, so they reach only
          one of the two shops.
        </p>
        <p>
          When that URL is the other shop&apos;s, the notifications of this shop&apos;s payments are passed on to this shop as long as both shops hold the device&apos;s current Secret
          Key. Otherwise this shop&apos;s payments still settle, but only through the app&apos;s regular checks with the gateway (when the shopper returns, and the hourly
          reconciliation), so later than a notification would settle them.
        </p>
        <p>{fix}</p>
      </BlockStack>
    </Banner>
  );
}

/**
 * What removing an environment's credentials does, said before the merchant confirms.
 * `earlierFollowed`: payments still followed on the credentials kept from the device before,
 * which the removal deletes when it keeps the current ones in their place.
 */
function removalConsequences(env: EnvironmentConnection["env"], followed: FollowedPayments, earlierFollowed: number, unreadable: boolean): string {
  const stops =
    env === "live" ? "Shoppers will no longer be able to pay with crypto until a device is connected again." : "Test payments will stop working until the sandbox is connected again.";
  const { inProgress, watched } = followed;
  if (inProgress === 0 && watched === 0) return `${stops} No payment is in progress on it.`;
  if (unreadable) {
    // Not kept (removeGatewayCredentials): they could not finish anything.
    return `${stops} The app cannot read these credentials with its encryption keys, so it cannot use them to finish the payments still followed on them: they are deleted, and any credentials kept from the device before stay. Check those payments in the gateway dashboard.`;
  }
  const still = [
    inProgress === 0 ? null : `${inProgress === 1 ? "1 payment is" : `${inProgress} payments are`} still in progress on it`,
    watched === 0 ? null : `${watched === 1 ? "1 rejected payment is" : `${watched} rejected payments are`} still watched for crypto the shopper sends late`,
  ].filter((part) => part !== null);
  const until = inProgress > 0 && watched === 0 ? "until they end (at most Shopify's 3 days)" : "until they end, or for a week after they began when rejected";
  const kept = `${stops} ${still.join(", and ")}: the app keeps the credentials, sealed, only to read those payments' orders and check their notifications ${until}, then deletes them.`;
  if (earlierFollowed === 0) return kept;
  const earlier = earlierFollowed === 1 ? "1 payment that may still be in progress" : `${earlierFollowed} payments that may still be in progress`;
  return `${kept} The credentials of the device before it, kept until now for ${earlier} on them, will be deleted to make room: that device's notifications will no longer be accepted, so check its payments in the gateway dashboard.`;
}

/**
 * What connecting another device costs, said before the merchant presses Connect (or
 * Reconnect): while payments are followed on the current device, its credentials are kept in
 * the place of those kept from the device before it, which are deleted even though payments
 * may still be in progress on them. Null when nothing would be deleted.
 */
function replacementWarning(env: EnvironmentConnection["env"], connected: boolean, followed: FollowedPayments, earlierFollowed: number): string | null {
  if (!connected || followed.inProgress + followed.watched === 0 || earlierFollowed === 0) return null;
  const earlier = earlierFollowed === 1 ? "1 payment that may still be in progress" : `${earlierFollowed} payments that may still be in progress`;
  return `Connecting another ${env === "live" ? "live" : "sandbox"} device now: the credentials kept from the device before the current one, for ${earlier} on it, will be deleted to make room, and that device's notifications will no longer be accepted. Check those payments in the gateway dashboard first, or connect once they have ended.`;
}

/**
 * "Remove" asks first, about the credentials it was pressed for (`credentials`, their
 * credentialsVersion, which the form posts and the action checks): once others are connected
 * (removed and connected again, or replaced), the question is no longer open.
 */
function RemoveCredentials({
  connection,
  credentials,
  busy,
  followed,
  earlierFollowed,
}: {
  connection: EnvironmentConnection;
  credentials: string | null;
  busy: boolean;
  followed: FollowedPayments;
  earlierFollowed: number;
}) {
  const confirmation = useConfirmation(credentials);
  if (!connection.connected) return null;
  if (!confirmation.open) {
    return (
      <InlineStack>
        <ConfirmTrigger confirmation={confirmation}>{`Remove the ${connection.env} credentials`}</ConfirmTrigger>
      </InlineStack>
    );
  }
  return (
    <ConfirmQuestion
      confirmation={confirmation}
      title={`Remove the ${connection.env} device's credentials?`}
      fields={{ intent: "remove", env: connection.env, credentials: confirmation.askedFor ?? "" }}
      confirmLabel="Yes, remove them"
      busy={busy}
    >
      <p>{removalConsequences(connection.env, followed, earlierFollowed, connection.unreadable)}</p>
    </ConfirmQuestion>
  );
}

export default function Onboarding() {
  const { connection, usedByAnotherShop, followed, earlierFollowed, credentials } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const navigation = useNavigation();
  const busyIntent = navigation.state !== "idle" ? navigation.formData?.get("intent") : null;

  const [env, setEnv] = useState<"live" | "sandbox">(connection.testMode ? "sandbox" : "live");
  const connectWarning = replacementWarning(env, connection[env].connected, followed[env], earlierFollowed[env]);
  const sandboxWarning = replacementWarning("sandbox", connection.sandbox.connected, followed.sandbox, earlierFollowed.sandbox);
  const [deviceKey, setDeviceKey] = useState("");
  const [secretKeyHex, setSecretKeyHex] = useState("");
  const [deviceName, setDeviceName] = useState("");
  const [seenResult, setSeenResult] = useState(result);
  if (result !== seenResult) {
    setSeenResult(result);
    // The key and the Secret Key leave the page once stored: never kept in the form.
    if (result && result.ok && result.intent === "connect") {
      setDeviceKey("");
      setSecretKeyHex("");
    }
    // A device is created on the gateway whose key made it: it is connected there.
    if (result && result.ok && result.intent === "create_device") setEnv(result.device.env);
  }
  const connectError = result && !result.ok && result.intent === "connect" ? result : null;

  return (
    <Page title="Gateway connection" subtitle="Connect your crypto payment gateway device so shoppers can pay with crypto.">
      <Layout>
        {result && "message" in result && (result.intent !== "connect" || result.ok) ? (
          <Layout.Section>
            <Banner tone={result.ok ? "success" : "critical"} title={result.message}>
              {"detail" in result && result.detail ? result.detail : null}
            </Banner>
          </Layout.Section>
        ) : null}
        <UnreadableCredentials environments={[connection.live, connection.sandbox]} />
        {usedByAnotherShop.live || usedByAnotherShop.sandbox ? (
          <Layout.Section>
            <BlockStack gap="300">
              {usedByAnotherShop.live ? <SharedDeviceWarning env="live" /> : null}
              {usedByAnotherShop.sandbox ? <SharedDeviceWarning env="sandbox" /> : null}
            </BlockStack>
          </Layout.Section>
        ) : null}
        <Layout.Section>
          <TitledCard title="Status" gap="300">
            <ConnectionState connection={connection.live} />
            <ConnectionState connection={connection.sandbox} />
            <Text as="p" tone={connection.ready ? "success" : "subdued"}>
              {connection.ready
                ? `Crypto payments can be offered at checkout (${connection.testMode ? "test mode: only Shopify test orders, paid on the gateway sandbox" : "live"}).`
                : connection.testMode
                  ? "Test mode is on: connect the gateway sandbox below before shoppers can pay."
                  : connection.sandbox.connected
                    ? "Connect a live gateway device before shoppers can pay, or turn on test mode in Settings to take test payments through the sandbox."
                    : "Connect a live gateway device before shoppers can pay."}
            </Text>
          </TitledCard>
        </Layout.Section>

        <Layout.Section>
          <TitledCard title="1. Notification URL" gap="300">
            <Text as="p">The gateway tells this app about every payment at this address. Paste it into your device&apos;s settings in the gateway dashboard.</Text>
            <InlineStack gap="200" blockAlign="center" wrap>
              <Box background="bg-surface-secondary" padding="200" borderRadius="200">
                <Text as="span" variant="bodyMd" breakWord>
                  <code id="notification-url">{connection.notificationUrl}</code>
                </Text>
              </Box>
              <CopyButton value={connection.notificationUrl} label="Copy URL" />
            </InlineStack>
            <Text as="h3" variant="headingSm">
              Get the Secret Key that signs the notifications
            </Text>
            <List type="number">
              <List.Item>In the gateway dashboard, open Settings → Merchant → Devices.</List.Item>
              <List.Item>Choose the device whose API key you enter below.</List.Item>
              <List.Item>Paste the notification URL above into the device&apos;s notification URL field and save.</List.Item>
              <List.Item>Press “Generate Secret Key” and copy the hexadecimal key it shows.</List.Item>
            </List>
          </TitledCard>
        </Layout.Section>

        <Layout.Section>
          <Card>
            <Form method="post" autoComplete="off">
              <input type="hidden" name="intent" value="connect" />
              <BlockStack gap="300">
                <Text as="h2" variant="headingMd">
                  2. Device API key and Secret Key
                </Text>
                <Text as="p" tone="subdued">
                  The key is checked with the gateway at once and both are stored encrypted. Only the key&apos;s last four characters are ever shown again.
                </Text>
                {connectError ? <Banner tone="critical" title={connectError.message} /> : null}
                {result && result.ok && result.intent === "connect" ? (
                  <Banner tone="success" title={result.message}>
                    {result.detail ?? null}
                  </Banner>
                ) : null}
                <Select
                  label="Gateway"
                  name="env"
                  options={[
                    { label: "Live gateway (real payments)", value: "live" },
                    { label: "Gateway sandbox (test payments)", value: "sandbox" },
                  ]}
                  value={env}
                  onChange={(value) => setEnv(value === "sandbox" ? "sandbox" : "live")}
                />
                <TextField
                  label="Device API key"
                  name="deviceKey"
                  value={deviceKey}
                  onChange={setDeviceKey}
                  autoComplete="off"
                  helpText="Settings → Merchant → Devices in the gateway dashboard, or the key of a device created below."
                  error={connectError?.field === "deviceKey" ? connectError.message : undefined}
                />
                <TextField
                  label="Secret Key"
                  name="secretKeyHex"
                  type="password"
                  value={secretKeyHex}
                  onChange={setSecretKeyHex}
                  autoComplete="off"
                  helpText="The hexadecimal key from “Generate Secret Key”."
                  error={connectError?.field === "secretKeyHex" ? connectError.message : undefined}
                />
                {connectWarning ? <Banner tone="warning" title={connectWarning} /> : null}
                <InlineStack>
                  <Button submit variant="primary" loading={busyIntent === "connect"}>
                    Connect
                  </Button>
                </InlineStack>
              </BlockStack>
            </Form>
          </Card>
        </Layout.Section>

        <Layout.Section>
          <Card>
            <Form method="post" autoComplete="off">
              <input type="hidden" name="intent" value="create_device" />
              <input type="hidden" name="env" value={connection.live.connected ? "live" : "sandbox"} />
              <BlockStack gap="300">
                <Text as="h2" variant="headingMd">
                  Create a dedicated device
                </Text>
                <Text as="p" tone="subdued">
                  A separate device for this shop keeps its payments and notifications apart from your other sales channels. It is created with the connected device&apos;s key.
                </Text>
                {result && result.intent === "create_device" && !result.ok ? <Banner tone="critical" title={result.message} /> : null}
                {result && result.intent === "create_device" && result.ok ? (
                  <Banner tone="success" title={`Device “${result.device.name}” created on the ${result.device.env === "live" ? "live gateway" : "gateway sandbox"}`}>
                    <BlockStack gap="200">
                      <p>Its API key is shown only this once. Copy it now:</p>
                      <InlineStack gap="200" blockAlign="center" wrap>
                        <code id="new-device-key">{result.device.identifier}</code>
                        <CopyButton value={result.device.identifier} label="Copy key" />
                      </InlineStack>
                      <p>
                        Then, in the gateway dashboard, set this device&apos;s notification URL to the address above and generate its Secret Key. Finally connect it
                        here with both.
                      </p>
                    </BlockStack>
                  </Banner>
                ) : null}
                <TextField label="New device name" name="name" value={deviceName} onChange={setDeviceName} autoComplete="off" maxLength={128} />
                <InlineStack>
                  <Button submit loading={busyIntent === "create_device"} disabled={!connection.live.connected && !connection.sandbox.connected}>
                    Create device
                  </Button>
                </InlineStack>
              </BlockStack>
            </Form>
          </Card>
        </Layout.Section>

        <Layout.Section>
          <TitledCard title="Test mode" gap="300">
            <Text as="p">
              Shopify&apos;s test orders always go to the gateway sandbox, a faithful stand-in for the gateway where no real money moves. Connect it to try payments without a gateway
              account; turn on test mode in Settings to send every payment there.
            </Text>
            {result && result.intent === "connect_sandbox" && !result.ok ? <Banner tone="critical" title={result.message} /> : null}
            {sandboxWarning ? <Banner tone="warning" title={sandboxWarning} /> : null}
            <Form method="post">
              <input type="hidden" name="intent" value="connect_sandbox" />
              <Button submit loading={busyIntent === "connect_sandbox"}>
                {connection.sandbox.connected ? "Reconnect the gateway sandbox" : "Connect the gateway sandbox"}
              </Button>
            </Form>
          </TitledCard>
        </Layout.Section>

        {connection.anyConnected ? (
          <Layout.Section>
            <TitledCard title="Remove credentials" gap="300">
              <RemoveCredentials connection={connection.live} credentials={credentials.live} busy={busyIntent === "remove"} followed={followed.live} earlierFollowed={earlierFollowed.live} />
              <RemoveCredentials connection={connection.sandbox} credentials={credentials.sandbox} busy={busyIntent === "remove"} followed={followed.sandbox} earlierFollowed={earlierFollowed.sandbox} />
            </TitledCard>
          </Layout.Section>
        ) : null}
      </Layout>
    </Page>
  );
}
