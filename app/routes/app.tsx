// The merchant admin's layout. Inside Shopify: the App Bridge provider and navigation
// menu. With the development login: Polaris' own provider and a plain link bar, because
// App Bridge's script comes from Shopify's CDN and a local machine has no network.
import type { HeadersFunction, LinksFunction, LoaderFunctionArgs } from "@remix-run/node";
import { data } from "@remix-run/node";
import { Link, Outlet, useLoaderData, useRouteError } from "@remix-run/react";
import { NavMenu } from "@shopify/app-bridge-react";
import { AppProvider as PolarisAppProvider, type AppProviderProps } from "@shopify/polaris";
import polarisStyles from "@shopify/polaris/build/esm/styles.css?url";
import enTranslations from "@shopify/polaris/locales/en.json";
import { AppProvider } from "@shopify/shopify-app-remix/react";
import { boundary } from "@shopify/shopify-app-remix/server";
import { ADMIN_PAGES, DevNav } from "~/admin/dev-nav";
import { devShopCookie, requireAdmin } from "~/shopify/admin-auth.server";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: polarisStyles }];

export async function loader({ request, context }: LoaderFunctionArgs) {
  const { services } = context;
  const admin = await requireAdmin(request, services);
  const body = { apiKey: services.env.SHOPIFY_API_KEY, devLogin: admin.devLogin, shopDomain: admin.shopDomain };
  return admin.devLogin ? data(body, { headers: { "Set-Cookie": devShopCookie(admin.shopDomain) } }) : body;
}

type PolarisLink = NonNullable<AppProviderProps["linkComponent"]>;

const RemixLink: PolarisLink = ({ url, children, external, ...rest }) =>
  external ? (
    <a href={url} target="_blank" rel="noopener noreferrer" {...rest}>
      {children}
    </a>
  ) : (
    <Link to={url} {...rest}>
      {children}
    </Link>
  );

export default function AdminLayout() {
  const { apiKey, devLogin, shopDomain } = useLoaderData<typeof loader>();
  if (devLogin) {
    return (
      <PolarisAppProvider i18n={enTranslations} linkComponent={RemixLink}>
        <DevNav shopDomain={shopDomain} />
        <Outlet />
      </PolarisAppProvider>
    );
  }
  return (
    <AppProvider isEmbeddedApp apiKey={apiKey}>
      <NavMenu>
        {ADMIN_PAGES.map((page) => (
          <Link key={page.to} to={page.to} {...(page.to === "/app" ? { rel: "home" } : {})}>
            {page.label}
          </Link>
        ))}
      </NavMenu>
      <Outlet />
    </AppProvider>
  );
}

// Shopify's authentication answers with thrown responses (redirects, headers App Bridge
// reads); these two exports let them through as the template does.
export function ErrorBoundary() {
  return boundary.error(useRouteError());
}

export const headers: HeadersFunction = (headersArgs) => boundary.headers(headersArgs);
