// The app's own URL. Shopify opens it with ?shop= (sent on to the admin); anyone else
// sees what the app is and, where logging in is possible, a way in.
import type { LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { Form, useLoaderData } from "@remix-run/react";
import { PLAIN_PAGE_STYLE } from "~/lib/plain-page";
import { DEFAULT_DEV_SHOP, devLoginEnabled } from "~/shopify/admin-auth.server";

export async function loader({ request, context }: LoaderFunctionArgs) {
  const url = new URL(request.url);
  if (url.searchParams.get("shop")) throw redirect(`/app?${url.searchParams.toString()}`);
  return { devLogin: devLoginEnabled(context.services), devShop: DEFAULT_DEV_SHOP };
}

const styles = {
  input: { padding: "0.6rem", fontSize: "1rem", border: "1px solid #8c9196", borderRadius: 8, width: "100%", boxSizing: "border-box" },
  button: { marginTop: "0.75rem", padding: "0.6rem 1.2rem", fontSize: "1rem", borderRadius: 8, border: 0, background: "#202223", color: "#fff" },
} as const;

export default function Index() {
  const { devLogin, devShop } = useLoaderData<typeof loader>();
  return (
    <main style={PLAIN_PAGE_STYLE}>
      <h1>Crypto checkout for Shopify</h1>
      <p>Let shoppers pay in cryptocurrency at checkout. Orders are marked as paid in Shopify once the payment is confirmed on-chain.</p>
      <ul>
        <li>Shoppers pick a coin and pay by QR code or address, on the gateway&apos;s page or the app&apos;s own.</li>
        <li>Payments are followed up even when a notification is lost, and anything unusual is flagged for you.</li>
        <li>A test mode with a gateway sandbox: try everything without moving real money.</li>
      </ul>
      <Form method="post" action="/auth/login">
        <label htmlFor="shop">Shop domain</label>
        <input id="shop" name="shop" style={styles.input} placeholder="my-shop.myshopify.com" defaultValue={devLogin ? devShop : ""} />
        <button type="submit" style={styles.button}>
          {devLogin ? "Open the admin (development login)" : "Log in"}
        </button>
      </Form>
    </main>
  );
}
