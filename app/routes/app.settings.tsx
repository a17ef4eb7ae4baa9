// How shoppers pay: the gateway's page (they pick the coin, or one fixed coin) or this
// app's own page (with the coins offered there), the gateway page's language, and test
// mode (only Shopify's test orders, paid on the gateway sandbox). The coins are chosen for
// each gateway environment apart: real checkouts and Shopify's test orders are created on
// different gateways, which name their coins differently.
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation, type ShouldRevalidateFunction } from "@remix-run/react";
import { Banner, BlockStack, Box, Button, Card, Checkbox, ChoiceList, Layout, Page, Select, Text } from "@shopify/polaris";
import { ResultBanner } from "~/admin/result-banner";
import { UnreadableCredentials } from "~/admin/unreadable-credentials";
import { useState } from "react";
import { adminShop } from "~/admin/admin-shop.server";
import { postedForm } from "~/admin/form-data";
import { CHECKOUT_MODES, COIN_ENVIRONMENTS, GATEWAY_LANGUAGES } from "~/admin/settings-options";
import { readSettingsForm, settingsView, type SettingsField, type SettingsFormResult, type SettingsView } from "~/admin/settings.server";
import type { GatewayEnv } from "~/payments/deps";
import { type SettingsRefusal, updateShopSettings } from "~/shops/onboarding.server";
import { adminPageTitle } from "~/lib/page-title";

export const meta: MetaFunction = () => adminPageTitle("Settings");

export async function loader({ request, context }: LoaderFunctionArgs) {
  const { shop } = await adminShop(request, context.services);
  return { settings: await settingsView(context.services, shop) };
}

/**
 * A save's outcome; `field` names the field a refusal is about, which the page marks with it;
 * `changed`: refused because the settings were changed since the page was loaded.
 */
type ActionResult = { ok: boolean; message: string; field?: SettingsField; warning?: boolean; changed?: true };

// A save refused because the settings changed since the page was loaded reads the page's data
// again (a refusal's 4xx is not revalidated by default), so that the page shows the settings as
// they are and the next save is made over them, as the refusal tells the merchant.
export const shouldRevalidate: ShouldRevalidateFunction = ({ actionResult, defaultShouldRevalidate }) =>
  (actionResult as ActionResult | undefined)?.changed ? true : defaultShouldRevalidate;

/** A refused save's status: the app could not ask a gateway it depends on (503), or the save conflicts with the shop as it is now (409). */
const REFUSAL_STATUS: Record<SettingsRefusal["kind"], number> = { invalid: 400, refused: 422, unreachable: 503, changed: 409, uninstalled: 409 };

export async function action({ request, context }: ActionFunctionArgs) {
  const { services } = context;
  const { shop } = await adminShop(request, services);
  const posted = await postedForm(request);
  const form: SettingsFormResult = posted ? readSettingsForm(posted) : { ok: false, message: "The settings form was not sent as a form; reload the page and try again." };
  if (!form.ok) return data<ActionResult>({ ok: false, message: form.message, ...(form.field ? { field: form.field } : {}) }, { status: 400 });
  const result = await updateShopSettings(services, shop.shopDomain, form.value, form.version);
  if (!result.ok) return data<ActionResult>({ ok: false, message: result.message, ...(result.kind === "changed" ? { changed: true as const } : {}) }, { status: REFUSAL_STATUS[result.kind] });
  return data<ActionResult>(savedResult(shop.paymentsAppReady, result.shop));
}

/**
 * "Settings saved.", and what the save changed at checkout: switching test mode can leave the
 * shop without a connected device for the new mode, and Shopify then stops offering crypto.
 */
function savedResult(wasReady: boolean, shop: { paymentsAppReady: boolean; testMode: boolean }): ActionResult {
  if (wasReady && !shop.paymentsAppReady) {
    const why = shop.testMode
      ? "test mode takes test payments through the gateway sandbox, which is not connected. Connect it on the Connection page, or turn test mode off."
      : "with test mode off, payments go to the live gateway, and no live device is connected. Connect one on the Connection page, or turn test mode back on.";
    return { ok: true, warning: true, message: `Settings saved, but Shopify no longer offers crypto at checkout: ${why}` };
  }
  if (!wasReady && shop.paymentsAppReady) return { ok: true, message: "Settings saved. Shopify offers crypto at checkout again." };
  return { ok: true, message: "Settings saved." };
}

