// How shoppers pay: the gateway's page (they pick the coin, or one fixed coin) or this
// app's own page (with the coins offered there), the gateway page's language, and test
// mode (every payment goes to the gateway sandbox).
import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import { Banner, BlockStack, Box, Button, Card, Checkbox, ChoiceList, Layout, Page, Select, Text } from "@shopify/polaris";
import { ResultBanner } from "~/admin/result-banner";
import { useState } from "react";
import { adminShop } from "~/admin/admin-shop.server";
import { postedForm } from "~/admin/form-data";
import { CHECKOUT_MODES, GATEWAY_LANGUAGES } from "~/admin/settings-options";
import { readSettingsForm, settingsView } from "~/admin/settings.server";
import { updateShopSettings } from "~/shops/onboarding.server";

export async function loader({ request, context }: LoaderFunctionArgs) {
  const { shop } = await adminShop(request, context.services);
  return { settings: await settingsView(context.services, shop) };
}

export async function action({ request, context }: ActionFunctionArgs) {
  const { services } = context;
  const { shop } = await adminShop(request, services);
  const posted = await postedForm(request);
  const form = posted ? readSettingsForm(posted) : ({ ok: false, message: "The settings form was not sent as a form; reload the page and try again." } as const);
  if (!form.ok) return data({ ok: false as const, message: form.message }, { status: 400 });
  const result = await updateShopSettings(services, shop.shopDomain, form.value);
  if (!result.ok) return data({ ok: false as const, message: result.message }, { status: 400 });
  return { ok: true as const, message: "Settings saved." };
}

export default function Settings() {
  const { settings } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const saving = useNavigation().state === "submitting";
  const [checkoutMode, setCheckoutMode] = useState(settings.checkoutMode);
  const [fixedCurrency, setFixedCurrency] = useState(settings.fixedCurrency);
  const [offered, setOffered] = useState<string[]>(settings.offeredCurrencies);
  const [language, setLanguage] = useState(settings.gatewayLanguage);
  const [testMode, setTestMode] = useState(settings.testMode);
  const coins = settings.coins;

  return (
    <Page title="Settings">
      <Form method="post">
        <input type="hidden" name="checkoutMode" value={checkoutMode} />
        <input type="hidden" name="fixedCurrency" value={checkoutMode === "fixed_coin" ? fixedCurrency : ""} />
        {offered.map((symbol) => (
          <input key={symbol} type="hidden" name="offeredCurrencies" value={symbol} />
        ))}
        <input type="hidden" name="gatewayLanguage" value={language} />
        <input type="hidden" name="testMode" value={testMode ? "true" : "false"} />
        <Layout>
          <ResultBanner result={result} />
          <Layout.Section>
            <Card>
              <BlockStack gap="300">
                <ChoiceList title="How shoppers pay" choices={CHECKOUT_MODES.map((m) => ({ label: m.label, value: m.value }))} selected={[checkoutMode]} onChange={(v) => setCheckoutMode(v[0] ?? "gateway_choice")} />
                {checkoutMode === "fixed_coin" ? (
                  coins ? (
                    <Select
                      label="Coin shoppers pay with"
                      options={[{ label: "Choose a coin", value: "" }, ...coins.map((c) => ({ label: `${c.name} (${c.blockchain}) — ${c.limits}`, value: c.symbol }))]}
                      value={fixedCurrency}
                      onChange={setFixedCurrency}
                    />
                  ) : (
                    <Banner tone="warning" title="The gateway's coins cannot be listed: connect a device first." />
                  )
                ) : null}
                {checkoutMode === "app_page" ? (
                  <BlockStack gap="200">
                    <Text as="h3" variant="headingSm">
                      Coins offered on the payment page
                    </Text>
                    <Text as="p" tone="subdued">
                      Leave all unticked to offer every coin the gateway has. A coin is only shown to a shopper when the order&apos;s amount is within its limits.
                    </Text>
                    {coins ? (
                      <Box>
                        {coins.map((coin) => (
                          <Checkbox
                            key={coin.symbol}
                            label={`${coin.name} · ${coin.symbol} (${coin.blockchain})`}
                            helpText={coin.limits}
                            checked={offered.includes(coin.symbol)}
                            onChange={(checked) => setOffered((current) => (checked ? [...current, coin.symbol] : current.filter((s) => s !== coin.symbol)))}
                          />
                        ))}
                      </Box>
                    ) : (
                      <Banner tone="warning" title="The gateway's coins cannot be listed: connect a device first." />
                    )}
                    {settings.coinsFrom ? (
                      <Text as="p" tone="subdued">
                        Coins and limits as listed by {settings.coinsFrom}.
                      </Text>
                    ) : null}
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
