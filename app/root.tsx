import { Links, Meta, Outlet, Scripts, ScrollRestoration, useMatches } from "@remix-run/react";

/**
 * The document's language: the deepest matched route whose `handle.documentLanguage` finds
 * one in its data (the shopper's payment page speaks the shopper's), English otherwise.
 */
function useDocumentLanguage(): string {
  const matches = useMatches();
  for (const match of [...matches].reverse()) {
    const handle = match.handle as { documentLanguage?: (data: unknown) => string | undefined } | undefined;
    const language = typeof handle?.documentLanguage === "function" ? handle.documentLanguage(match.data) : undefined;
    if (language) return language;
  }
  return "en";
}

export default function App() {
  const language = useDocumentLanguage();
  return (
    <html lang={language}>
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
