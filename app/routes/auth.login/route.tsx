// Logging in from outside Shopify's admin (for example the app's own URL): the merchant
// names their shop and is sent through Shopify's OAuth. With the development login the
// admin opens directly for that shop instead.
import type { ActionFunctionArgs, LinksFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { AppProvider, Button, Card, FormLayout, Page, Text, TextField } from "@shopify/polaris";
import polarisStyles from "@shopify/polaris/build/esm/styles.css?url";
import enTranslations from "@shopify/polaris/locales/en.json";
import { useState } from "react";
import { postedForm } from "~/admin/form-data";
import { devLoginEnabled, shopDomainSchema } from "~/shopify/admin-auth.server";
import type { AppServices } from "~/services.server";
import { login } from "~/shopify.server";
import { recordInstall } from "~/shops/shop-credentials.server";
import { loginErrorMessage } from "./login-errors.server";
import { pageTitle } from "~/lib/page-title";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: polarisStyles }];

async function devLogin(request: Request, services: AppServices): Promise<{ shop?: string } | null> {
  const shop = request.method === "POST" ? ((await postedForm(request))?.get("shop") ?? null) : new URL(request.url).searchParams.get("shop");
  if (shop === null) return {};
  const parsed = shopDomainSchema.safeParse(typeof shop === "string" ? shop : "");
  if (!parsed.success) return { shop: "Enter a *.myshopify.com shop domain." };
  // The development login stands for Shopify's install: a shop marked uninstalled (an
  // app/uninstalled tried out) is installed again here, as Shopify's OAuth would do it.
  const existing = await services.db.shop.findUnique({ where: { shopDomain: parsed.data }, select: { uninstalledAt: true } });
  if (existing?.uninstalledAt) await recordInstall(services.db, parsed.data, services.clock.now());
  throw redirect(`/app?shop=${encodeURIComponent(parsed.data)}`);
}

export const meta: MetaFunction = () => pageTitle("Log in");

export async function loader({ request, context }: LoaderFunctionArgs) {
  if (devLoginEnabled(context.services)) return { errors: (await devLogin(request, context.services)) ?? {} };
  return { errors: loginErrorMessage(await login(request)) };
}

export async function action({ request, context }: ActionFunctionArgs) {
  if (devLoginEnabled(context.services)) return { errors: (await devLogin(request, context.services)) ?? {} };
  return { errors: loginErrorMessage(await login(request)) };
}

export default function Login() {
  const loaderData = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const [shop, setShop] = useState("");
  const errors = actionData?.errors ?? loaderData.errors;
  return (
    <AppProvider i18n={enTranslations}>
      <Page narrowWidth>
        <Card>
          <Form method="post">
            <FormLayout>
              <Text variant="headingMd" as="h1">
                Log in
              </Text>
              <TextField type="text" name="shop" label="Shop domain" helpText="example.myshopify.com" value={shop} onChange={setShop} autoComplete="on" error={errors.shop} />
              <Button submit variant="primary">
                Log in
              </Button>
            </FormLayout>
          </Form>
        </Card>
      </Page>
    </AppProvider>
  );
}