export default function Settings() {
  const { settings } = useLoaderData<typeof loader>();
  // The form starts again from the stored settings whenever they change (after a save, or a
  // save refused because they changed meanwhile): state kept from before would show one value
  // and submit another.
  return <SettingsForm key={settings.version} settings={settings} />;
}

function SettingsForm({ settings }: { settings: SettingsView }) {
  const result = useActionData<typeof action>();
  const saving = useNavigation().state === "submitting";
  const fixedCoinError = result && !result.ok && result.field === "fixedCurrency" ? result.message : undefined;
  const [checkoutMode, setCheckoutMode] = useState(settings.checkoutMode);
  const [fixed, setFixed] = useState<Record<GatewayEnv, string>>({ live: settings.live.fixedCurrency, sandbox: settings.sandbox.fixedCurrency });
  const [offered, setOffered] = useState<Record<GatewayEnv, string[]>>({ live: settings.live.offeredCurrencies, sandbox: settings.sandbox.offeredCurrencies });
  const [language, setLanguage] = useState(settings.gatewayLanguage);
  const [testMode, setTestMode] = useState(settings.testMode);
  const [readOrderOnWebhook, setReadOrderOnWebhook] = useState(settings.readOrderOnWebhook);
  // Only environments with a device can list their coins; the others keep what they have.
  const shown = COIN_ENVIRONMENTS.filter(({ env }) => settings[env].connected);
  const noDevice = <Banner tone="warning" title="The gateway's coins cannot be listed: connect a device first." />;
  const unreachable = (env: GatewayEnv, gateway: string) =>
    settings[env].unreadable ? (
      <Banner tone="critical" title={`The coins of ${gateway} cannot be listed: its stored credentials cannot be read. Connect the device again.`} />
    ) : (
      <Banner tone="warning" title={`The coins of ${gateway} cannot be listed right now. Reload the page to try again.`} />
    );
  const toggle = (env: GatewayEnv, symbol: string, checked: boolean) =>
    setOffered((current) => ({ ...current, [env]: checked ? [...current[env], symbol] : current[env].filter((s) => s !== symbol) }));

  return (
    <Page title="Settings">
      <Form method="post">
        <input type="hidden" name="version" value={settings.version} />
        <input type="hidden" name="checkoutMode" value={checkoutMode} />
        {COIN_ENVIRONMENTS.map(({ env }) => (
          <input key={env} type="hidden" name={`${env}FixedCurrency`} value={checkoutMode === "fixed_coin" ? fixed[env] : ""} />
        ))}
        {COIN_ENVIRONMENTS.flatMap(({ env }) => offered[env].map((symbol) => <input key={`${env}:${symbol}`} type="hidden" name={`${env}OfferedCurrencies`} value={symbol} />))}
        <input type="hidden" name="gatewayLanguage" value={language} />
        <input type="hidden" name="testMode" value={testMode ? "true" : "false"} />
        <input type="hidden" name="readOrderOnWebhook" value={readOrderOnWebhook ? "true" : "false"} />
        <Layout>
          <ResultBanner result={result} />
          <UnreadableCredentials environments={[settings.live, settings.sandbox]} connectUrl="/app/onboarding" />
          <Layout.Section>
            <Card>
              <BlockStack gap="300">
                <ChoiceList title="How shoppers pay" choices={CHECKOUT_MODES.map((m) => ({ label: m.label, value: m.value }))} selected={[checkoutMode]} onChange={(v) => setCheckoutMode(v[0] ?? "gateway_choice")} />
                {checkoutMode === "fixed_coin" ? (
                  <BlockStack gap="300">
                    {shown.length === 0 ? noDevice : null}
                    {shown.map(({ env, coinLabel, gateway }) => {
                      const coins = settings[env].coins;
                      if (!coins) return <Box key={env}>{unreachable(env, gateway)}</Box>;
                      const chosen = coins.find((c) => c.symbol === fixed[env]);
                      return (
                        <Select
                          key={env}
                          label={coinLabel}
                          options={[
                            { label: "None: shoppers choose the coin on the gateway's page", value: "" },
                            ...coins.map((c) => ({ label: c.listed ? `${c.name} · ${c.symbol} (${c.blockchain}) — ${c.limits}` : `${c.symbol} — not offered by ${gateway}`, value: c.symbol })),
                          ]}
                          value={fixed[env]}
                          onChange={(value) => setFixed((current) => ({ ...current, [env]: value }))}
                          helpText={`Coins and limits as listed by ${gateway}.`}
                          error={chosen && !chosen.listed ? `${chosen.symbol} is not offered by ${gateway}, which refuses orders for it. Choose another coin.` : fixedCoinError}
                        />
                      );
                    })}
                  </BlockStack>
                ) : null}
                {checkoutMode === "app_page" ? (
                  <BlockStack gap="300">
                    <Text as="h3" variant="headingSm">
                      Coins offered on the payment page
                    </Text>
                    <Text as="p" tone="subdued">
                      Leave a gateway&apos;s coins all unticked to offer every coin it has. The gateway states each coin&apos;s limits in euros: for an order in euros, a coin is only shown when the amount is within them. For an order in another currency, the gateway checks them when the shopper picks a coin; a coin it refuses for the amount is not shown again for that payment.
                    </Text>
                    {shown.length === 0 ? noDevice : null}
                    {shown.map(({ env, title, gateway }) => {
                      const coins = settings[env].coins;
                      return (
                        <BlockStack key={env} gap="100">
                          <Text as="h4" variant="headingXs">
                            {title}
                          </Text>
                          {coins ? (
                            <Box>
                              {coins.map((coin) => (
                                <Checkbox
                                  key={coin.symbol}
                                  label={coin.listed ? `${coin.name} · ${coin.symbol} (${coin.blockchain})` : `${coin.symbol} — not offered by ${gateway}`}
                                  helpText={coin.listed ? coin.limits : "Shoppers are never offered it: untick it."}
                                  checked={offered[env].includes(coin.symbol)}
                                  onChange={(checked) => toggle(env, coin.symbol, checked)}
                                />
                              ))}
                            </Box>
                          ) : (
                            unreachable(env, gateway)
                          )}
                          <Text as="p" tone="subdued">
                            Coins and limits as listed by {gateway}.
                          </Text>
                        </BlockStack>
                      );
                    })}
                  </BlockStack>
                ) : null}
              </BlockStack>
            </Card>
          </Layout.Section>
          <Layout.Section>
            <Card>
              <BlockStack gap="300">
                <Select label="Language of the gateway's payment page" options={GATEWAY_LANGUAGES.map((l) => ({ label: l.label, value: l.value }))} value={language} onChange={setLanguage} />
                <Checkbox
                  label="Test mode: accept only Shopify test orders, paid on the gateway sandbox"
                  helpText="No real money moves. Real checkouts are declined while this is on, so that no order can be marked paid on the sandbox. Shopify's test orders always use the sandbox, whatever this says."
                  checked={testMode}
                  onChange={setTestMode}
                />
                <Checkbox
                  label="Confirm every payment with the gateway before Shopify is told"
                  helpText="Off: the gateway's signed notification of a payment's outcome is acted on at once, and the app's next reading of your orders (within an hour) checks it and flags any disagreement. On: the app reads the order from the gateway first, which costs one more gateway request per payment (of your device's 2,000 a day)."
                  checked={readOrderOnWebhook}
                  onChange={setReadOrderOnWebhook}
                />
              </BlockStack>
            </Card>
          </Layout.Section>
          <Layout.Section>
            <Button submit variant="primary" loading={saving}>
              Save
            </Button>
          </Layout.Section>
        </Layout>
      </Form>
    </Page>
  );
}
