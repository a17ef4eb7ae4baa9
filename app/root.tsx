import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import type { ReactNode } from "react";
import { isRouteErrorResponse, Links, Meta, Outlet, Scripts, ScrollRestoration, useMatches, useRouteError } from "@remix-run/react";
import { pageTitle } from "~/lib/page-title";
import { PLAIN_PAGE_STYLE } from "~/lib/plain-page";
import { acceptedLanguage, languageTag } from "~/payment-page/language";

/** What a route's `handle.documentLanguage` may go by besides its data. */
export interface DocumentLanguageContext {
  /** The shopper page language the browser asks for (Accept-Language), for a page whose route has no data: its error page. */
  acceptedLanguage: string;
}

// The browser's language does not change between a document's requests: read once.
export const loader = ({ request }: LoaderFunctionArgs): DocumentLanguageContext => ({ acceptedLanguage: acceptedLanguage(request.headers.get("accept-language")) });
export const shouldRevalidate = () => false;

/**
 * The document's language: the deepest matched route whose `handle.documentLanguage` finds
 * one in its data or, on its error page, in the browser's (the shopper's payment page speaks
 * the shopper's), English otherwise.
 */
function useDocumentLanguage(): string {
  const matches = useMatches();
  const root = matches[0]?.data as DocumentLanguageContext | undefined;
  const context: DocumentLanguageContext = { acceptedLanguage: root?.acceptedLanguage ?? "en" };
  for (const match of [...matches].reverse()) {
    const handle = match.handle as { documentLanguage?: (data: unknown, context: DocumentLanguageContext) => string | undefined } | undefined;
    const language = typeof handle?.documentLanguage === "function" ? handle.documentLanguage(match.data, context) : undefined;
    if (language) return language;
  }
  return "en";
}

/** The document around every page, and around the error page of one that has no error page of its own. */
export function Layout({ children }: { children: ReactNode }) {
  const language = useDocumentLanguage();
  return (
    <html lang={languageTag(language)}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <Meta />
        <Links />
      </head>
      <body>
        {children}
        <ScrollRestoration />
        <Scripts />
      </body>
    </html>
  );
}

export default function App() {
  return <Outlet />;
}

/**
 * The words of the error page of an address no route serves, of a request a page does not
 * take (a POST to a page without a form, say), or of a page without an error page of its own
 * that failed.
 */
function errorPageTexts(error: unknown): { title: string; body: string } {
  if (isRouteErrorResponse(error) && error.status === 404) return { title: "Page not found", body: "There is no page at this address. Check the link, or go back to where you came from." };
  if (isRouteErrorResponse(error) && error.status < 500) return { title: "This request could not be answered", body: "This page does not take this kind of request. Check the link, or go back to where you came from." };
  return { title: "This page could not be shown", body: "Something went wrong on our side. Please try again in a moment." };
}

// The error page's title, or the app's name for a page whose route gives no title of its own.
// Remix passes a null error, not an undefined one, when there is none.
export const meta: MetaFunction = ({ error }) => (error == null ? pageTitle() : [{ title: errorPageTexts(error).title }]);

/**
 * The error page of the app's own, in place of the framework's (which is written for the
 * app's developers and writes the error to the console). What happened, and nothing of why:
 * the server has logged the request already (entry.server's handleError).
 */
export function ErrorBoundary() {
  const texts = errorPageTexts(useRouteError());
  return (
    <main style={PLAIN_PAGE_STYLE}>
      <h1>{texts.title}</h1>
      <p>{texts.body}</p>
    </main>
  );
}
