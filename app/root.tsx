import type { LoaderFunctionArgs } from "@remix-run/node";
import { Links, Meta, Outlet, Scripts, ScrollRestoration, useMatches } from "@remix-run/react";
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

export default function App() {
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
        <Outlet />
        <ScrollRestoration />
        <Scripts />
      </body>
    </html>
  );
}
